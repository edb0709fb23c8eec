"""The message channel between the referee and one running bot.

One reader task per bot drains the bot's stdout for the whole game, so that `log` messages are
taken whenever they come and the pipe never fills up and blocks the bot. It timestamps every
chunk on arrival: the time charged to a bot ends when the last byte of its reply arrived, not
when the referee got round to looking at it. A reply that is already there when its request has
been written (a fast bot on a busy CPU runs while the referee writes) is read at once by the
request itself, through the same decoder, which saves two trips through the scheduler.

Every way a bot can fail is turned into a `BotFailure(reason, detail)` here, with the reason
codes of the protocol (`time_forfeit`, `protocol_error`, `crash`, `memory_limit`), so the match
logic above only decides who wins.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import select
from collections.abc import Callable
from typing import Any

import trio

from arena.referee.accounting import Account, Meter
from arena.referee.blame import WALL, Verdict, judge, next_check, stall_bound, wall_limit
from arena.referee.seat import BotFailure, Reply, Seat
from arena.sandbox import BotProcess, ExitInfo
from arena.sandbox.pipes import PipeLevel
from protocol.framing import Decoder, Encoder, ProtocolError
from protocol.messages import check_bot_message, check_reply

#: how long to wait for the exit status of a bot whose stdout has closed, before killing it
EXIT_WAIT = 1.0
STDERR_SEPARATOR = "; last stderr lines:\n"
#: how many stderr lines go into a crash's detail (the record keeps the whole captured tail)
STDERR_LINES = 8
#: how long a bot that missed its deadline is watched for late output (see _explain_silence)
LATE_OUTPUT_WAIT = 0.5
#: output that came this close before the bot's stdout closed came as it exited
AT_EXIT = 0.25
#: seconds between two looks at a bot the host holds off the CPU past its limit
HELD_STEP = 0.005
#: seconds between two trips through the scheduler while a bot's replies are read the moment
#: its request is written (each trip costs about as much as the rest of a turn's I/O)
FAST_YIELD = 0.001


def _fileno(stream: object) -> int | None:
    """The file descriptor behind a trio pipe stream (process mode), None for other streams."""
    fileno = getattr(stream, "fileno", None)
    if fileno is None:
        return None
    try:
        fd = fileno()
    except (OSError, ValueError):
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


def shares_the_only_cpu(pid: int | None) -> bool:
    """Can the bot `pid` run only when the referee's thread does not: both confined to the
    same one CPU (a tournament's `pin_cores`, a benchmark pinned to one core)?"""
    if pid is None:
        return False
    try:
        mine = os.sched_getaffinity(0)
        return len(mine) == 1 and os.sched_getaffinity(pid) == mine
    except OSError:
        return False


#: a stderr line that names an error (Node's `Error: Cannot find module`, Python's last line,
#: a Rust panic, a C++ terminate): kept in an excerpt wherever it is
_ERROR_LINE = re.compile(
    r"^\s*(?:Uncaught\s+)?(?:[\w.$]*(?:Error|Exception)\b|thread .* panicked|panicked at"
    r"|terminate called|fatal error|Segmentation fault)"
)


def stderr_lines(text: str, n: int = STDERR_LINES) -> str:
    """At most `n` non-blank lines of a bot's stderr for a failure's detail: the last ones, and
    when the tail does not say what failed, the first lines and the line naming the error
    (a Node crash ends in a stack and `Node.js v20`, its error is above the stack)."""
    lines = [line[:300] for line in text.splitlines() if line.strip()]
    if len(lines) <= n:
        return "\n".join(lines)
    tail = lines[-(n - 3) :]
    if any(_ERROR_LINE.match(line) for line in tail):
        return "\n".join(lines[-n:])
    head = lines[:1]
    key = next((line for line in lines[1 : -len(tail)] if _ERROR_LINE.match(line)), None)
    middle = [key] if key is not None else lines[1:2]
    return "\n".join([*head, "[...]", *middle, "[...]", *tail])


class BotChannel(Seat):
    """Requests to one bot program over its pipes, with deadlines measured on arrival."""

    def __init__(
        self,
        proc: BotProcess,
        *,
        seat: int,
        encoding: str,
        max_message_bytes: int,
        on_log: Callable[[int, float, str, Any], None] | None = None,
    ) -> None:
        self.proc = proc
        self.seat = seat
        self._stdin_fd = _fileno(proc.stdin)
        self._stdout_fd = _fileno(proc.stdout)
        self._level = PipeLevel()
        #: the run's clock (trio.current_time without its lookups: three stamps a turn)
        self._now = trio.lowlevel.current_clock().current_time
        #: the bot and the referee are confined to the same one CPU (pinned slots)
        self.shares_cpu = shares_the_only_cpu(getattr(proc, "pid", None))
        self._yielded_at = 0.0  # trio time of the last request that waited in the scheduler
        self.encoder = Encoder(encoding)
        self._decoder = Decoder(encoding, max_message_bytes)
        self._on_log = on_log
        self._expecting: str | None = None  # request type awaiting its reply
        self._reply: Reply | None = None
        self._wakeup = trio.Event()
        self._encoding = encoding
        #: a protocol error seen by the reader (possibly while no request was pending)
        self.error: str | None = None
        self.eof = False
        self.eof_at_boundary = True
        self._eof_event = trio.Event()
        #: bytes read from the bot's stdout so far, and when the last of them came
        self.received = 0
        self.last_arrival: float | None = None
        #: per-reply accounting of `turn` replies and the clock it serves (set by the match);
        #: None: the wall clock's plain rule
        self.meter: Meter | None = None
        self.clock = WALL
        self.wall_cap = 3.0
        self._metering = False
        #: when the pending request was written, and the reply time below which it is not
        #: measured (see request_bytes)
        self._written = 0.0
        self._quick = 0.0

    # --- the reader task ---------------------------------------------------------------------
    async def reader(self) -> None:
        """Runs for the bot's whole life in the game's nursery."""
        stdout = self.proc.stdout
        fd = self._stdout_fd
        try:
            while True:
                if fd is None:
                    data = await stdout.receive_some(65536)
                else:
                    # Fast path for pipes: one trip through the scheduler per chunk instead
                    # of the two of FdStream.receive_some (it checkpoints before reading).
                    await trio.lowlevel.wait_readable(fd)
                    try:
                        data = os.read(fd, 65536)
                    except BlockingIOError:
                        continue
                    except OSError:
                        break
                if not data:
                    break
                self._take(data)
        except ProtocolError as e:
            self.error = _explain_bad_bytes(e, self._encoding)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            self.eof = True
            self.eof_at_boundary = self._decoder.pending_bytes == 0
            self._wakeup.set()
            self._eof_event.set()

    def _take(self, data: bytes) -> None:
        """Bytes from the bot's stdout, stamped now: count them, decode and dispatch what
        they complete (ProtocolError for bad ones)."""
        arrived = self._now()
        self.received += len(data)
        self.last_arrival = arrived
        for msg in self._decoder.feed(data):
            self._dispatch(msg, arrived)

    def _read_now(self) -> None:
        """Take what the bot has written already, without a trip through the scheduler.

        On a busy or single CPU the bot often runs (and replies) while the request is being
        written; reading its reply here saves waking the reader task and then this one. The
        reader stays parked on the same descriptor: epoll is level-triggered, so it is only
        woken for bytes that are still unread. End of file and read errors are left to it.
        """
        assert self._stdout_fd is not None
        try:
            data = os.read(self._stdout_fd, 65536)
        except OSError:  # BlockingIOError: nothing yet
            return
        if not data:
            return
        try:
            self._take(data)
        except ProtocolError as e:
            self.error = _explain_bad_bytes(e, self._encoding)

    def _dispatch(self, msg: dict[str, Any], arrived: float) -> None:
        if msg.get("type") == "log":
            check_bot_message(msg)
            if self._on_log is not None:
                self._on_log(self.seat, arrived, msg["message"], msg.get("marks"))
            return
        expecting = self._expecting
        if expecting is None:
            mtype = check_bot_message(msg)
            why = f"sent {mtype!r} while no request was pending"
            if mtype == "move":
                why += (
                    ": a move answers one turn request; send all of a turn's actions in one "
                    "move, or wait for the next request (its turn_actions lists what was "
                    "played) before sending the next"
                )
            raise ProtocolError(why)
        check_reply(msg, expecting)
        self._expecting = None
        if self._metering and arrived - self._written > self._quick:
            assert self.meter is not None
            self.meter.arrived()
        self._reply = Reply(msg, arrived)
        self._wakeup.set()

    # --- requests ---------------------------------------------------------------------------
    async def request(
        self, msg: dict[str, Any], deadline: float | None, margin: float
    ) -> tuple[Reply, float]:
        """Send `msg` and wait for its reply; returns it with the time it took.

        `deadline` (seconds, None = unlimited) runs from the moment the request is completely
        written; the bot is flagged after deadline + margin. Raises BotFailure.
        """
        return await self.request_bytes(self.encoder.encode(msg), msg["type"], deadline, margin)

    async def request_bytes(
        self, data: bytes, request_type: str, deadline: float | None, margin: float
    ) -> tuple[Reply, float]:
        if self.error is not None:
            raise BotFailure("protocol_error", self.error)
        self._expecting = request_type
        self._reply = None
        limit = math.inf if deadline is None else deadline + margin
        written: float | None = None
        stdin_closed = timed_out = False
        meter = self.meter if request_type == "turn" else None
        self._metering = meter is not None
        if meter is not None:
            # A reply within the margin is not measured under the wall clock: nothing in it
            # can be forgiven, and it is charged its wall time as it always was; sampling
            # the counters again would double the accounting's cost on fast games. Its
            # request reads a one-task bot lean (its CPU is not charged by its counters).
            wall = self.clock == WALL
            meter.start(wall)
            self._quick = margin if wall else -1.0
            self._written = math.inf
        fd = self._stdout_fd
        if fd is not None and self.error is None and request_type == "turn" and self._level(fd):
            # a message already waiting on the bot's stdout was sent before this request:
            # not its reply (two moves back to back), however late the reader would see it
            # (nearly always there is none: one look at the pipe, arena/sandbox/pipes.py)
            self._expecting = None
            self._read_now()
            self._expecting = request_type
            if self.error is not None:
                self._expecting = None
                raise BotFailure("protocol_error", self.error)
        writing = self._now()
        sent = _write_now(self._stdin_fd, data)
        at_once = sent == len(data)
        if sent is None:
            stdin_closed, sent = True, 0
        if not stdin_closed and sent < len(data):
            with trio.move_on_after(limit) as write_scope:
                try:
                    await self.proc.stdin.send_all(memoryview(data)[sent:])
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    stdin_closed = True
            timed_out = write_scope.cancelled_caught
        account: Account | None = None  # what ended a wait past deadline + margin
        if not (stdin_closed or timed_out):
            written = self._now()
            if meter is not None:
                self._written = written
                # The bot may read a request written in one call from the moment the call
                # began: a referee held off its CPU between its write and this stamp (a bot
                # woken by the write on its CPU preempts it) gave the bot that time unseen.
                meter.written(written - writing if at_once else 0.0)
            if self._reply is None and self._stdout_fd is not None and self.error is None:
                if self.shares_cpu:
                    # the bot can run only when the referee does not: let it run now rather
                    # than once the referee sleeps, and an instant reply is read here without
                    # two trips through the scheduler (a bot woken by the write often takes
                    # the CPU at once anyway, and then the yield returns at once; either way
                    # its run is the referee's run-queue wait: arena/referee/accounting.py)
                    os.sched_yield()
                self._read_now()
            if self._reply is None and not self.eof and self.error is None:
                if meter is not None:
                    meter.waiting()
                self._wakeup = trio.Event()
                try:
                    with trio.CancelScope(deadline=written + limit) as scope:
                        await self._wakeup.wait()
                    timed_out = scope.cancelled_caught
                    if timed_out and meter is not None and deadline is not None:
                        timed_out, account = await self._wait_stalled(
                            meter, written, deadline, margin
                        )
                finally:
                    if meter is not None:
                        meter.done()
                self._yielded_at = written
            elif written - self._yielded_at >= FAST_YIELD:
                # the reply was read at once: a run of instant replies still lets the other
                # tasks run now and then
                self._yielded_at = written
                await trio.lowlevel.checkpoint()
            else:
                # and a cancellation from outside ends it at once
                await trio.lowlevel.checkpoint_if_cancelled()
        self._metering = False
        reply = self._reply
        if reply is not None:
            assert written is not None
            elapsed = max(0.0, reply.arrived - written)
            if meter is not None and meter.measured:
                m = meter.measures(elapsed)
                reply.account = Account(m, judge(m, deadline, margin, self.clock, self.wall_cap))
            return reply, elapsed
        self._expecting = None
        if self.error is not None:
            raise BotFailure("protocol_error", self.error)
        if stdin_closed:
            raise await self.crash_failure("closed its stdin")
        if self.eof and not timed_out:
            if not self.eof_at_boundary:
                raise await self.crash_failure("stdout closed in the middle of a message")
            raise await self.crash_failure("stdout closed")
        now = trio.current_time()
        if written is None:
            raise BotFailure(
                "time_forfeit",
                f"did not read its {request_type} request within {limit:.3f} s",
                {"deadline": deadline, "elapsed": None},
            )
        elapsed = now - written
        facts: dict[str, Any] = {}
        if account is not None:
            facts = account.facts()
            if account.verdict.stall:
                assert deadline is not None
                raise BotFailure("host_stall", self._stall_detail(account, deadline, margin), facts)
            elapsed = account.measures.wall
        hint = await self._explain_silence(request_type, now)
        info = self.proc.exit_info()
        if info is None and self.eof:  # it went away while we waited: how, is worth a look
            with trio.move_on_after(EXIT_WAIT):
                info = await self.proc.wait()
        if info is not None and info.memory_exceeded:
            # On a loaded machine the kernel's OOM kill of a bot filling its memory can come
            # after the clock ran out (reclaim slows the bot first): the limit is the cause.
            failure = await self.crash_failure(
                f"no reply to {request_type} within {deadline:.3f} s + {margin:g} s margin, then"
            )
            failure.info["elapsed"] = round(elapsed, 6)
            raise failure
        if account is not None and account.measures.cpu is not None:
            why = f"; {account.verdict.why}: CPU {account.measures.cpu:.3f} s"
            why += f", host's share {account.verdict.host:.3f} s"
        else:
            why = ""
        raise BotFailure(
            "time_forfeit",
            f"no reply to {request_type} within {deadline:.3f} s + {margin:g} s margin "
            f"(waited {elapsed:.3f} s{why}){hint}",
            {"deadline": deadline, "elapsed": round(elapsed, 6), **facts},
            hint=hint,
        )

    async def _wait_stalled(
        self, meter: Meter, written: float, deadline: float, margin: float
    ) -> tuple[bool, Account | None]:
        """Past deadline + margin without a reply: measure, and wait on while the bot's own
        share is within its limit (the host held it up), up to the hard cap
        (arena/referee/blame.py: `next_check`). (timed out, the verdict that ended it)."""
        # the first look has no recent sample to compare with: `held` needs two close ones
        earlier, earlier_at = None, written
        while True:
            # What the bot has written is read before anything is judged: a referee held off
            # its CPU past the hard cap wakes with the reply in the pipe and its reader task
            # not yet run, and must not take the reply for missing (issue 19: most of the
            # wall clock's false forfeits under load). Docker's streams: one trip through the
            # scheduler lets a reader the last I/O wait woke run first.
            if self._stdout_fd is not None:
                if self._reply is None and not self.eof and self.error is None:
                    self._read_now()
            else:
                await trio.lowlevel.checkpoint()
            if self._reply is not None or self.eof or self.error is not None:
                return False, None
            now = trio.current_time()
            m = meter.measures(now - written)
            verdict = judge(m, deadline, margin, self.clock, self.wall_cap)
            sample = meter.last
            # a stall still going on does not show in the bot's statistics yet: look on. Not
            # for a bot its own CPU quota throttled over this reply: its runnable tasks that
            # use no CPU are then its own doing (a throttled task looks just like a held one)
            held = (
                earlier is not None
                and sample is not None
                and m.throttled <= 0
                and meter.counters.held(earlier, sample, now - earlier_at)
            )
            probe = earlier is None and verdict.flagged
            earlier, earlier_at = sample, now
            if verdict.flagged and not held and not probe:
                return True, Account(m, verdict)
            # a host share past the bound voids the game only at the hard cap: until then the
            # bot may still show, at its share of the CPU, that it is late by its own doing
            at = next_check(m, deadline, margin, self.clock, self.wall_cap)
            if (held or probe) and at is not None:
                at = min(at, m.wall + HELD_STEP)
            if at is None:  # the hard cap
                if held:  # the host holds it still: its share is at least the overrun
                    host = max(
                        verdict.host,
                        m.wall - wall_limit(deadline, margin, self.clock, self.wall_cap),
                    )
                    why = "held off the CPU by the host at the hard cap"
                    verdict = Verdict(verdict.charged, host, False, True, why)
                return True, Account(m, verdict)
            with trio.CancelScope(deadline=written + at):
                await self._wakeup.wait()
            if self._reply is not None or self.eof or self.error is not None:
                return False, None

    def _stall_detail(self, account: Account, deadline: float, margin: float) -> str:
        m, v = account.measures, account.verdict
        if v.why.startswith("the referee waited"):
            why = f"{v.why} (>= the margin {margin:g} s)"
        else:
            why = f"> bound {stall_bound(deadline, margin):.3f} s"
        return (
            f"waited {m.wall:.3f} s for a reply (deadline {deadline:.3f} s + {margin:g} s), "
            f"host's share {v.host:.3f} s (runnable wait {m.stall:.3f} s, referee lateness "
            f"{m.late:.3f} s) {why}; "
            f"bot's own {m.wall - v.host:.3f} s, CPU {m.cpu or 0.0:.3f} s"
        )

    async def _explain_silence(self, request_type: str, flagged_at: float) -> str:
        """Why a reply did not come, for the bot's author: closes the bot's stdin and waits
        up to LATE_OUTPUT_WAIT for what it still had to say (a program that buffers its output
        writes it when it exits, and most bots exit when their stdin closes).

        The bot has lost already; only the words of the failure depend on this."""
        from arena.referee.diagnose import Silence, explain_silence

        received = self.received
        waiting = self._waits_for_input()
        self._expecting = request_type  # a late reply is read as one, not as an error
        await self.close_input()
        with trio.move_on_after(LATE_OUTPUT_WAIT):
            await self._eof_event.wait()
        self._expecting = None
        late_bytes = self.received - received
        late_by = None
        if late_bytes and self.last_arrival is not None:
            late_by = max(0.0, self.last_arrival - flagged_at)
        at_exit = (
            self.eof
            and self.last_arrival is not None
            and trio.current_time() - self.last_arrival < AT_EXIT
        )
        return explain_silence(
            Silence(
                request=request_type,
                encoding=self._encoding,
                received=received,
                late_bytes=late_bytes,
                late_by=late_by,
                at_exit=bool(late_bytes and at_exit),
                exited=self.eof,
                pending=self._decoder.pending_head,
                waiting_for_input=waiting,
            )
        )

    def _waits_for_input(self) -> bool | None:
        """The bot has read all it was sent and is blocked reading its stdin: it waits for
        more input (or for its end). None where this cannot be seen (see diagnose.py)."""
        from arena.referee.diagnose import blocked_reading_stdin, unread_bytes

        pid = getattr(self.proc, "pid", None)
        if pid is None or self._stdin_fd is None:
            return None
        unread = unread_bytes(self._stdin_fd)
        if unread is None:
            return None
        return unread == 0 and blocked_reading_stdin(pid)

    async def crash_failure(self, what: str) -> BotFailure:
        """The failure for a bot that went away: its exit status (waiting briefly for it) or,
        if it is still running without its pipes, that fact; plus its last stderr lines."""
        info: ExitInfo | None = self.proc.exit_info()
        if info is None:
            with trio.move_on_after(EXIT_WAIT):
                info = await self.proc.wait()
        if info is None:
            await self.proc.kill()
            detail = f"{what} but kept running"
            exit_dict: dict[str, Any] = {"returncode": None, "signal": None}
            reason = "crash"
        else:
            detail = f"{what}: {info.describe()}"
            exit_dict = {"returncode": info.returncode, "signal": info.signal}
            reason = "memory_limit" if info.memory_exceeded else "crash"
        tail = stderr_lines(self.proc.stderr_tail())
        if tail:
            detail += f"{STDERR_SEPARATOR}{tail}"
        return BotFailure(reason, detail, {"exit": exit_dict, "stderr_tail": tail})

    async def send_quietly(self, msg: dict[str, Any], within: float) -> bool:
        """Best effort (the `end` message): a bot that is gone or not reading is no failure.
        True if the whole message was written in time (a session may then go on)."""
        try:
            data = self.encoder.encode(msg)
        except ProtocolError:
            return False
        sent = _write_now(self._stdin_fd, data)
        if sent is None:
            return False
        if sent == len(data):
            return True
        data = data[sent:]
        with (
            trio.move_on_after(within),
            contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError),
        ):
            await self.proc.stdin.send_all(data)
            return True
        return False

    def send_at_once(self, msg: dict[str, Any]) -> bool | None:
        """`send_quietly` without waiting, where that is certain: a message of at most
        PIPE_BUF bytes goes into a pipe whole or not at all. True: written; None: not
        written (not a pipe, too long, or the pipe is full: use `send_quietly`); False: it
        cannot be sent (the bot closed its stdin, or the message does not encode)."""
        if self._stdin_fd is None:
            return None
        try:
            data = self.encoder.encode(msg)
        except ProtocolError:
            return False
        if len(data) > select.PIPE_BUF:
            return None
        sent = _write_now(self._stdin_fd, data)
        if sent is None:
            return False
        return True if sent else None  # at most PIPE_BUF bytes: all of it, or none

    # --- sessions (arena/referee/sessions.py) ---------------------------------------------------
    def attach(self, seat: int, on_log: Callable[[int, float, str, Any], None] | None) -> None:
        """A kept process joins a new game: its seat and the game's log callback."""
        self.seat = seat
        self._on_log = on_log

    def detach(self) -> None:
        """Between games: logs go nowhere (no game record is open)."""
        self._on_log = None

    def pending_messages(self) -> int:
        """Bytes of an unfinished message the bot has sent (0 at a message boundary)."""
        return self._decoder.pending_bytes

    async def close_input(self) -> None:
        self._stdin_fd = None  # the number may name another file once closed: no fast path
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            await self.proc.stdin.aclose()


def _explain_bad_bytes(e: ProtocolError, encoding: str) -> str:
    """arena.referee.diagnose's words for undecodable output, imported on the first failure
    rather than with the referee: a game without one never needs it."""
    from arena.referee.diagnose import explain_bad_bytes

    return explain_bad_bytes(e, encoding)


def _write_now(fd: int | None, data: bytes) -> int | None:
    """The fast path for pipes: a message almost always fits in the pipe buffer, so it is
    written at once, saving FdStream.send_all's trip through the scheduler. The bytes written
    (0: not a pipe, or the pipe is full: send the rest with send_all), None if the bot's stdin
    is closed."""
    if fd is None:
        return 0
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0
    except OSError:
        return None
