"""Referee worker processes started before the runner has imported trio or the runner.

`arena tournament run` starts its slots' worker processes (arena/workers/child.py) as soon as
it has read the config: each worker's interpreter start and imports (the referee, the
sandbox, trio: about a hundred milliseconds of CPU) and its sandbox probes then run on another
core while the runner imports trio and the runner, checks and builds the bots and opens its
results file, instead of after all that. Start-up before the first game was the sum of the two
(benchmarks/versus.py). This module imports neither trio nor the referee, so that starting
the workers costs the runner nothing it would not pay anyway; `WorkerProcess.adopt`
(arena/workers/process.py) takes them over inside trio.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass

#: the directory holding the `arena` and `protocol` packages, for the worker processes
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def worker_command() -> tuple[list[str], dict[str, str]]:
    """The command line and environment of a referee worker process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    return [sys.executable, "-m", "arena.workers.child"], env


def pin(pid: int, core: int | None) -> None:
    """Pin a worker process to its slot's core (None: not pinned); best effort."""
    if core is not None:
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setaffinity(pid, {core})


@dataclass
class Prelaunched:
    """A worker process started ahead, for the slot pinned to `core` (None: not pinned)."""

    popen: subprocess.Popen[bytes]
    core: int | None
    #: taken over by a run (`WorkerProcess.adopt`), which closes it: not the caller's to end
    adopted: bool = False

    def abandon(self) -> None:
        """Not needed after all (the run ended before a slot took it): closing its stdin
        ends it (arena/workers/child.py); reaped here, killed if it does not exit."""
        for pipe in (self.popen.stdin, self.popen.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, 9)
            self.popen.wait()


def slot_cores(concurrency: int, pin_cores: bool) -> list[int | None]:
    """The core of each of a run's slots: slot k on the k-th core this process may use
    (modulo their number) with `pin_cores`, else None (not pinned)."""
    if not pin_cores:
        return [None] * concurrency
    try:
        cores = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = list(range(os.cpu_count() or 1))
    return [cores[k % len(cores)] for k in range(concurrency)]


def prelaunch(cores: list[int | None]) -> list[Prelaunched]:
    """One worker process per entry of `cores` (a slot's core, None: not pinned), started
    now. Those that cannot be started are left out: the slots start theirs as usual."""
    argv, env = worker_command()
    out = []
    for core in cores:
        try:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,  # Ctrl-C reaches the runner only; it closes the workers
                env=env,
            )
        except OSError:
            break
        pin(popen.pid, core)
        out.append(Prelaunched(popen, core))
    return out
