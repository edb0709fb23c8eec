"""The handle on one referee worker process (arena/workers/child.py) and its JSON Lines pipe.

The tournament runner keeps one per slot (through `ProcessPlayer`, arena/workers/players.py) and
so does the league's in-process executor (arena/league/executors/inprocess.py). A worker that
exits, closes its pipe or writes something that is not a reply raises `WorkerDied`, a platform
fault (arena/errors.py): the caller voids the game in play and starts a fresh worker for the
next one; nothing a bot does can cause it, since the bots run in the worker's sandbox.

The worker starts in a session of its own (a Ctrl-C in the terminal reaches only the runner,
which then closes its workers) and dies with its pipe: `close` closes stdin, which makes the
worker abandon its game and kill its bots, and kills the worker's process group if it does not
exit within seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any

import trio

from arena.errors import ArenaError, PlatformFault
from arena.workers.prelaunch import pin, worker_command
from arena.workers.wire import Fault, LineReader, decode, encode


class _Adopted:
    """A worker process started before trio ran (arena/workers/prelaunch.py), with the part
    of trio.Process's interface `WorkerProcess` uses: its pipes as trio streams, its exit
    awaited on a pidfd."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid = popen.pid
        assert popen.stdin is not None and popen.stdout is not None
        self.stdin = trio.lowlevel.FdStream(os.dup(popen.stdin.fileno()))
        self.stdout = trio.lowlevel.FdStream(os.dup(popen.stdout.fileno()))
        popen.stdin.close()
        popen.stdout.close()

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    async def wait(self) -> int:
        if self.popen.poll() is None:
            fd = os.pidfd_open(self.pid)
            try:
                await trio.lowlevel.wait_readable(fd)
            finally:
                os.close(fd)
        return self.popen.wait()


class WorkerDied(PlatformFault):
    """A referee worker process exited or broke its protocol: the arena's fault (a void)."""

    fault = Fault.WORKER


class WorkerProcess:
    """One referee worker process (arena/workers/child.py) and its JSON Lines pipe."""

    def __init__(self, proc: trio.Process | _Adopted) -> None:
        self.proc = proc
        assert proc.stdout is not None and proc.stdin is not None
        self.reader = LineReader(proc.stdout)
        #: the last reply's line as received (a caller may keep part of it verbatim)
        self.last_line = b""
        #: the bots and games of an `init` sent ahead (`send_init`), its answer not read yet
        self.init_sent: tuple[list[dict[str, Any]], tuple[Any, ...]] | None = None

    @classmethod
    async def start(
        cls, bots: list[dict[str, Any]], core: int | None, games: tuple[Any, ...] = ()
    ) -> WorkerProcess:
        """A worker process, launched and initialised (`launch`, then `init`)."""
        worker = await cls.launch(core)
        await worker.init(bots, games)
        return worker

    @classmethod
    async def launch(cls, core: int | None) -> WorkerProcess:
        """Start a worker process without waiting for it: it imports the referee and probes
        the sandbox at once (arena/workers/child.py), while the caller does what it has to
        before its first game (a tournament's start-up: its bots checked and built, its
        results file opened), and `init` tells it the bots and games after that."""
        argv, env = worker_command()
        proc = await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # Ctrl-C reaches the runner only; it closes the workers
            env=env,
        )
        pin(proc.pid, core)
        return cls(proc)

    @classmethod
    def adopt(cls, popen: subprocess.Popen[bytes]) -> WorkerProcess:
        """A worker process started before trio ran (arena/workers/prelaunch.py), launched
        as `launch` leaves it."""
        return cls(_Adopted(popen))

    async def send_init(self, bots: list[dict[str, Any]], games: tuple[Any, ...] = ()) -> None:
        """Send the worker's `init` now, and read its answer with `init` later: the worker
        sets its bots and games up meanwhile (a tournament's start-up opens its results
        file then). Raises WorkerDied if the pipe failed."""
        await self.send({"type": "init", "bots": bots, "games": list(games)})
        self.init_sent = (bots, tuple(games))

    async def init(self, bots: list[dict[str, Any]], games: tuple[Any, ...] = ()) -> None:
        """The worker's `init`: the bots and the games it plays (it sets them up before it
        answers); only its answer, if the same was sent ahead (`send_init`). Closes the worker
        and raises WorkerDied or ArenaError if it fails."""
        sent, self.init_sent = self.init_sent, None
        try:
            if sent is not None and sent == (bots, tuple(games)):
                reply = await self.receive()
            else:
                if sent is not None:  # another init's answer is on its way: not this one's
                    await self.receive()
                reply = await self.request({"type": "init", "bots": bots, "games": list(games)})
        except BaseException:
            with trio.CancelScope(shield=True):
                await self.close()
            raise
        if reply.get("type") == "error":
            await self.close()
            raise ArenaError(reply["message"])

    async def request(
        self, msg: dict[str, Any], on_turn: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        """Send a request and wait for its reply; `turn` messages before the reply (a `play`
        with `"progress": true`) go to `on_turn`, which must not block."""
        await self.send(msg)
        return await self.receive(on_turn)

    async def send(self, msg: dict[str, Any]) -> None:
        """Send a request without waiting for its reply (`receive` reads the replies in
        order)."""
        try:
            await self.proc.stdin.send_all(encode(msg))  # type: ignore[union-attr]
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as e:
            raise WorkerDied(f"referee worker pipe failed: {e}") from None

    async def receive(
        self, on_turn: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        """The next reply; `turn` messages before it go to `on_turn`."""
        while True:
            reply = await self._read_reply()
            if reply.get("type") != "turn":
                return reply
            if on_turn is not None:
                on_turn(reply)

    async def _read_reply(self) -> dict[str, Any]:
        try:
            line = await self.reader.readline()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as e:
            raise WorkerDied(f"referee worker pipe failed: {e}") from None
        if line is None:
            with trio.move_on_after(2):
                await self.proc.wait()
            raise WorkerDied(f"referee worker process ended (exit status {self.proc.returncode})")
        self.last_line = line
        try:
            reply = decode(line)
        except ValueError:
            raise WorkerDied(f"referee worker sent garbage: {line[:200]!r}") from None
        if not isinstance(reply, dict):
            raise WorkerDied(f"referee worker sent garbage: {line[:200]!r}")
        if reply.get("type") == "record" and "head" in reply:
            return await self._record_text(reply)
        return reply

    async def _record_text(self, first: dict[str, Any]) -> dict[str, Any]:
        """A record reply's second line, the record's text (wire.py `encode_reply`): the
        reply as callers know it, its `record` the record's head (its small fields, all a
        results table reads) and `record_json` the record's text as it came (bytes), to be
        stored as is: never parsed here."""
        try:
            text = await self.reader.readline()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as e:
            raise WorkerDied(f"referee worker pipe failed: {e}") from None
        if text is None or len(text) != first.get("size") or not isinstance(first["head"], dict):
            raise WorkerDied(f"referee worker sent a record reply without its record: {first!r}")
        return {
            "type": "record",
            "game_id": first.get("game_id"),
            "record": first["head"],
            "record_json": text,
        }

    async def close(self) -> None:
        """Close the pipe (the worker abandons its game, kills its bots, exits), then reap."""
        with contextlib.suppress(Exception):
            await self.proc.stdin.aclose()  # type: ignore[union-attr]
        with trio.move_on_after(5):
            await self.proc.wait()
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()
