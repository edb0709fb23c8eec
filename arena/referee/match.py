"""One game between two bots: start them, hand out turns, enforce clocks and legality, record.

Failure policy (docs/protocol.md, "Reason codes"): every failure of a bot costs it the game and
the opponent is credited the win; the reason code and the precise detail go into the record and
the `end` message. Failures of the arena itself (the sandbox could not spawn anything) raise
instead, so a tournament can void and replay the game rather than blame a bot.

Structure: one nursery per game holds the bots' helper tasks (stdout readers, stderr drains,
exit watchers). Whatever happens (result, bot failure, cancellation from outside) the bots are
sent `end` when there is a result, their stdin is closed, they get a grace period to exit, and
then they are killed and released, shielded from cancellation, so no bot process outlives its
game.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import trio

from arena.errors import ArenaError, PlatformFault
from arena.games import IllegalAction, Result, State, make_game
from arena.referee.accounting import NO_ACCOUNTING, Meter, OwnClock, open_own_schedstat
from arena.referee.bots import BotSpec, BuildError
from arena.referee.channel import STDERR_SEPARATOR, BotChannel, stderr_lines
from arena.referee.clock import Clocks, TimeControl
from arena.referee.marks import MarkBook
from arena.referee.outcome import Reason, by_failure, is_forfeit, now_iso
from arena.referee.record import TURN_GOES_ON, GameRecord
from arena.referee.requests import end_message, hello_message, turn_message
from arena.referee.seat import BotFailure, Seat, SeatSpec
from arena.sandbox import (
    BotProcess,
    LaunchError,
    LaunchSpec,
    Limits,
    launcher_for,
)
from protocol.framing import DEFAULT_MAX_MESSAGE_BYTES, Fixed
from protocol.messages import SEED_MAX

if TYPE_CHECKING:  # imported where used: `arena match` never keeps a process
    from arena.referee.sessions import Session, SessionPool

LOG_MESSAGE_BYTES = 4096
LOG_TOTAL_BYTES = 64 * 1024


class RefereeFault(PlatformFault):
    """The referee itself failed (not a bot); the game should be voided."""

    fault = "referee"


class HostStall(RefereeFault):
    """The machine, not the bot, made a reply late, by more than the bound of
    arena/referee/blame.py (`stall_bound`): the game is voided and played again. The message
    starts with `host_stall:` and names the seat, the turn and the measured shares."""

    fault = "host_stall"


@dataclass(frozen=True)
class MatchConfig:
    game: str
    options: dict[str, Any]
    #: seat 0 moves first; a SeatSpec is a player the referee does not launch (a person)
    bots: tuple[BotSpec | SeatSpec, BotSpec | SeatSpec]
    time_control: TimeControl = field(default_factory=TimeControl)
    seed: int = 0
    match_id: str = ""
    #: complete turns played before the bots move (recorded, not charged to anyone)
    opening: tuple[tuple[str, ...], ...] = ()
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    cpu_affinity: tuple[tuple[int, ...] | None, tuple[int, ...] | None] = (None, None)
    isolation: str | None = None  # overrides the bots' own isolation when set
    #: the operator's limits: the most any bot gets, whatever its manifest asks for
    limits: Limits = field(default_factory=Limits)
    #: seconds a bot has to exit after `end` before it is killed
    end_grace: float = 1.0
    #: a seat's own time control instead of `time_control` (time odds), None: the common one
    seat_time_controls: tuple[TimeControl | None, TimeControl | None] = (None, None)
    #: per seat, settings the bot receives in `hello.bot_options` (like UCI options)
    bot_options: tuple[Mapping[str, Any] | None, Mapping[str, Any] | None] = (None, None)
    #: a tournament slot's kept bot processes: a bot that offers sessions in `ready` is taken
    #: from it and given back after a clean game (arena/referee/sessions.py); None: every
    #: bot is started for this game and ends with it
    sessions: SessionPool | None = None
    #: measure every reply (CPU time, runnable wait, the referee's lateness) and blame by it
    #: (arena/referee/blame.py); False: the plain wall clock, nothing measured (benchmarks)
    accounting: bool = True


@dataclass
class TurnEvent:
    """A completed turn, for live display (`arena match`) and progress reporting."""

    turn: int
    seat: int
    actions: list[str]
    elapsed: float
    clocks: list[float | None]
    state: State
    entry: dict[str, Any]


@dataclass
class LogEvent:
    seat: int
    t: float  # seconds since the game started
    message: str


class _CallerError(Exception):
    """An exception raised by the caller's observer or log callback, passed through as is."""

    def __init__(self, original: Exception) -> None:
        super().__init__(repr(original))
        self.original = original


@dataclass
class _Outcome:
    result: Result
    loser: int | None = None
    failure: dict[str, Any] | None = None


