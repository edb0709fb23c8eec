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
import sys
from collections.abc import Callable
from typing import Any

import trio

from arena.errors import ArenaError, PlatformFault
from arena.workers.wire import Fault, LineReader, decode, encode

#: the directory holding the `arena` and `protocol` packages, for the worker processes
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class WorkerDied(PlatformFault):
    """A referee worker process exited or broke its protocol: the arena's fault (a void)."""

    fault = Fault.WORKER


class WorkerProcess:
    """One referee worker process (arena/workers/child.py) and its JSON Lines pipe."""

    def __init__(self, proc: trio.Process) -> None:
        self.proc = proc
        assert proc.stdout is not None and proc.stdin is not None
        self.reader = LineReader(proc.stdout)
        #: the last reply's line as received (a caller may keep part of it verbatim)
        self.last_line = b""

    @classmethod
    async def start(
        cls, bots: list[dict[str, Any]], core: int | None, games: tuple[Any, ...] = ()
    ) -> WorkerProcess:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
        proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "arena.workers.child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # Ctrl-C reaches the runner only; it closes the workers
            env=env,
        )
        worker = cls(proc)
        if core is not None:
            with contextlib.suppress(OSError, AttributeError):
                os.sched_setaffinity(proc.pid, {core})
        try:
            reply = await worker.request({"type": "init", "bots": bots, "games": list(games)})
        except BaseException:
            with trio.CancelScope(shield=True):
                await worker.close()
            raise
        if reply.get("type") == "error":
            await worker.close()
            raise ArenaError(reply["message"])
        return worker

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
        return reply

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
