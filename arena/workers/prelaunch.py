"""Referee worker processes started before the runner runs trio: forked, or started ahead.

`arena tournament run` starts its slots' worker processes (arena/workers/child.py) as soon as
it has read the config, before trio runs. Where it can, it forks them (`forked`): the runner
starts the sandbox's probes (arena/sandbox/machine.py), imports the worker's modules (the
referee, the sandbox and trio, which it needs itself anyway) while the probes run on another
core, has the probes' result, then each fork is a worker with all of that in place: only
its bot spawner is left to start, which runs on another core while the runner imports the
rest, checks and builds the bots and opens its results file. A worker started as a new
interpreter (`python -m arena.workers.child`) pays its interpreter's start, those imports
and its own probes again, about a hundred milliseconds of CPU each (benchmarks/versus.py,
start-up): on a busy machine that was the start-up before the first game.

Forking is safe only before trio runs and while this process has one thread (a fork copies
the calling thread only: a lock another thread held stays held in the child). `forked` checks
that; where it does not hold, or the platform has no fork, the workers are started as new
interpreters, as before (`started`). A forked worker is exactly the process `python -m
arena.workers.child` would be once its imports are done: its own session (a Ctrl-C in the
terminal reaches only the runner), the runner's pipes as its stdin and stdout and nothing
else of the runner's (the other workers' pipes closed, so each worker still sees the end of
its own stdin when the runner goes), and it never returns into the runner's code: it exits
with `os._exit` once `arena.workers.child.main` returns. `WorkerProcess.adopt`
(arena/workers/process.py) takes either kind over inside trio.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import NoReturn

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


class Forked:
    """A worker process forked from this one (`forked`), with the part of `subprocess.Popen`'s
    interface that `Prelaunched` and `WorkerProcess.adopt` use."""

    def __init__(self, pid: int, stdin: int, stdout: int) -> None:
        self.pid = pid
        self.stdin = os.fdopen(stdin, "wb", buffering=0)
        self.stdout = os.fdopen(stdout, "rb", buffering=0)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Its exit status once it has exited (reaped); subprocess.TimeoutExpired after
        `timeout` seconds, as Popen.wait."""
        if self.poll() is None and timeout is not None:
            fd = os.pidfd_open(self.pid)
            try:
                if not select.select([fd], [], [], timeout)[0]:
                    raise subprocess.TimeoutExpired(str(self.pid), timeout)
            finally:
                os.close(fd)
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


@dataclass
class Prelaunched:
    """A worker process started ahead, for the slot pinned to `core` (None: not pinned)."""

    popen: subprocess.Popen[bytes] | Forked
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
    now: forked where that is safe (`forked`), else started as new interpreters. Those that
    cannot be started are left out: the slots start theirs as usual."""
    return forked(cores) if can_fork() else started(cores)


def can_fork() -> bool:
    """Can worker processes be forked from this process now? Not once trio runs (its
    threads, its wakeup file descriptor, its signal handlers), nor with any other thread."""
    if not hasattr(os, "fork") or not hasattr(os, "pidfd_open"):
        return False
    if threading.active_count() != 1:
        return False
    trio_run = sys.modules.get("trio._core._run")
    return trio_run is None or not hasattr(trio_run.GLOBAL_RUN_CONTEXT, "runner")


def forked(cores: list[int | None]) -> list[Prelaunched]:
    """Worker processes forked from this one, after it has imported what a worker runs
    (arena/workers/child.py: the referee, the sandbox, trio). Call only when `can_fork`."""
    from arena.sandbox.machine import capabilities, start_probes

    start_probes()  # they run on another core during the imports
    import orjson  # noqa: F401  (the worker's JSON, arena/workers/child.py warm_up)

    import arena.workers.child  # noqa: F401  (the worker's imports, done once, here)

    # what the machine allows, probed once for this process and every worker it forks (each
    # probed it again at its start); a failure is left for each worker to report, as before
    with contextlib.suppress(OSError):
        capabilities()
    out: list[Prelaunched] = []
    for core in cores:
        try:
            worker = _fork_worker([fd for pre in out for fd in _fds(pre)])
        except OSError:
            break
        pin(worker.pid, core)
        out.append(Prelaunched(worker, core))
    return out


def _fds(pre: Prelaunched) -> list[int]:
    return [pipe.fileno() for pipe in (pre.popen.stdin, pre.popen.stdout) if pipe is not None]


def _fork_worker(others: list[int]) -> Forked:
    """Fork one worker; `others`: this process's ends of the workers forked before, which
    the new one must not hold (they would keep those workers' stdin open)."""
    to_child, from_runner = os.pipe2(os.O_CLOEXEC)  # the worker's stdin
    from_child, to_runner = os.pipe2(os.O_CLOEXEC)  # its stdout
    for stream in (sys.stdout, sys.stderr):  # or the child would write them out again
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        pid = os.fork()
    except OSError:
        for fd in (to_child, from_runner, from_child, to_runner):
            os.close(fd)
        raise
    if pid == 0:  # the worker: never returns
        _worker_main(to_child, to_runner, [from_runner, from_child, *others])
    os.close(to_child)
    os.close(to_runner)
    return Forked(pid, from_runner, from_child)


def _worker_main(stdin: int, stdout: int, close: list[int]) -> NoReturn:
    """The forked worker: the process `python -m arena.workers.child` is once imported. It
    leaves through `os._exit`, never through the runner's frames above the fork."""
    code = 1
    try:
        # the runner's exit handlers are the runner's: this process runs only its own
        # (the bot spawner's, arena/sandbox/spawner.py), at its end as at any exit
        atexit._clear()
        os.setsid()  # as start_new_session: a Ctrl-C in the terminal reaches the runner only
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        for fd in (stdin, stdout, *close):
            os.close(fd)
        import trio

        from arena.workers.child import main

        trio.run(main)
        code = 0
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(code)


def started(cores: list[int | None]) -> list[Prelaunched]:
    """Worker processes started as new interpreters (`python -m arena.workers.child`)."""
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
