"""Forking a bot: the arena's end of the bot spawner (arena/sandbox/zygote.py), and the
bot's main process as trio sees it (`Child`).

A bot is forked from trio's own thread and confines itself in the child before its exec
(arena/sandbox/confine.py), so nothing runs per bot but the bot. Forking from the arena itself
copies (and write-protects) the arena's heap at every start, so where the machine allows, a
small spawner process started once per arena thread (`start_spawner`) forks the bots as the
arena's own children (CLONE_PARENT) instead; until it serves, or once it has died, bots are
forked here (`_fork`), as contained as before.

trio is imported where it is used, not with this module: a command starts its spawner
(`start_spawner`) before it imports trio, so that the spawner's interpreter starts on another
core meanwhile.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import dataclasses
import errno
import functools
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator

from arena.sandbox.confine import Confinement, fork_child
from arena.sandbox.zygote import READY, clone_number, send_request

# Python >= 3.12 warns at every os.fork of a process with threads (trio's worker threads)
# that the child may deadlock: not this one, which only makes system calls before its exec
# (arena/sandbox/confine.py says why that is safe).
warnings.filterwarnings(
    "ignore", message=r"This process \(pid=\d+\) is multi-threaded", category=DeprecationWarning
)


class Child:
    """The bot's main process: forked from trio's own thread, confined and exec'd by itself,
    its pipes as trio streams, its exit awaited on a pidfd.

    Not `trio.lowlevel.open_process`: that forks from a worker thread, and the bot's
    parent-death signal fires when the thread that forked it exits, which trio's idle worker
    threads do after ten seconds: the bot would be killed mid-game. Not `subprocess.Popen`
    either: with a `preexec_fn` it blocks the event loop until the child has exec'd (the
    fork, the child's confinement and the exec: about 4 ms per bot), so the two bots of a game
    started one after the other. Here the event loop is held for the fork only (a fraction of
    a millisecond); the child confines itself and execs while the loop goes on (the other
    bot's start, on another core), and the exec's outcome is awaited on a close-on-exec pipe:
    end of file is success, bytes are the child's report of what failed.
    """

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        import trio

        self.pid = pid
        self.returncode: int | None = None
        self._pidfd: int | None = os.pidfd_open(pid)
        self.stdin = trio.lowlevel.FdStream(stdin)
        self.stdout = trio.lowlevel.FdStream(stdout)
        self.stderr = trio.lowlevel.FdStream(stderr)
        self._lock = trio.Lock()

    @classmethod
    async def spawn(cls, argv: list[str], env: dict[str, str], plan: Confinement) -> Child:
        """Fork, confine and exec `argv`. Raises OSError or SubprocessError (with the child's
        own words) when the confinement or the exec failed; nothing is left running then."""
        program = os.fsencode(argv[0])
        if os.path.dirname(program):
            candidates: tuple[bytes, ...] = (program,)
        else:
            candidates = tuple(os.path.join(os.fsencode(d), program) for d in os.get_exec_path(env))
        fds = [*os.pipe2(os.O_CLOEXEC), *os.pipe2(os.O_CLOEXEC), *os.pipe2(os.O_CLOEXEC)]
        in_r, in_w, out_r, out_w, err_r, err_w = fds
        report_r, report_w = os.pipe2(os.O_CLOEXEC)
        spawner = _spawner()
        try:
            std = (in_r, out_w, err_w)
            pid = None
            if spawner is not None:
                pid = await spawner.spawn(argv, candidates, env, plan, std, report_w)
            if pid is None:
                pid = _fork(argv, candidates, env, plan, std, report_w)
        except BaseException:
            for fd in (*fds, report_r, report_w):
                os.close(fd)
            raise
        for fd in (in_r, out_w, err_w, report_w):
            os.close(fd)
        try:
            report = await _read_to_end(report_r)
        except BaseException:
            _kill_and_reap(pid)
            for fd in (in_w, out_r, err_r):
                os.close(fd)
            raise
        if report:
            _kill_and_reap(pid)
            for fd in (in_w, out_r, err_r):
                os.close(fd)
            kind, _, rest = report.decode(errors="replace").partition(":")
            number, _, message = rest.partition(":")
            if kind == "exec" and number.isdigit():
                raise OSError(int(number), f"{message}: {argv[0]}")
            raise subprocess.SubprocessError(f"the bot's confinement failed: {message}")
        try:
            return cls(pid, in_w, out_r, err_r)
        except BaseException:
            _kill_and_reap(pid)
            raise

    async def wait(self) -> int:
        import trio

        async with self._lock:
            while self.returncode is None:
                assert self._pidfd is not None
                await trio.lowlevel.wait_readable(self._pidfd)
                self._poll()
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None
        return self.returncode

    def _poll(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)

    def kill(self) -> None:
        """SIGKILL, unless already reaped (then the pid may belong to someone else)."""
        if self.returncode is None and self._pidfd is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)


def _fork(
    argv: list[str],
    candidates: tuple[bytes, ...],
    env: dict[str, str],
    plan: Confinement,
    std: tuple[int, int, int],
    report: int,
) -> int:
    """Fork the bot from this process (where no spawner serves it)."""
    return fork_child(argv, candidates, env, plan, std, report)


#: seconds the spawner has to answer a request (it forks at once: milliseconds)
SPAWNER_SECONDS = 10.0


class _Spawner:
    """The arena's end of its bot spawner (arena/sandbox/zygote.py): a process that forks
    the bots as children of this one, so that this process's heap is neither copied nor
    write-protected at every bot start."""

    def __init__(self) -> None:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            code = "from arena.sandbox.zygote import main; main()"
            self.proc = subprocess.Popen(
                [sys.executable, "-S", "-c", code, str(theirs.fileno()), str(os.getpid())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
            )
        except BaseException:
            self.sock.close()
            raise
        finally:
            theirs.close()
        self.sock.setblocking(False)
        self.broken = False
        self.ready = False  # it says so on its socket once it serves (READY)
        atexit.register(self.close)

    def serving(self) -> bool:
        """Ready to take requests (checked without waiting: until then, bots are forked
        here, so that nothing waits for the spawner's own start)."""
        if not self.ready and not self.broken:
            try:
                said = self.sock.recv(16)
            except BlockingIOError:
                return False
            except OSError:
                said = b""
            if said != READY:
                self.close()  # it died at its start: this process forks its bots itself
                return False
            self.ready = True
        return self.ready and not self.broken

    async def spawn(
        self,
        argv: list[str],
        candidates: tuple[bytes, ...],
        env: dict[str, str],
        plan: Confinement,
        std: tuple[int, int, int],
        report: int,
    ) -> int | None:
        """The bot's pid (our child), or None if the spawner cannot take the request (the
        caller forks instead). Raises OSError if the spawner failed while it had it (the
        arena's failure: the game is void; the bot, if it was forked, dies with its cgroup)."""
        import trio

        if self.broken:
            return None
        fds = [*std, report] + ([plan.netns_fd] if plan.netns_fd is not None else [])
        payload = pickle.dumps((argv, candidates, env, dataclasses.replace(plan, netns_fd=None)))
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            try:
                send_request(self.sock, payload, [theirs.fileno(), *fds])
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EMSGSIZE, errno.ENOBUFS):
                    self.close()  # gone: this process forks its bots from now on
                return None
            theirs.close()
            # shielded (a fork takes milliseconds): once it has the request, the spawner forks,
            # and a bot that was forked must not go unnoticed
            deadline = trio.current_time() + SPAWNER_SECONDS
            with trio.CancelScope(shield=True, deadline=deadline):
                await trio.lowlevel.wait_readable(mine)
            try:
                answer = mine.recv(256).decode(errors="replace")
            except OSError:
                answer = ""
        finally:
            mine.close()
            theirs.close()
        if answer.isdigit():
            return int(answer)
        if answer.startswith("error:"):
            number, _, text = answer[6:].partition(":")
            raise OSError(int(number) if number.isdigit() else 0, f"bot spawner: {text}")
        self.close()  # it died or hangs: stopped for good, and the start fails
        raise OSError(errno.EIO, "the bot spawner failed")

    def close(self) -> None:
        if not self.broken:
            self.broken = True
            self.sock.close()  # it exits when it sees the end of its socket
            with contextlib.suppress(OSError):
                self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(1.0)


@functools.cache
def _spawner_of(pid: int, thread: int) -> _Spawner | None:
    """One spawner per arena process and thread: a bot's parent-death signal fires when the
    thread that forked its parent (the spawner) exits, so a spawner serves the thread that
    started it only. None where the machine gives none (ARENA_NO_SPAWNER set, an architecture
    whose clone(2) is not known, no way to start it)."""
    if os.environ.get("ARENA_NO_SPAWNER") or clone_number() is None:
        return None
    try:
        return _Spawner()
    except OSError:
        return None


def start_spawner() -> None:
    """Start this thread's bot spawner now (in the background: its interpreter's start takes
    tens of milliseconds) rather than with the first bot: for processes that start bots game
    after game."""
    _spawner_of(os.getpid(), threading.get_ident())


#: set within `forking_here`
_FORK_HERE: contextvars.ContextVar[bool] = contextvars.ContextVar("arena_fork_here", default=False)


@contextlib.contextmanager
def forking_here() -> Iterator[None]:
    """Within it, bots are forked by this process itself and no spawner is started for them:
    for a command that starts one game's two bots and no more (`arena match`), where a
    spawner's start (an interpreter and its imports, tens of milliseconds of CPU) competes
    with the game's own start for the cores and serves no later bot. The bots are contained
    exactly as through a spawner (`confine.exec_child` in the forked child). A context
    variable: the tasks of a trio run started inside see it, and it ends with the block."""
    token = _FORK_HERE.set(True)
    try:
        yield
    finally:
        _FORK_HERE.reset(token)


def _spawner() -> _Spawner | None:
    """This thread's spawner if it is serving (started, if need be, for the next bots)."""
    if _FORK_HERE.get():
        return None
    spawner = _spawner_of(os.getpid(), threading.get_ident())
    return spawner if spawner is not None and spawner.serving() else None


async def _read_to_end(fd: int) -> bytes:
    """Everything written to a pipe until its last writer closes it; closes `fd`."""
    import trio

    chunks = []
    try:
        while True:
            await trio.lowlevel.wait_readable(fd)
            data = os.read(fd, 4096)
            if not data:
                return b"".join(chunks)
            chunks.append(data)
    finally:
        os.close(fd)


def _kill_and_reap(pid: int) -> None:
    """A child that failed before (or while) exec'ing: it exits at once or is killed."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
