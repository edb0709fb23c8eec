"""What the referee needs from a running bot, whatever isolates it.

The referee only ever sees a `BotProcess`: a byte stream to write requests to, a byte stream to
read replies from, a bounded tail of stderr, a way to wait for the exit and a way to end the
whole thing. The `process` and `docker` isolation modes both implement it, so the referee, the
clocks and the failure policy are written once and behave the same in both modes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.errors import PlatformFault
from arena.sandbox.limits import Limits

if TYPE_CHECKING:  # imported where used: the CLI reads Limits without starting trio
    import trio

    from arena.sandbox.cpuacct import CpuCounters

#: PATH given to bots: enough to find interpreters, nothing of the arena's own environment.
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class LaunchSpec:
    """Everything needed to start one bot for one game.

    `command` is an argv list; for `process` mode it runs with `workdir` as its working
    directory (a fresh temporary copy-free directory the launcher creates when None); for
    `docker` mode it is the command inside `image` (None = the image's own entrypoint/cmd).
    `env` is the complete environment (the launcher adds nothing but a minimal PATH/HOME/LANG).
    """

    name: str
    command: tuple[str, ...]
    isolation: str = "process"  # "process" or "docker"
    workdir: Path | None = None  # the bot's own directory (read-only for the bot in docker)
    image: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    cpu_affinity: tuple[int, ...] | None = None  # pin the bot to these cores
    #: `workdir` stays writable (a build step writes its output there); process mode only:
    #: the directory is lent to the bot's uid while it runs and taken back after
    writable_workdir: bool = False


@dataclass(frozen=True)
class ExitInfo:
    """How a bot process ended, as far as the launcher could tell."""

    returncode: int | None  # exit status, None if killed by a signal or unknown
    signal: int | None = None  # terminating signal number, if any
    memory_exceeded: bool = False  # the memory limit was hit (cgroup OOM or docker OOMKilled)
    killed_by_arena: bool = False  # we ended it (deadline, end of game)

    def describe(self) -> str:
        if self.memory_exceeded:
            return "killed: memory limit exceeded"
        if self.signal is not None:
            import signal as _signal

            try:
                name = _signal.Signals(self.signal).name
            except ValueError:
                name = str(self.signal)
            return f"killed by signal {name}"
        return f"exited with status {self.returncode}"


class LaunchError(Exception):
    """The bot could not be started (missing executable, bad image): a failed start."""


class SandboxFault(PlatformFault):
    """The arena's side failed (docker daemon down, no cgroup, out of fds): not the bot's fault.

    A platform fault (arena/errors.py): the game that raises this is voided and played again.
    (The sandbox's one import from the rest of the arena: arena/errors.py imports nothing.)
    """

    fault = "sandbox"


class BotProcess(ABC):
    """One running bot. All methods are safe to call in any order, any number of times."""

    #: requests go here (the bot's stdin)
    stdin: trio.abc.SendStream
    #: replies come from here (the bot's stdout)
    stdout: trio.abc.ReceiveStream
    #: the kernel's CPU accounting of the bot's own cgroup (arena/sandbox/cpuacct.py); None
    #: where it has none: the referee then keeps the wall clock's plain rule
    counters: CpuCounters | None = None

    @abstractmethod
    def stderr_tail(self) -> str:
        """The last captured stderr bytes (bounded by Limits.stderr_bytes), decoded leniently."""

    def tag_stderr(self, tag: Any) -> None:
        """Stderr read from now on belongs to `tag` (the referee's turn in progress), for
        `stderr_segments`. Modes that cannot tell need not implement it."""
        return None

    def stderr_segments(self) -> list[tuple[Any, str]]:
        """The captured stderr tail as (tag, text) parts in order (`tag_stderr`); joined,
        the texts are `stderr_tail()`."""
        text = self.stderr_tail()
        return [(None, text)] if text else []

    @abstractmethod
    async def wait(self) -> ExitInfo:
        """Wait for the bot to exit."""

    @abstractmethod
    def exit_info(self) -> ExitInfo | None:
        """ExitInfo if the bot has exited already, else None (non-blocking)."""

    @abstractmethod
    async def kill(self) -> None:
        """End the bot and everything it started (its whole tree / container); idempotent."""

    def clear_stderr(self) -> None:
        """Forget the stderr kept so far (a process kept for another game: its record holds
        that game's stderr only). Modes without sessions need not implement it."""
        return None

    @abstractmethod
    async def aclose(self) -> None:
        """Kill, reap, release every resource (pipes, cgroup, container, temp dir)."""

    async def __aenter__(self) -> BotProcess:
        return self

    async def __aexit__(self, *exc: object) -> None:
        import trio

        with trio.CancelScope(shield=True):
            await self.aclose()


class Launcher(ABC):
    """Starts bots in one isolation mode; `start` must be called inside the given nursery's
    lifetime because stderr draining and exit watching run as tasks in it."""

    @abstractmethod
    async def start(self, spec: LaunchSpec, nursery: trio.Nursery) -> BotProcess:
        """Start the bot; raises LaunchError (bot's fault) or SandboxFault (arena's fault)."""

    @abstractmethod
    def check(self, spec: LaunchSpec) -> None:
        """Could `start` start this bot? Everything that can be known without starting it
        (the program exists, the image is there), so that a broken bot is an error before a
        tournament rather than a column of lost games. Blocking (call it in a thread);
        raises LaunchError (the bot's problem) or SandboxFault (the arena cannot tell)."""
