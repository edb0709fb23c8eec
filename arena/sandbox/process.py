"""The `process` isolation mode: the bot as a local child process in its own session.

Basic version: own session and process group, scrubbed environment, own working directory,
stdin/stdout as trio streams, stderr drained into a bounded ring buffer, exit watching, and a
kill that ends the whole process group. Hardening (cgroups, namespaces, rlimits, unprivileged
user) is layered on top in later revisions without changing this interface.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import trio

from arena.sandbox.base import (
    BotProcess,
    ExitInfo,
    Launcher,
    LaunchError,
    LaunchSpec,
    SandboxFault,
)

#: PATH given to bots: enough to find interpreters, nothing of the arena's own environment.
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


class StderrRing:
    """The last `capacity` bytes written to stderr.

    A bot that floods stderr must not grow the referee's memory, yet the last lines are what
    explain a crash, so old bytes are dropped and only the tail is kept.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = max(0, capacity)
        self._buf = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if self.capacity == 0:
            return
        if len(data) >= self.capacity:
            self._buf = bytearray(data[-self.capacity :])
            return
        self._buf += data
        excess = len(self._buf) - self.capacity
        if excess > 0:
            del self._buf[:excess]

    def text(self) -> str:
        return bytes(self._buf).decode("utf-8", errors="replace")


def scrubbed_env(spec: LaunchSpec, workdir: Path, tmpdir: Path) -> dict[str, str]:
    """The complete environment of a bot: nothing inherited from the arena (no secrets)."""
    env = {
        "PATH": DEFAULT_PATH,
        "HOME": str(workdir),
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmpdir),
    }
    env.update(spec.env)
    return env


class ProcessBot(BotProcess):
    """One bot running as a local process group."""

    def __init__(
        self,
        spec: LaunchSpec,
        proc: trio.Process,
        scratch: Path,
    ) -> None:
        self.spec = spec
        self._proc = proc
        self.pid = proc.pid
        self._scratch = scratch
        assert proc.stdin is not None and proc.stdout is not None
        self.stdin = proc.stdin
        self.stdout = proc.stdout
        self._stderr = StderrRing(spec.limits.stderr_bytes)
        self._exited = trio.Event()
        self._stderr_done = trio.Event()
        self._exit: ExitInfo | None = None
        self._killed = False
        self._closed = False

    # -- tasks run in the caller's nursery ------------------------------------------------

    async def _drain_stderr(self) -> None:
        stream = self._proc.stderr
        assert stream is not None
        try:
            while True:
                data = await stream.receive_some(65536)
                if not data:
                    break
                self._stderr.feed(data)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass
        finally:
            self._stderr_done.set()
            with contextlib.suppress(Exception):
                await stream.aclose()

    async def _watch_exit(self) -> None:
        await self._reap()

    async def _reap(self) -> ExitInfo:
        """Wait for the main process; safe to run concurrently (trio serialises the waits)."""
        returncode = await self._proc.wait()
        if self._exit is None:
            # The bot's lifetime is its main process: anything it left behind goes with it,
            # so an orphan cannot keep stdout open and hide the exit from the referee.
            self._kill_group()
            if returncode < 0:
                info = ExitInfo(None, -returncode, killed_by_arena=self._killed)
            else:
                info = ExitInfo(returncode, None, killed_by_arena=self._killed)
            self._exit = info
            self._exited.set()
        return self._exit

    # -- BotProcess ------------------------------------------------------------------------

    def stderr_tail(self) -> str:
        return self._stderr.text()

    async def wait(self) -> ExitInfo:
        return await self._reap()

    def exit_info(self) -> ExitInfo | None:
        return self._exit

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    async def kill(self) -> None:
        if self._exit is None and self._proc.returncode is None:
            self._killed = True
        self._kill_group()
        with contextlib.suppress(ProcessLookupError):
            self._proc.kill()

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            if self._closed:
                await self._reap()
                return
            self._closed = True
            await self.kill()
            await self._reap()
            for stream in (self.stdin, self.stdout):
                with contextlib.suppress(Exception):
                    await stream.aclose()
            with trio.move_on_after(1.0):
                await self._stderr_done.wait()
            if self._proc.stderr is not None:
                with contextlib.suppress(Exception):
                    await self._proc.stderr.aclose()
            await trio.to_thread.run_sync(lambda: shutil.rmtree(self._scratch, ignore_errors=True))


class ProcessLauncher(Launcher):
    """Starts bots as local child processes, each in its own session and process group."""

    async def start(self, spec: LaunchSpec, nursery: trio.Nursery) -> BotProcess:
        if not spec.command:
            raise LaunchError(f"bot {spec.name}: empty command")
        scratch = Path(tempfile.mkdtemp(prefix="arena-bot-"))
        workdir = Path(spec.workdir) if spec.workdir is not None else scratch
        if not workdir.is_dir():
            shutil.rmtree(scratch, ignore_errors=True)
            raise LaunchError(f"bot {spec.name}: working directory {workdir} does not exist")
        env = scrubbed_env(spec, workdir, scratch)
        try:
            proc = await trio.lowlevel.open_process(
                list(spec.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=str(workdir),
                env=env,
                start_new_session=True,
                close_fds=True,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError, OSError) as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            if isinstance(exc, FileNotFoundError | PermissionError | NotADirectoryError):
                raise LaunchError(
                    f"bot {spec.name}: cannot start {spec.command[0]}: {exc}"
                ) from exc
            raise SandboxFault(f"bot {spec.name}: cannot spawn: {exc}") from exc
        bot = ProcessBot(spec, proc, scratch)
        nursery.start_soon(bot._drain_stderr)
        nursery.start_soon(bot._watch_exit)
        return bot
