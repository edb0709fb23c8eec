"""A bot's `build` step run inside the process sandbox, for builds nobody has read.

`BotSpec.ensure_built` runs the manifest's build as a plain subprocess of the arena: fine for
the operator's own bots, not for a stranger's upload, whose build is as untrusted as its
program. `build_bot` runs it the way bots run (docs/security.md): its own unprivileged uid,
no network, rlimits and a cgroup, the whole filesystem read-only; the one difference is that
the bot's directory stays writable, because a build writes its output there. Its time is
limited (then its whole tree is killed) and only the tail of its output is kept, so a build
that loops or floods costs bounded time and memory. The league builds every submitted
version this way; `arena match` and tournaments can opt in by calling it before their games.

The process launcher is used whatever the bot's isolation mode: a docker bot's build belongs
in its image.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import trio

from arena.referee.bots import BotSpec, BuildError, is_python_command
from arena.sandbox import LaunchError, LaunchSpec, Limits, SandboxFault, launcher_for
from arena.sandbox.process import StderrRing

#: what a build gets unless the caller says otherwise: a compiler's needs, no network
BUILD_LIMITS = Limits(
    memory_mb=1024, processes=64, file_size_mb=64, open_files=256, tmpfs_mb=256, network=False
)
BUILD_TIMEOUT = 120.0
BUILD_OUTPUT_BYTES = 64 * 1024


@dataclass(frozen=True)
class BuildOutput:
    """A build that succeeded, for the submitter to see."""

    command: tuple[str, ...]
    seconds: float
    stdout: str  # the tails, at most `output_bytes` each
    stderr: str


async def build_bot(
    bot: BotSpec,
    *,
    limits: Limits = BUILD_LIMITS,
    time_limit: float = BUILD_TIMEOUT,
    output_bytes: int = BUILD_OUTPUT_BYTES,
    force: bool = False,
) -> BuildOutput | None:
    """Run the bot's build step in the sandbox with its directory writable; None when there is
    nothing to build (no step, or its output is up to date, unless `force`).

    Raises BuildError (the bot's fault: failed, ran past `time_limit` seconds, killed, command
    missing; the message ends with the tail of its output) or SandboxFault (the arena's).
    The caller serialises builds of one directory: concurrent games build before they start.
    """
    if not bot.build or not (force or bot.needs_build()):
        return None
    argv = list(bot.build)
    if is_python_command(argv[0]):
        argv[0] = sys.executable
    cpu = limits.cpu_seconds if limits.cpu_seconds is not None else int(time_limit) + 1
    spec = LaunchSpec(
        name=f"{bot.name} (build)",
        command=tuple(argv),
        isolation="process",
        workdir=bot.workdir,
        env=dict(bot.env),
        limits=replace(limits, cpu_seconds=cpu, stderr_bytes=output_bytes),
        writable_workdir=True,
    )
    shown = shlex.join(bot.build)
    stdout = StderrRing(output_bytes)
    started = time.monotonic()
    problem: BaseException | None = None  # raised outside the nursery, not in a group
    info, errors, timed_out = None, "", False
    async with trio.open_nursery() as nursery:
        try:
            proc = await launcher_for("process").start(spec, nursery)
        except LaunchError as exc:
            problem = BuildError(f"bot {bot.name}: build `{shown}` cannot start: {exc}")
        except SandboxFault as exc:
            problem = exc
        else:
            async with proc:
                await proc.stdin.aclose()
                with trio.move_on_after(time_limit) as deadline:
                    async with trio.open_nursery() as inner:
                        inner.start_soon(_drain, proc.stdout, stdout)
                        info = await proc.wait()
                timed_out = deadline.cancelled_caught
                if timed_out:
                    await proc.kill()
                errors = proc.stderr_tail()
        nursery.cancel_scope.cancel()
    if problem is not None:
        raise problem
    seconds = time.monotonic() - started
    tail = _tail(errors.strip() or stdout.text().strip())
    if timed_out or info is None:
        raise BuildError(f"bot {bot.name}: build `{shown}` timed out after {time_limit:g} s" + tail)
    if info.returncode != 0:
        raise BuildError(f"bot {bot.name}: build `{shown}` failed: {info.describe()}" + tail)
    escaping = await trio.to_thread.run_sync(links_leading_outside, bot.workdir)
    if escaping:
        raise BuildError(
            f"bot {bot.name}: build `{shown}` left a symbolic link leading outside the bot's "
            f"directory: {escaping[0]}"
        )
    bot.check_outputs()  # its named outputs exist, stamped now (the tree is the arena's again)
    return BuildOutput(tuple(bot.build), seconds, stdout.text(), errors)


def links_leading_outside(top: Path) -> list[str]:
    """Symbolic links under `top` whose target lies outside it (relative names). A bot's
    command naming such a link would make the launcher expose its target to the bot."""
    real = top.resolve()
    found = []
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            if path.is_symlink() and not path.resolve().is_relative_to(real):
                found.append(str(path.relative_to(top)))
    return sorted(found)


async def _drain(stream: trio.abc.ReceiveStream, ring: StderrRing) -> None:
    try:
        while data := await stream.receive_some(65536):
            ring.feed(data)
    except (trio.ClosedResourceError, trio.BrokenResourceError):
        pass


def _tail(text: str, lines: int = 10) -> str:
    kept = "\n".join(text.splitlines()[-lines:])
    return f":\n{kept}" if kept else ""