def check_seed(seed: object, what: str = "seed") -> int:
    """A game seed as the protocol carries it (0 .. SEED_MAX); ArenaError naming `what` else."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise ArenaError(f"{what} must be an integer from 0 to {SEED_MAX} (2^63-1), got {seed!r}")
    return seed


async def play_match(
    config: MatchConfig,
    observer: Callable[[TurnEvent], None] | None = None,
    on_log: Callable[[LogEvent], None] | None = None,
) -> GameRecord:
    """Play one game and return its record. Bot failures become results, never exceptions;
    ArenaError for bad input (game, options, opening); a PlatformFault (SandboxFault,
    RefereeFault, HostStall) when the arena failed."""
    referee = _Referee(config, observer, on_log)
    with _gc_frozen():
        await referee.run()
    return referee.record


class _GcFreeze:
    """Keeps the garbage collector's full collections off the bots' clocks.

    A full collection walks every object of the process and can pause a large process (a test
    run, an application embedding the referee) for 100 ms and more; a pause between a reply's
    arrival and its reading is charged to the bot. While games are running, every object that
    existed before the first of them is frozen (`gc.freeze`), so collections only walk what the
    games themselves allocate. The collector is process-wide, hence the one shared counter.
    """

    def __init__(self) -> None:
        self.games = 0

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        if self.games == 0:
            gc.freeze()
        self.games += 1
        try:
            yield
        finally:
            self.games -= 1
            if self.games == 0:
                gc.unfreeze()


_gc_frozen = _GcFreeze()


def play_opening(state: State, opening: Sequence[Sequence[str]]) -> dict[str, Any] | None:
    """Play the opening's turns on `state` (nobody's clock runs); the last complete one as
    `last_turn`.

    Every turn but the last is complete. The last may be partial, so that the bots start in
    the middle of a turn (Papagra's second action, Quadraphages' parts b and c): when it still
    needs actions, or when it ends with TURN_GOES_ON (`...`: its optional actions are not
    skipped). ArenaError names the turn when an action is illegal, a turn before the last is
    incomplete or has more actions than it takes, or the opening ends the game (the bots would
    have nothing to play).
    """
    last_turn = None
    for n, turn in enumerate(opening, 1):
        is_last = n == len(opening)
        goes_on = bool(turn) and turn[-1] == TURN_GOES_ON
        actions = turn[:-1] if goes_on else turn
        if goes_on and not is_last:
            raise ArenaError(f"opening turn {n}: {TURN_GOES_ON} may only end the last turn")
        if not actions:
            raise ArenaError(f"opening turn {n} has no actions")
        seat = state.current_player()
        start = state.turn_number()
        for action in actions:
            if state.is_terminal() or state.turn_number() != start:
                raise ArenaError(f"opening turn {n} has more actions than the turn takes: {action}")
            try:
                state.apply(action)
            except IllegalAction as e:
                raise ArenaError(f"opening turn {n}: {action}: {e.message}") from None
        if state.is_terminal():
            raise ArenaError(f"the opening ends the game at turn {n}")
        if state.turn_number() != start:
            if goes_on:
                raise ArenaError(f"opening turn {n} is complete: it cannot go on ({TURN_GOES_ON})")
        elif goes_on or (is_last and not state.can_end_turn()):
            break  # the bots start in this turn
        elif not state.can_end_turn():
            raise ArenaError(f"opening turn {n} is incomplete: {' '.join(turn)}")
        else:
            state.end_turn()
        last_turn = {"seat": seat, "actions": list(actions)}
    return last_turn


def apply_move(
    state: State, actions: list[str], elapsed: float, turn_no: int, entries: list[dict[str, Any]]
) -> BotFailure | None:
    """Apply a move's actions in order; the first illegal one is the bot's failure."""
    for i, action in enumerate(actions):
        if state.is_terminal():
            # the game ended by the rules with an earlier action of this move: the rest
            # of the move is moot, not illegal
            entries[-1].setdefault("ignored_after", []).extend(actions[i:])
            return None
        item = {"action": action, "elapsed": elapsed if i == 0 else 0.0}
        if state.turn_number() != turn_no:
            message = "the turn has ended"
        else:
            try:
                state.apply(action)
            except IllegalAction as e:
                message = e.message
            else:
                entries.append(item)
                continue
        item["illegal"] = True
        entries.append(item)
        return BotFailure(
            "illegal_action",
            f"{action}: {message}",
            {"action": action, "message": message},
        )
    return None


def _at_turn(f: BotFailure, turn: int, action: int) -> BotFailure:
    """A crash (or an exit) names the turn, and the action of a turn of several, that the
    bot was asked for when it went away: where to look in its replay and its logs."""
    base, sep, tail = f.detail.partition(STDERR_SEPARATOR)
    where = f"in turn {turn}" + (f" (asked for action {action})" if action > 1 else "")
    info = {**f.info, "turn": turn, **({"action": action} if action > 1 else {})}
    return BotFailure(f.reason, f"{where}: {base}{sep}{tail}", info, hint=f.hint)


def _silent_start(channel: Seat, f: BotFailure, startup: float) -> BotFailure:
    """No ready in time: say so, with why it may be (f.hint) and the bot's last stderr lines
    (a bot that could not read its hello often says so on stderr once its stdin closes)."""
    from arena.referee.diagnose import stderr_holds_a_reply  # failures only: not at start-up

    hint = f.hint
    info = dict(f.info)
    if isinstance(channel, BotChannel) and stderr_holds_a_reply(channel.proc.stderr_tail()):
        hint = "; its stderr holds its ready: protocol messages go to stdout"
    detail = f"did not answer hello within {startup:g} s{hint}"
    if isinstance(channel, BotChannel):
        tail = stderr_lines(channel.proc.stderr_tail())
        if tail:
            detail += f"{STDERR_SEPARATOR}{tail}"
            info["stderr_tail"] = tail
    return BotFailure("failed_start", detail, info, hint=hint)


def _crash_at_start(channel: Seat, f: BotFailure) -> BotFailure:
    """Exited before ready. A bot that sent nothing and complains of decoding on stderr may
    read the other encoding than its manifest declares: say which one it was sent."""
    from arena.referee.diagnose import encoding_hint, stderr_suggests_decoding

    base, sep, tail = f.detail.partition(STDERR_SEPARATOR)
    hint = ""
    if (
        isinstance(channel, BotChannel)
        and channel.received == 0
        and stderr_suggests_decoding(channel.proc.stderr_tail())
    ):
        hint = f"; {encoding_hint(channel.encoder.encoding)}"
    return BotFailure("failed_start", f"before ready: {base}{hint}{sep}{tail}", f.info, hint=hint)


def _bank_ran_out(f: BotFailure, deadline: float | None, bank: float) -> BotFailure:
    """A time forfeit of a seat with a bank: its detail says the bank ran out (before the
    bot's stderr lines, if any), its facts give the move's own deadline and the bank left
    (the channel waited for both together)."""
    base, sep, tail = f.detail.partition(STDERR_SEPARATOR)
    hint = f.hint if f.hint and base.endswith(f.hint) else ""
    base = base[: len(base) - len(hint)]
    move = "" if deadline is None else f"{deadline:.3f} s for the move and "
    ran_out = f"; the time bank ran out ({move}{bank:.3f} s left in the bank)"
    detail = f"{base}{ran_out}{hint}{sep}{tail}"
    info = {**f.info, "deadline": deadline, "bank": round(bank, 6)}
    return BotFailure(f.reason, detail, info, hint=f.hint)


def _seat_settings(config: MatchConfig, seat: int) -> dict[str, Any]:
    """What the record adds for a seat with its own time control or bot options."""
    out: dict[str, Any] = {}
    if config.seat_time_controls[seat] is not None:
        out["time_control"] = config.seat_time_controls[seat].to_dict()  # type: ignore[union-attr]
    if config.bot_options[seat]:
        out["bot_options"] = dict(config.bot_options[seat] or {})
    return out


class _Referee:
    def __init__(
        self,
        config: MatchConfig,
        observer: Callable[[TurnEvent], None] | None,
        on_log: Callable[[LogEvent], None] | None,
    ) -> None:
        self.config = config
        self.observer = observer
        self.on_log = on_log
        self.tc = config.time_control
        self.tcs = (
            config.seat_time_controls[0] or self.tc,
            config.seat_time_controls[1] or self.tc,
        )
        check_seed(config.seed)
        for spec in config.bots:
            if isinstance(spec, SeatSpec):
                continue
            if (config.isolation or spec.isolation) == "docker" and not spec.image:
                raise ArenaError(
                    f"bot {spec.name}: docker isolation needs an image (`image` in its bot.toml)"
                )
        self.game = make_game(config.game, config.options)
        self.state = self.game.new_initial_state()
        self.last_turn: dict[str, Any] | None = None
        self._play_opening()
        self.clocks = Clocks(self.tc, self.tcs)
        self.procs: list[BotProcess | None] = [None, None]
        self.sessions: list[Session | None] = [None, None]
        self.session_ok = [False, False]  # the bot offered sessions in `ready`
        self.channels: list[Seat | None] = [None, None]
        self.want_legal = [False, False]
        self.log_bytes = [0, 0]
        #: the turn being played (asked for) now: a log line records it; None before the first
        self.turn_playing: int | None = None
        self.t0 = 0.0
        self.callback_error: _CallerError | None = None
        #: the referee thread's run-queue wait at its sleeps, for the lateness of every reply
        self.own: OwnClock | None = None
        #: per seat, the source of its replies' figures (None: not a measured seat)
        self.accounting: list[str | None] = [None, None]
        colours = self.game.colours
        self.record = GameRecord(
            match_id=config.match_id or os.urandom(6).hex(),
            game=config.game,
            options=dict(self.game.options),
            seed=config.seed,
            opening=[list(t) for t in config.opening],
            bots=[
                {
                    **spec.describe(),
                    "isolation": None
                    if isinstance(spec, SeatSpec)
                    else config.isolation or spec.isolation,
                    "hash": "",  # after the build step, see _launch_bot
                    "seat": seat,
                    "colour": colours[seat],
                    **_seat_settings(config, seat),
                }
                for seat, spec in enumerate(config.bots)
            ],
            time_control=self.tc.to_dict(),
        )
        #: the position's `board`, the same in every turn: encoded once for the bots' channels
        self.board = Fixed(self.state.describe()["board"])
        #: the bots' debug marks, checked against the board's cells (docs/protocol.md)
        self.marks = MarkBook(self.record, frozenset(self.board.value["cells"]))

    def _play_opening(self) -> None:
        self.last_turn = play_opening(self.state, self.config.opening)
        #: the turn the opening left partial (the bots start in it), or 0
        self.opening_partial = self.state.turn_number() if self.state.turn_actions() else 0

    # --- the whole game --------------------------------------------------------------------------
    async def run(self) -> None:
        record = self.record
        record.started_at = now_iso()
        self.t0 = trio.current_time()
        outcome: _Outcome | None = None
        error: BaseException | None = None
        pool = self.config.sessions
        if self.config.accounting:
            self.own = pool.own_clock() if pool is not None else OwnClock(open_own_schedstat())
        async with trio.open_nursery() as nursery:
            try:
                outcome = await self._start_bots(nursery)
                if outcome is None:
                    outcome = await self._play_guarded()
                self._finish_record(outcome)
            except _CallerError as e:
                error = e.original
            except Exception as e:
                # re-raised below, outside the nursery, so that callers see the exception
                # itself (SandboxFault, ArenaError) rather than an ExceptionGroup
                error = e
            finally:
                with trio.CancelScope(shield=True):
                    await self._shutdown(outcome)
                nursery.cancel_scope.cancel()
                if self.own is not None:
                    if pool is not None:
                        self.own.idle()  # the slot's, for its next game
                    else:
                        self.own.close()
        if error is not None:
            raise error

    async def _play_guarded(self) -> _Outcome:
        try:
            return await self._play()
        except (PlatformFault, _CallerError):
            raise
        except Exception as e:
            # a bug in a rules engine or in the referee, never a bot's doing: the game must
            # be voided, not scored
            raise RefereeFault(f"referee failed in {self.config.game}: {e!r}") from e

    def _notify(self, callback: Callable[[Any], None], event: Any) -> None:
        """Call the caller's observer; its exceptions (a closed stdout...) are the caller's."""
        try:
            callback(event)
        except Exception as e:
            if self.callback_error is None:
                self.callback_error = _CallerError(e)

    def _finish_record(self, outcome: _Outcome) -> None:
        record = self.record
        res = outcome.result
        record.result = {
            "winner": res.winner,
            "result": res.result_string,
            "reason": res.reason,
            "detail": res.detail,
            "scores": list(res.scores),
            "loser_seat": outcome.loser if res.winner is None else 1 - res.winner,
            "forfeit": by_failure(res.reason),
            "failure": outcome.failure,
        }
        record.finished_at = now_iso()
        record.duration = round(trio.current_time() - self.t0, 6)
        # a partial last turn of the opening is the bots' first turn too: counted once
        partial = 1 if self.opening_partial and record.turns else 0
        record.turn_count = len(record.opening) + len(record.turns) - partial
        record.final_position = self.state.describe()

    # --- start-up ----------------------------------------------------------------------------
    async def _start_bots(self, nursery: trio.Nursery) -> _Outcome | None:
        failures: list[BotFailure | None] = [None, None]
        errors: list[Exception] = []

        async def start(seat: int) -> None:
            try:
                await self._start_bot(seat, nursery)
            except BotFailure as f:
                failures[seat] = f
            except Exception as e:  # the arena's fault (SandboxFault, ...): raised below
                errors.append(e)

        async with trio.open_nursery() as starters:
            for seat in (0, 1):
                starters.start_soon(start, seat)
        if self.config.sessions is not None:
            self.config.sessions.settle()  # the kept processes this game does not use stop
        if errors:
            raise errors[0]
        f0, f1 = failures
        if f0 is None and f1 is None:
            return None
        if f0 is not None and f1 is not None:
            colours = self.game.colours
            detail = f"{colours[0]}: {f0.detail}; {colours[1]}: {f1.detail}"
            return _Outcome(
                Result(None, Reason.BOTH_FAILED_START.value, self.state.scores(), detail),
                None,
                {"seats": [self._failure_dict(0, f0), self._failure_dict(1, f1)]},
            )
        seat = 0 if f0 is not None else 1
        failure = f0 or f1
        assert failure is not None
        return self._forfeit(seat, failure)

    async def _start_bot(self, seat: int, nursery: trio.Nursery) -> None:
        config = self.config
        spec = config.bots[seat]
        t_launch = trio.current_time()
        if isinstance(spec, SeatSpec):
            channel = spec.open(seat, self._log)
        else:
            channel, t_launch = await self._launch_bot(seat, spec, nursery)
            session = self.sessions[seat]
            if session is not None and session.games > 1:
                self.channels[seat] = channel
                try:
                    await self._say_hello(seat, channel, t_launch)
                    return
                except BotFailure:
                    # whatever went wrong began in the process's previous game (output after
                    # `end`, an exit): this game starts the bot afresh and does not blame it
                    with trio.CancelScope(shield=True):
                        await channel.proc.aclose()
                    self.procs[seat] = self.sessions[seat] = None
                channel, t_launch = await self._launch_bot(seat, spec, nursery, reuse=False)
        self.channels[seat] = channel
        await self._say_hello(seat, channel, t_launch)

    async def _launch_bot(
        self, seat: int, spec: BotSpec, nursery: trio.Nursery, reuse: bool = True
    ) -> tuple[BotChannel, float]:
        """Build and start a bot program, or take its kept process (sessions) unless `reuse`
        is False; its channel and the time it was launched."""
        config = self.config
        try:
            # the freshness check is a few stat calls: a thread only when a build must run
            if spec.build and spec.needs_build():
                await trio.to_thread.run_sync(spec.ensure_built)
        except BuildError as e:
            raise BotFailure("failed_start", str(e)) from None
        finally:
            # hashed after the build, so that the record names the binary that actually ran
            self.record.bots[seat]["hash"] = spec.executable_hash()
        isolation = config.isolation or spec.isolation
        affinity = config.cpu_affinity[seat]

        def launch_spec() -> LaunchSpec:
            ceiling = config.limits
            if ceiling.cpu_seconds is None:
                ceiling = replace(ceiling, cpu_seconds=self.tcs[seat].cpu_budget())
            return spec.launch_spec(isolation=isolation, cpu_affinity=affinity, ceiling=ceiling)

        try:
            launcher = launcher_for(isolation)
        except ValueError as e:
            raise ArenaError(str(e)) from None
        pool = config.sessions if isolation == "process" else None
        key: tuple[Any, ...] = ()
        if pool is None:
            launch = launch_spec()
        else:
            # one bot version per process: anything that shapes the process is in the key
            settings = (spec, isolation, affinity, config.limits, self.tcs[seat])
            launch, shape = pool.launch_spec(settings, launch_spec)
            key = (shape, self.record.bots[seat]["hash"], spec.encoding)
            key += (config.max_message_bytes,)
            budget = launch.limits.cpu_seconds
            session = pool.take(key, budget) if reuse else None
            if session is not None:
                session.channel.attach(seat, self._log)
                session.proc.clear_stderr()  # the record keeps this game's stderr only
                self.procs[seat] = session.proc
                self.sessions[seat] = session
                return session.channel, trio.current_time()
            from arena.referee.sessions import SESSION_CPU_GAMES

            nursery = pool.nursery  # the process may outlive this game
            if budget is not None:
                # RLIMIT_CPU counts all the games of a kept process (arena/referee/sessions.py)
                cpu = budget * SESSION_CPU_GAMES
                launch = replace(launch, limits=replace(launch.limits, cpu_seconds=cpu))
        t_launch = trio.current_time()
        try:
            proc = await launcher.start(launch, nursery)
        except LaunchError as e:
            raise BotFailure("failed_start", f"could not start: {e}") from None
        self.procs[seat] = proc
        channel = BotChannel(
            proc,
            seat=seat,
            encoding=spec.encoding,
            max_message_bytes=config.max_message_bytes,
            on_log=self._log,
        )
        nursery.start_soon(channel.reader)
        if pool is not None:
            from arena.referee.sessions import Session

            pool.started += 1
            self.sessions[seat] = Session(key, proc, channel, launch.limits.cpu_seconds, games=1)
        return channel, t_launch

    def _meter(self, seat: int, channel: BotChannel) -> None:
        """Measure the seat's replies where its cgroup counts its CPU (else the record says
        "none": the wall clock's plain rule); a kept process's channel gets this game's. The
        record names the bot's CPU cap too (null: not capped, its sandbox could not)."""
        tc = self.tcs[seat]
        channel.clock, channel.wall_cap = tc.clock, tc.wall_cap
        counters = channel.proc.counters
        self.record.bots[seat]["cpu_cap"] = counters.cap if counters is not None else None
        if not self.config.accounting:
            channel.meter = None
            return
        if counters is None:
            channel.meter = None
            self.accounting[seat] = NO_ACCOUNTING
        else:
            channel.meter = Meter(counters, self.own)
            self.accounting[seat] = counters.source
        self.record.bots[seat]["accounting"] = self.accounting[seat]

    async def _say_hello(self, seat: int, channel: Seat, t_launch: float) -> None:
        config = self.config
        tc = self.tcs[seat]
        if isinstance(channel, BotChannel):
            self._meter(seat, channel)
        hello = hello_message(
            game=config.game,
            options=self.game.options,
            seat=seat,
            colour=self.game.colours[seat],
            opponent=config.bots[1 - seat].name,
            match_id=self.record.match_id,
            time_control=tc,
            max_message_bytes=config.max_message_bytes,
            seed=config.seed,
            bot_options=config.bot_options[seat],
        )
        remaining = max(0.0, tc.startup - (trio.current_time() - t_launch))
        try:
            reply, _ = await channel.request(hello, remaining, tc.margin)
        except BotFailure as f:
            if f.reason == "time_forfeit":
                raise _silent_start(channel, f, tc.startup) from None
            if f.reason == "crash":
                raise _crash_at_start(channel, f) from None
            raise
        msg = reply.msg
        self.want_legal[seat] = bool(msg.get("legal", False))
        self.record.ready[seat] = {
            "name": msg["name"],
            "version": msg.get("version", ""),
            "author": msg.get("author", ""),
            "legal": self.want_legal[seat],
            "startup": round(reply.arrived - t_launch, 6),
        }
        session = self.sessions[seat]
        if session is not None:
            self.session_ok[seat] = bool(msg.get("sessions", False))
            self.record.ready[seat]["sessions"] = self.session_ok[seat]
            self.record.ready[seat]["session_game"] = session.games

    # --- turns -------------------------------------------------------------------------------
    async def _play(self) -> _Outcome:
        state = self.state
        clocks = self.clocks
        margins = (self.tcs[0].margin, self.tcs[1].margin)
        record_turns = self.record.turns
        while not state.is_terminal():
            seat = state.current_player()
            if seat is None:
                raise RefereeFault("the engine reports no player to move in a live position")
            channel = self.channels[seat]
            assert channel is not None
            turn_no = state.turn_number()
            self._start_turn(turn_no)
            # actions the opening played in this turn already (the bots start mid-turn)
            before = state.turn_actions() if turn_no == self.opening_partial else []
            entries: list[dict[str, Any]] = []
            entry: dict[str, Any] = {
                "turn": turn_no,
                "seat": seat,
                "actions": entries,
                "elapsed": 0.0,
                "clocks_after": None,
                "requests": 0,
            }
            asked: list[dict[str, Any]] = []
            entry["asked"] = asked
            turn_elapsed = 0.0
            while True:  # one request per partial move
                deadline = clocks.deadline(seat)
                # what the reply may be charged: the deadline and what is left in the bank
                limit = clocks.limit(seat, deadline)
                bank_left = clocks.bank(seat)
                board = None
                if isinstance(channel, BotChannel):
                    channel.wall_cap = clocks.wall_cap(seat, deadline)
                    board = self.board  # a person's seat shows the message as it is
                msg = turn_message(
                    state,
                    turn_no,
                    seat,
                    self.last_turn,
                    clocks.snapshot(),
                    deadline,
                    self.want_legal[seat],
                    clocks.bank_snapshot() if clocks.banked else None,
                    board,
                )
                # what the bot was told, as sent: `arena replay --at` asks it again from this
                sent = {"clocks": msg["clocks"], "deadline": msg["deadline"]}
                if "banks" in msg:
                    sent["banks"] = msg["banks"]
                asked.append(sent)
                entry["requests"] += 1
                try:
                    reply, elapsed = await channel.request(msg, limit, margins[seat])
                except BotFailure as f:
                    if f.reason == "host_stall":
                        raise self._host_stall(seat, turn_no, f) from None
                    if f.reason in ("crash", "memory_limit"):
                        f = _at_turn(f, turn_no, len(state.turn_actions()) + 1)
                    if f.reason == "time_forfeit" and f.info.get("elapsed") is not None:
                        drawn = clocks.charge(seat, f.info.get("charged", f.info["elapsed"]))
                        self._bank_drawn(entry, seat, drawn)
                        if self.tcs[seat].bank:
                            f = _bank_ran_out(f, deadline, bank_left)
                    self._close_turn(entry, turn_elapsed, clocks)
                    if self.accounting[seat] is not None:
                        self._account_turn(entry, seat, f.info)
                    record_turns.append(entry)
                    return self._forfeit(seat, f)
                turn_elapsed += elapsed
                account = reply.account
                if account is None:
                    charged = elapsed
                    flagged = clocks.flagged(deadline, elapsed, seat)
                else:
                    verdict = account.verdict
                    if verdict.stall:
                        detail = channel._stall_detail(account, limit or 0.0, margins[seat])
                        raise self._host_stall(seat, turn_no, BotFailure("host_stall", detail))
                    charged, flagged = verdict.charged, verdict.flagged
                self._bank_drawn(entry, seat, clocks.charge(seat, charged))
                if flagged:
                    self._close_turn(entry, turn_elapsed, clocks)
                    info: dict[str, Any] = {"deadline": deadline, "elapsed": round(elapsed, 6)}
                    why = ""
                    if account is not None:
                        info.update(account.facts())
                        self._account_turn(entry, seat, info)
                        if account.measures.cpu is not None:
                            why = (
                                f" ({account.verdict.why}: CPU {account.measures.cpu:.3f} s, "
                                f"host's share {account.verdict.host:.3f} s)"
                            )
                    record_turns.append(entry)
                    failure = BotFailure(
                        "time_forfeit",
                        f"replied after {elapsed:.3f} s, deadline {deadline:.3f} s "
                        f"+ {margins[seat]:g} s margin{why}",
                        info,
                    )
                    if self.tcs[seat].bank:
                        failure = _bank_ran_out(failure, deadline, bank_left)
                    return self._forfeit(seat, failure)
                reply_msg = reply.msg
                if "marks" in reply_msg:
                    self._take_marks(seat, reply.arrived, reply_msg["marks"])
                if reply_msg["type"] == "resign":
                    self._close_turn(entry, turn_elapsed, clocks)
                    entry["resigned"] = True
                    record_turns.append(entry)
                    return self._resign(seat, reply_msg.get("reason", ""))
                failure = self._apply(reply_msg["actions"], elapsed, turn_no, entries)
                if account is not None:
                    self._account_turn(entry, seat, account.fields())
                elif self.accounting[seat] == NO_ACCOUNTING:
                    entry["accounting"] = NO_ACCOUNTING
                if failure is not None:
                    self._close_turn(entry, turn_elapsed, clocks)
                    record_turns.append(entry)
                    return self._forfeit(seat, failure)
                if state.is_terminal() or state.turn_number() != turn_no:
                    break
                if state.can_end_turn() and not reply_msg.get("more", False):
                    state.end_turn()
                    entry["ended_early"] = True
                    break
            clocks.end_turn(seat)
            self._close_turn(entry, turn_elapsed, clocks)
            record_turns.append(entry)
            actions = before + [e["action"] for e in entries]
            self.last_turn = {"seat": seat, "actions": actions}
            if self.observer is not None:
                event = TurnEvent(
                    turn_no, seat, actions, turn_elapsed, clocks.snapshot(), state, entry
                )
                self._notify(self.observer, event)
            if self.callback_error is not None:
                raise self.callback_error
            # a bot that broke protocol while it was not its turn (garbage between turns)
            for other in (1 - seat, seat):
                ch = self.channels[other]
                if ch is not None and ch.error is not None and not state.is_terminal():
                    return self._forfeit(other, BotFailure("protocol_error", ch.error))
        result = state.result()
        if result is None:
            raise RefereeFault("the engine reports a terminal position without a result")
        return _Outcome(result)

    def _apply(
        self, actions: list[str], elapsed: float, turn_no: int, entries: list[dict[str, Any]]
    ) -> BotFailure | None:
        return apply_move(self.state, actions, elapsed, turn_no, entries)

    def _account_turn(self, entry: dict[str, Any], seat: int, fields: dict[str, Any]) -> None:
        """Add a reply's figures to its turn's sums (a turn may take several requests)."""
        entry["accounting"] = self.accounting[seat]
        for key in ("cpu", "wait", "late", "host", "charged"):
            value = fields.get(key)
            if value is not None:
                entry[key] = entry.get(key, 0.0) + value

    def _bank_drawn(self, entry: dict[str, Any], seat: int, drawn: float) -> None:
        """Add what a reply drew from the seat's bank to its turn (seats with a bank only)."""
        if self.clocks.banks[seat] is not None:
            entry["bank_drawn"] = entry.get("bank_drawn", 0.0) + drawn

    def _host_stall(self, seat: int, turn: int, f: BotFailure) -> HostStall:
        name = self.config.bots[seat].name
        return HostStall(f"host_stall: seat {seat} ({name}) turn {turn}: {f.detail}")

    def _close_turn(self, entry: dict[str, Any], turn_elapsed: float, clocks: Clocks) -> None:
        entry["elapsed"] = turn_elapsed
        entry["clocks_after"] = clocks.snapshot()
        if clocks.banked:
            # to the microsecond, as the next `turn` tells the bots (requests.turn_message)
            entry["banks_after"] = [None if b is None else round(b, 6) for b in clocks.banks]
        entry["t"] = trio.current_time() - self.t0

    # --- results -------------------------------------------------------------------------------
    def _failure_dict(self, seat: int, f: BotFailure) -> dict[str, Any]:
        return {"seat": seat, "reason": f.reason, "detail": f.detail, **f.info}

    def _forfeit(self, seat: int, f: BotFailure) -> _Outcome:
        colour = self.game.colours[seat]
        name = self.config.bots[seat].name
        result = Result(1 - seat, f.reason, self.state.scores(), f"{colour} ({name}) {f.detail}")
        return _Outcome(result, seat, self._failure_dict(seat, f))

    def _resign(self, seat: int, why: str) -> _Outcome:
        colour = self.game.colours[seat]
        name = self.config.bots[seat].name
        detail = f"{colour} ({name}) resigned" + (f": {why}" if why else "")
        result = Result(1 - seat, "resign", self.state.scores(), detail)
        return _Outcome(result, seat, None)

    def _start_turn(self, turn_no: int) -> None:
        """From now on, logs, marks and stderr lines belong to turn `turn_no`: what the bots
        wrote to stderr before is read under the turn before (`tag_stderr`)."""
        self.turn_playing = turn_no
        for proc in self.procs:
            if proc is not None:
                proc.tag_stderr(turn_no)

    # --- logs and marks ------------------------------------------------------------------------
    def _take_marks(self, seat: int, arrived: float, value: Any) -> None:
        """A message's debug marks into the record; a note among the seat's logs when some
        were dropped (never a failure: docs/protocol.md, "Debug marks")."""
        t = round(arrived - self.t0, 6)
        note = self.marks.take(seat, self.turn_playing, t, value)
        if note is None:
            return
        entry: dict[str, Any] = {"seat": seat, "t": t, "message": note, "arena": True}
        if self.turn_playing is not None:
            entry["turn"] = self.turn_playing
        self.record.logs.append(entry)
        if self.on_log is not None:
            self._notify(self.on_log, LogEvent(seat, t, f"[arena] {note}"))

    def _log(self, seat: int, arrived: float, message: str, marks: Any = None) -> None:
        self._log_line(seat, arrived, message)
        if marks is not None:  # a log's marks are kept even when its line is over the cap
            self._take_marks(seat, arrived, marks)

    def _log_line(self, seat: int, arrived: float, message: str) -> None:
        record = self.record
        data = message.encode("utf-8", errors="replace")
        if len(data) > LOG_MESSAGE_BYTES:
            message = data[:LOG_MESSAGE_BYTES].decode("utf-8", errors="ignore") + " [truncated]"
            size = LOG_MESSAGE_BYTES
        else:
            size = len(data)
        if self.log_bytes[seat] + size > LOG_TOTAL_BYTES:
            record.logs_dropped[seat] += 1
            return
        self.log_bytes[seat] += size
        t = round(arrived - self.t0, 6)
        entry: dict[str, Any] = {"seat": seat, "t": t, "message": message}
        if self.turn_playing is not None:  # a line logged before the first turn has none
            entry["turn"] = self.turn_playing
        record.logs.append(entry)
        if self.on_log is not None:
            self._notify(self.on_log, LogEvent(seat, t, message))

    # --- the end -------------------------------------------------------------------------------
    async def _shutdown(self, outcome: _Outcome | None) -> None:
        # a kept process whose `end` is written at once is done with: no task for it
        ending = [
            seat
            for seat in (0, 1)
            if self.channels[seat] is not None or self.procs[seat] is not None
            if not self._kept_at_once(seat, outcome)
        ]
        if ending:
            async with trio.open_nursery() as nursery:
                for seat in ending:
                    if self.procs[seat] is not None:
                        nursery.start_soon(self._finish_bot, seat, outcome)
                    else:
                        nursery.start_soon(self._finish_seat, seat, outcome)
        for seat in (0, 1):
            proc = self.procs[seat]
            if proc is not None:
                # a kept process's pipe stays open: what it wrote before its last reply may
                # still wait there, unread by the drain task; it belongs to this game
                proc.tag_stderr(self.turn_playing)
                self._record_stderr(seat, proc)
        self._complete_stderr_tails()

    def _record_stderr(self, seat: int, proc: BotProcess) -> None:
        """The seat's stderr tail, and where each turn's part of it begins (`stderr_turns`)."""
        parts = proc.stderr_segments()
        turns: list[list[Any]] = []
        at = 0
        for tag, text in parts:
            turns.append([tag, at])
            at += len(text)
        self.record.stderr[seat] = "".join(text for _, text in parts)
        self.record.stderr_turns[seat] = turns

    def _complete_stderr_tails(self) -> None:
        """A crash is reported the moment it is seen, when the last stderr lines may still be
        in the pipe; once the bots are closed (stderr drained), put the complete tail in."""
        result = self.record.result
        failure = result.get("failure") if result else None
        if not failure:
            return
        for f in failure.get("seats", [failure]):
            if "stderr_tail" not in f:
                continue
            tail = stderr_lines(self.record.stderr[f["seat"]])
            if tail == f["stderr_tail"]:
                continue
            f["stderr_tail"] = tail
            for holder in (f, result):
                base = holder["detail"].split(STDERR_SEPARATOR)[0]
                holder["detail"] = base + (f"{STDERR_SEPARATOR}{tail}" if tail else "")

    async def _finish_seat(self, seat: int, outcome: _Outcome | None) -> None:
        """A seat without a process (SeatSpec): the result, if any, and no more messages."""
        channel = self.channels[seat]
        assert channel is not None
        if outcome is not None and self.record.ready[seat] is not None:
            await channel.send_quietly(self._end_message(seat, outcome.result), 1.0)
        await channel.close_input()

    async def _finish_bot(self, seat: int, outcome: _Outcome | None) -> None:
        proc = self.procs[seat]
        channel = self.channels[seat]
        assert proc is not None
        grace = self.config.end_grace
        exited_after_end = None
        if await self._keep_session(seat, outcome):
            return
        try:
            if channel is not None and outcome is not None:
                # a bot that just forfeited gets no grace: it may be stuck, and it has lost
                stuck = outcome.loser == seat and is_forfeit(outcome.result.reason)
                if proc.exit_info() is None and self.record.ready[seat] is not None:
                    await channel.send_quietly(self._end_message(seat, outcome.result), 0.2)
                    await channel.close_input()
                    if not stuck:
                        with trio.move_on_after(grace):
                            await proc.wait()
                        exited_after_end = proc.exit_info() is not None
                else:
                    await channel.close_input()
        finally:
            await proc.aclose()
        info = proc.exit_info()
        self.record.exits[seat] = {
            "returncode": info.returncode if info else None,
            "signal": info.signal if info else None,
            "exited_after_end": exited_after_end,
        }

    def _keepable(self, seat: int, outcome: _Outcome | None) -> Session | None:
        """The seat's session if its process may be kept after this game: not on any doubt
        (the bot did not offer sessions, failed in any way, exited or left output unread)."""
        session = self.sessions[seat]
        if self.config.sessions is None or outcome is None or not self.session_ok[seat]:
            return None
        if by_failure(outcome.result.reason):
            return None  # a game that ended by a failure (either side's) ends the processes
        if session is None or not session.usable():
            return None
        return session

    def _kept_at_once(self, seat: int, outcome: _Outcome | None) -> bool:
        """`_keep_session` when `end` can be written without waiting (nearly always): True
        if the process was kept; False leaves the seat to `_finish_bot`, which tries the
        usual way."""
        session = self._keepable(seat, outcome)
        if session is None or outcome is None:
            return False
        if session.channel.send_at_once(self._end_message(seat, outcome.result)) is not True:
            return False
        self._keep(seat, session)
        return True

    async def _keep_session(self, seat: int, outcome: _Outcome | None) -> bool:
        """After a clean game, send `end` and give the process back to the pool instead of
        closing it; False (the process is then closed as usual) on any doubt (`_keepable`)
        or when the bot did not take its `end` at once."""
        session = self._keepable(seat, outcome)
        if session is None or outcome is None:
            return False
        if not await session.channel.send_quietly(self._end_message(seat, outcome.result), 0.2):
            return False
        self._keep(seat, session)
        return True

    def _keep(self, seat: int, session: Session) -> None:
        assert self.config.sessions is not None
        self.config.sessions.give_back(session)
        self.record.exits[seat] = {
            "returncode": None,
            "signal": None,
            "exited_after_end": None,
            "kept": True,
        }

    def _end_message(self, seat: int, result: Result) -> dict[str, Any]:
        return end_message(seat, result)
