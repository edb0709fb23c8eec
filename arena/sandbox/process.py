"""The `process` isolation mode: the bot as a local child process, contained as far as the
machine allows.

Layers, each used when the machine gives it (`ProcessLauncher.describe()` says which):
- its own session and process group, a scrubbed environment, its own working directory and a
  fresh private temporary directory, stdin/stdout as trio streams, stderr drained into a
  bounded ring buffer;
- rlimits (CPU seconds, file size, open files, no core dumps; memory and processes when no
  cgroup can do it);
- a per-bot cgroup (v2 or v1) for the memory limit, the pids limit, the CPU cap (`Limits.cpus`:
  all the bot's processes and threads together use at most that many CPUs, so that no bot can
  take the cores of another game's bots), OOM detection and a kill of the whole tree, `setsid`
  children included;
- when the arena runs as root: a unique unprivileged uid per running bot (so a bot can signal
  neither the referee, nor its opponent, nor write the arena's files, and every process it
  leaves behind can be found by uid), no capabilities and no_new_privs;
- no network: an empty network namespace (its uid's, kept for its next bots) unless
  Limits.network;
- a new mount namespace in which everything is read-only but the bot's private tmpfs;
- a parent-death signal: if the arena dies (even of SIGKILL), the kernel kills the bot.

All of it is applied by the forked child to itself before it execs the bot
(`arena.sandbox.confine`), so the bot is contained from its first instruction and no helper
program runs per bot.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import errno
import fcntl
import functools
import gc
import os
import pickle
import re
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import trio

from arena.sandbox import zygote
from arena.sandbox.base import (
    BotProcess,
    ExitInfo,
    Launcher,
    LaunchError,
    LaunchSpec,
    SandboxFault,
)
from arena.sandbox.cgroups import BotCgroup, CgroupSystem, sweep_stale
from arena.sandbox.confine import Confinement, Exposure, exec_child

#: PATH given to bots: enough to find interpreters, nothing of the arena's own environment.
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
#: unprivileged uids handed out to bots when the arena runs as root (one per running bot)
DEFAULT_UID_BASE = 70000
DEFAULT_UID_COUNT = 1000
#: how long aclose waits for a killed tree to disappear before giving up on its cgroup
CLEANUP_SECONDS = 3.0
# Python >= 3.12 warns at every os.fork of a process with threads (trio's worker threads)
# that the child may deadlock: not this one, which only makes system calls before its exec
# (arena/sandbox/confine.py says why that is safe).
warnings.filterwarnings(
    "ignore", message=r"This process \(pid=\d+\) is multi-threaded", category=DeprecationWarning
)


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


# -- machine capabilities (probed once per process: facts about the machine, not state) -----


@dataclass(frozen=True)
class Capabilities:
    """What this machine lets the process launcher do."""

    root: bool
    uids: bool = False  # a unique unprivileged uid per bot, no capabilities (arena is root)
    netns: bool = False  # a new, empty network namespace works here
    cgroups: CgroupSystem = field(default_factory=CgroupSystem)
    #: a mount namespace with everything read-only but the bot's private tmpfs works here
    mountns: bool = False

    def describe(self) -> str:
        return "; ".join(
            [
                f"cgroups: {self.cgroups.describe()}",
                "CPU capped per bot (limits.cpus)"
                if self.cgroups.cpu is not None
                else "CPU NOT capped per bot (no cgroup CPU controller)",
                "unique unprivileged uid per bot"
                if self.uids
                else "bots run as the arena's own user",
                "no network (network namespace)"
                if self.netns
                else "network NOT isolated (no network namespace)",
                "read-only filesystem but its temporary directory (mount namespace)"
                if self.mountns
                else "filesystem writable where its uid may write (no mount namespace)",
            ]
        )


@functools.cache
def capabilities() -> Capabilities:
    root = os.geteuid() == 0
    netns = not os.environ.get("ARENA_NO_NETNS") and _works(new_net=True)
    mountns = not os.environ.get("ARENA_NO_READONLY") and _works(new_mount=True)
    cgroups = CgroupSystem.detect()
    sweep_stale(cgroups)  # bots of arenas that crashed earlier
    for place in dict.fromkeys([Path(tempfile.gettempdir()), scratch_base(True)]):
        sweep_stale_scratch(place)
    return Capabilities(root, root, netns, cgroups, mountns)


def scratch_base(mountns: bool, fresh: bool = False) -> Path:
    """Where a bot's private temporary directory is made. With a mount namespace it is only
    the mount point of the bot's own tmpfs, empty on the machine's side, so it goes on a
    tmpfs too (/dev/shm, in a directory of the arena's own): made and removed there in
    microseconds, where on a disk filesystem the removal took one to two milliseconds per
    bot, in the arena's event loop. Without one the bot writes into it: the temporary
    directory, as always.

    Checked once per process (`fresh` checks again): once the directory is proven the
    arena's own, nobody else can replace it (/dev/shm is sticky)."""
    if fresh:
        _scratch_base.cache_clear()
    return _scratch_base(mountns)


@functools.cache
def _scratch_base(mountns: bool) -> Path:
    if mountns:
        base = Path("/dev/shm") / f"arena-scratch-{os.geteuid()}"
        with contextlib.suppress(OSError):
            with contextlib.suppress(FileExistsError):
                base.mkdir(mode=0o711)
            st = base.lstat()  # not a link or a directory someone else planted there
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
                return base
    return Path(tempfile.gettempdir())


_SCRATCH = re.compile(r"arena-bot-(\d+)-[A-Za-z0-9_]+")


def sweep_stale_scratch(tmp: Path) -> int:
    """Remove the bots' temporary directories left by arenas that died (SIGKILL) before
    their cleanup ran; named after the arena's pid, like the cgroups. Returns how many."""
    removed = 0
    me = os.geteuid()
    owners = range(DEFAULT_UID_BASE, DEFAULT_UID_BASE + DEFAULT_UID_COUNT)
    try:
        entries = list(os.scandir(tmp))
    except OSError:
        return 0
    for entry in entries:
        m = _SCRATCH.fullmatch(entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or (st.st_uid != me and st.st_uid not in owners):
                continue
            os.kill(int(m.group(1)), 0)
            continue  # its arena still runs
        except ProcessLookupError:
            pass
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    return removed


def make_scratch(mountns: bool) -> Path:
    """A new private directory for one bot (mode 0700), named after the arena, so that the
    next arena removes it if this one is killed. One mkdir (tempfile.mkdtemp's name
    generator cost more than the call itself)."""
    base = scratch_base(mountns)
    for _ in range(100):
        path = os.path.join(base, f"arena-bot-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        except FileNotFoundError:
            base = scratch_base(mountns, fresh=True)  # the base went (a cleaner): again
            continue
        return Path(path)
    raise FileExistsError(errno.EEXIST, "no unused name for a bot's temporary directory")


def _works(**layers: bool) -> bool:
    """Does a child confined with these layers start here? (`true` in a real sandbox.)"""
    with tempfile.TemporaryDirectory(prefix="arena-probe-") as scratch:
        plan = Confinement(os.getpid(), scratch, scratch=scratch, **layers)
        try:
            proc = subprocess.Popen(
                ["true"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                preexec_fn=plan.enter,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return proc.wait() == 0


# -- unique uids -----------------------------------------------------------------------------


class UidLease:
    """An unprivileged uid held exclusively (flock on a lock file) while one bot runs.

    The lock is released by the kernel if the arena dies, so there are no stale claims, and
    it works across arena processes running on the same machine.

    The lock file also says how its last holder left the uid: `clean` when the holder proved
    every process of it gone (its cgroup removed, or a /proc scan found none), `busy` while a
    bot runs. Only a uid not released clean (an arena that crashed, a bot whose leftovers
    survived, a lock file from an older arena) costs a scan of /proc before it is handed out
    again; the common case costs none. The directory is root's and 0700: a bot cannot forge
    the mark.
    """

    #: the same length, so that a mark is one pwrite over the other (no ftruncate: that
    #: costs milliseconds on some filesystems)
    CLEAN = b"clean\n"
    BUSY = b"busy-\n"

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, base: int, count: int) -> UidLease:
        lockdir = _uid_lock_dir()
        # lowest first: the same few uids serve game after game and stay marked clean
        for i in range(count):
            uid = base + i
            lock = f"{lockdir}/{uid}.lock"
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except FileNotFoundError:  # the directory went: made (and checked) again
                lockdir = _uid_lock_dir(fresh=True)
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            try:
                clean = os.pread(fd, len(cls.CLEAN) + 1, 0) == cls.CLEAN
                if not clean and processes_of_uid(uid):
                    # a previous holder's leftovers (arena crashed): do not share a uid
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)
                    continue
                _mark(fd, cls.BUSY)
            except OSError:
                os.close(fd)
                raise
            return cls(uid, fd)
        raise SandboxFault(f"all {count} sandbox uids from {base} are in use")

    def release(self, clean: bool = False) -> None:
        """Give the uid back; `clean` only when no process of it can be left (proven)."""
        if self._fd is not None:
            if clean:
                with contextlib.suppress(OSError):
                    _mark(self._fd, self.CLEAN)
            os.close(self._fd)
            self._fd = None


def _uid_lock_dir(fresh: bool = False) -> str:
    """The directory of the uid lock files, made and checked once per process (`fresh`:
    again). /run is root's own (a bot cannot pre-create the directory there, as it could in
    a world-writable /tmp, and hold the locks); shared by every arena on the machine."""
    if fresh:
        _checked_lock_dir.cache_clear()
    return _checked_lock_dir()


@functools.cache
def _checked_lock_dir() -> str:
    base_dir = "/run" if os.access("/run", os.W_OK) else tempfile.gettempdir()
    lockdir = os.path.join(base_dir, "arena-sandbox-uids")
    with contextlib.suppress(FileExistsError):
        os.mkdir(lockdir, 0o700)
    if os.stat(lockdir).st_uid != os.geteuid():
        raise SandboxFault(f"{lockdir} belongs to someone else: remove it")
    return lockdir


class NetnsCache:
    """An empty network namespace per sandbox uid, kept (as an open fd) for the uid's next
    bots in this arena process: creating a namespace costs a bot start about half a
    millisecond (a loopback device, its sysctl tables) and its destruction as much again in a
    kernel worker, for every bot.

    Sharing is safe because a namespace only ever holds processes of its uid, and a uid runs
    one bot at a time (its lease): the bot's first process joins it before exec, and nothing
    of that uid can leave it or change it (no capabilities: loopback stays down, no address,
    route, filter or sysctl can be set). What a bot leaves there (sockets, abstract socket
    names) goes with its processes, and the next bot of the uid gets the uid only once all of
    them are gone (UidLease). One per arena process, like `capabilities()`: the fds are
    kernel handles tied to this process, not state of any run.
    """

    def __init__(self) -> None:
        self._fds: dict[int, int] = {}

    def get(self, uid: int) -> int | None:
        return self._fds.get(uid)

    def keep(self, uid: int, pid: int) -> None:
        """Keep the network namespace bot `pid` (our unreaped child, past its exec, running
        as `uid`) created, for the uid's next bots. Nothing if it is gone already."""
        if uid in self._fds:
            return
        try:
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return
        if fd < 3:  # the arena runs without standard streams: the child's dup2 would reuse it
            os.close(fd)
            return
        self._fds[uid] = fd


@functools.cache
def netns_cache() -> NetnsCache:
    return NetnsCache()


def _mark(fd: int, text: bytes) -> None:
    if os.pwrite(fd, text, 0) != len(text):
        raise OSError("short write to a uid lock file")


def processes_of_uid(uid: int) -> list[int]:
    """Live pids whose real or effective uid is `uid` (a /proc scan: a bot's leftovers by
    owner). Zombies are dead already and only wait for their reaper, so they do not count."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"State:") and line.split()[1:2] == [b"Z"]:
                        break
                    if line.startswith(b"Uid:"):
                        ids = line.split()[1:3]
                        if str(uid).encode() in ids:
                            found.append(int(entry.name))
                        break
        except OSError:
            continue
    return found


def kill_uid(uid: int, rounds: int = 50) -> None:
    """SIGKILL everything owned by a bot's uid, repeatedly: a fork bomb refills the table."""
    for _ in range(rounds):
        pids = processes_of_uid(uid)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def _first_blocked(
    path: Path | str, uid: int, gid: int, stats: dict[str, os.stat_result | None] | None = None
) -> Path | None:
    """The first component on the way to `path` (or `path` itself) that `uid` cannot
    traverse, list or read; None if it can reach all of it. The path as named and as
    resolved: a symlink (a virtual environment's interpreter) is reached through both.

    Strings and `os.stat` (every bot start walks its paths: pathlib cost more than the system
    calls); `stats` shares the stat of a component between the paths of one start."""
    if stats is None:
        stats = {}
    named = os.path.abspath(path)
    for leaf in dict.fromkeys([named, os.path.realpath(named)]):
        parts = leaf.split("/")
        for i in range(1, len(parts) + 1):
            p = "/".join(parts[:i]) or "/"
            if i < len(parts) and not parts[i]:
                continue  # the root's own empty name
            if p not in stats:
                try:
                    stats[p] = os.stat(p)
                except OSError:
                    stats[p] = None
            if _mode_blocks(stats[p], p == leaf, uid, gid):
                return Path(p)
    return None


def _mode_blocks(st: os.stat_result | None, is_leaf: bool, uid: int, gid: int) -> bool:
    """Do these mode bits (of a path's leaf or of a directory on its way) stop `uid`?"""
    if st is None:
        return True
    if is_leaf and not stat.S_ISDIR(st.st_mode):
        need = stat.S_IROTH
    else:
        need = stat.S_IXOTH | (stat.S_IROTH if is_leaf else 0)
    if st.st_uid == uid:
        need <<= 6
    elif st.st_gid == gid:
        need <<= 3
    return st.st_mode & need != need


def _component_blocked(p: Path, leaf: Path, uid: int, gid: int) -> bool:
    """Do p's own mode bits stop `uid` on its way to `leaf` (p is leaf or an ancestor)?"""
    try:
        st: os.stat_result | None = os.stat(p)
    except OSError:
        st = None
    return _mode_blocks(st, p == leaf, uid, gid)


def exposures_for(paths: list[Path], uid: int) -> tuple[Exposure, ...] | None:
    """How to make `paths` reachable by `uid` in its mount namespace without touching the
    machine: for each directory it cannot traverse (say /root, 0700, holding a pyenv
    interpreter), cover that directory with an empty tmpfs and bind back only the entries
    on the way to the paths (/root/.pyenv). None if that is not enough (a blocked directory
    below the entry, a file it cannot read): the caller then keeps the arena's uid.

    Each path counts as named and as resolved: a virtual environment's interpreter is a
    symlink to the base interpreter, and Python finds the environment (its `pyvenv.cfg`,
    its site-packages) beside the name it was started by, so both must be reachable."""
    covers: dict[Path, set[str]] = {}
    named = [Path(os.path.abspath(p)) for p in paths]
    for path in dict.fromkeys([*named, *(p.resolve() for p in named)]):
        for _ in range(8):  # each round covers one directory more, a cover at a time
            blocked = _first_blocked_under(path, uid, covers)
            if blocked is None:
                break
            if blocked == path or not blocked.is_dir():
                return None  # the path itself is unreadable: nothing to expose
            entry = path.relative_to(blocked).parts[0]
            covers.setdefault(blocked, set()).add(entry)
        else:
            return None
    # parents first: a cover inside another cover's entry must be mounted after it
    return tuple(
        Exposure(str(d), tuple(sorted(names)))
        for d, names in sorted(covers.items(), key=lambda kv: len(kv[0].parts))
    )


def _first_blocked_under(path: Path, uid: int, covers: dict[Path, set[str]]) -> Path | None:
    """Like _first_blocked, but a covered directory is traversable (its tmpfs is 0755) on
    the way to one of its exposed entries, and only there."""
    for p in [*reversed(path.parents), path]:
        names = covers.get(p)
        if names is not None:
            rest = path.relative_to(p).parts
            if rest and rest[0] in names:
                continue
            return p
        if _component_blocked(p, path, uid, uid):
            return p
    return None


# -- the running bot -------------------------------------------------------------------------


class ProcessBot(BotProcess):
    """One bot running as a local process tree."""

    def __init__(
        self,
        spec: LaunchSpec,
        proc: _Child,
        scratch: Path,
        cgroup: BotCgroup | None,
        lease: UidLease | None,
        notes: tuple[str, ...],
    ) -> None:
        self.spec = spec
        self._proc = proc
        self.pid = proc.pid
        self._scratch = scratch
        self._cgroup = cgroup
        self._cgroup_gone = False  # removed: the tree is proven gone
        self._lease = lease
        #: the working directory lent to the bot's uid (writable_workdir), taken back on close
        self.lent: Path | None = None
        #: how this bot is contained (for records and debugging)
        self.notes = notes
        assert proc.stdin is not None and proc.stdout is not None
        self.stdin = proc.stdin
        self.stdout = proc.stdout
        self._stderr = StderrRing(spec.limits.stderr_bytes)
        self._exited = trio.Event()
        self._stderr_done = trio.Event()
        self._exit: ExitInfo | None = None
        self._killed = False
        self._closed = False

    @property
    def uid(self) -> int | None:
        return self._lease.uid if self._lease is not None else None

    def processes(self) -> set[int]:
        """Every live process of this bot that we can find (cgroup members, uid owners)."""
        found: set[int] = set()
        if self._cgroup is not None:
            found |= self._cgroup.pids()
        if self._lease is not None:
            found |= set(processes_of_uid(self._lease.uid))
        return found

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

    async def _watch_exit(self) -> None:
        await self._reap()

    async def _reap(self) -> ExitInfo:
        """Wait for the main process; safe to run concurrently (trio serialises the waits)."""
        returncode = await self._proc.wait()
        if self._exit is None:
            # The bot's lifetime is its main process: anything it left behind goes with it,
            # so an orphan cannot keep stdout open and hide the exit from the referee.
            self._kill_tree()
            oom = self._cgroup is not None and self._cgroup.memory_exceeded()
            if returncode < 0:
                info = ExitInfo(None, -returncode, oom, killed_by_arena=self._killed)
            else:
                info = ExitInfo(returncode, None, oom, killed_by_arena=self._killed)
            self._exit = info
            self._exited.set()
        assert self._exit is not None
        return self._exit

    # -- BotProcess ------------------------------------------------------------------------

    def stderr_tail(self) -> str:
        return self._stderr.text()

    def clear_stderr(self) -> None:
        self._stderr = StderrRing(self._stderr.capacity)

    async def wait(self) -> ExitInfo:
        return await self._reap()

    def exit_info(self) -> ExitInfo | None:
        return self._exit

    def _kill_tree(self) -> None:
        if self._cgroup is not None:
            self._cgroup.kill()
            if self._cgroup.killed:
                # cgroup.kill got the whole tree, its process group included; no killpg
                # either, whose number may name another group once the bot is reaped
                return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if self._cgroup is None and self._lease is not None:
            kill_uid(self._lease.uid)

    async def kill(self) -> None:
        if self._exit is None and self._proc.returncode is None:
            self._killed = True
        self._kill_tree()
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
            if self.counters is not None:
                self.counters.close()
            await self._cleanup()

    async def _cleanup(self) -> None:
        """Wait (bounded) until the tree is gone, then free cgroup, uid and scratch dir.

        With a cgroup, its removal proves the tree gone: a bot without capabilities cannot
        leave it, so the scans of /proc by uid (milliseconds each) are only the fallback."""
        with trio.move_on_after(CLEANUP_SECONDS):
            while True:
                self._kill_tree()
                if self._cgroup is None:
                    if self._lease is not None:
                        await trio.to_thread.run_sync(kill_uid, self._lease.uid)
                    break
                if self._cgroup.remove():
                    self._cgroup_gone = True
                    break
                await trio.sleep(0.02)
        # a uid whose processes survived stays locked until the arena exits, never reused
        if self.lent is not None:
            # before the uid is released: nothing stays owned by a uid the next bot gets
            await trio.to_thread.run_sync(reclaim_tree, self.lent)
        if self._lease is not None and (self._cgroup_gone or not processes_of_uid(self._lease.uid)):
            self._lease.release(clean=True)
        try:
            # its tmpfs was only mounted in the bot's own namespace: here it is empty
            os.rmdir(self._scratch)
        except OSError:
            await trio.to_thread.run_sync(lambda: shutil.rmtree(self._scratch, ignore_errors=True))


# -- the launcher ----------------------------------------------------------------------------


class ProcessLauncher(Launcher):
    """Starts bots as local child processes, contained as well as the machine allows."""

    def __init__(
        self,
        uid_base: int = DEFAULT_UID_BASE,
        uid_count: int = DEFAULT_UID_COUNT,
        caps: Capabilities | None = None,
    ) -> None:
        self.uid_base = uid_base
        self.uid_count = uid_count
        #: what to use of the machine; None = probe it. Tests pass a reduced set to exercise
        #: the fallbacks (no cgroup, no uid switch, no network namespace) on a capable machine.
        self.caps = caps

    @staticmethod
    def describe() -> str:
        """One line naming the containment this machine gives (for logs and docs)."""
        return capabilities().describe()

    def check(self, spec: LaunchSpec) -> None:
        if not spec.command:
            raise LaunchError(f"bot {spec.name}: empty command")
        _check_files(spec)

    async def start(self, spec: LaunchSpec, nursery: trio.Nursery) -> BotProcess:
        if not spec.command:
            raise LaunchError(f"bot {spec.name}: empty command")
        caps = self.caps
        if caps is None:
            # probed once per process (it runs programs): in a thread the first time only
            probed = capabilities.cache_info().currsize > 0
            caps = capabilities() if probed else await trio.to_thread.run_sync(capabilities)
        workdir = _check_files(spec)
        notes: list[str] = []
        lease = None
        exposures: tuple[Exposure, ...] = ()
        if caps.uids:
            lease = UidLease.acquire(self.uid_base, self.uid_count)
            blocked = _unreachable_paths(spec, workdir, lease.uid)
            if blocked and caps.mountns:
                # usually an interpreter under /root (pyenv): show the bot just that
                needed = [*blocked, Path(tempfile.gettempdir())]
                exposed = exposures_for(needed, lease.uid)
                if exposed is not None:
                    blocked = []
                    exposures = exposed
                    notes.append("exposed: " + ", ".join(_describe(exposed)))
            if blocked:
                # e.g. a bot under /root or a 0700 pytest tmp dir: run it with the arena's
                # own uid rather than fail, and say so (docs/security.md)
                notes.append(f"{blocked[0]} is not reachable by an unprivileged uid")
                lease.release(clean=True)  # nothing ran as its uid
                lease = None
        scratch = make_scratch(caps.mountns)
        cgroup = None
        child = None
        try:
            if lease is not None:
                os.chown(scratch, lease.uid, lease.uid)
                if spec.writable_workdir and workdir is not None:
                    await trio.to_thread.run_sync(chown_tree, workdir, lease.uid)
            cwd = workdir if workdir is not None else scratch
            limits = spec.limits
            if caps.cgroups.usable:
                try:
                    cgroup = BotCgroup.create(
                        caps.cgroups,
                        limits.memory_mb * 1024 * 1024,
                        limits.processes,
                        limits.cpu_quota(),
                    )
                except OSError as exc:
                    notes.append(f"no cgroup: {exc}")
            if limits.cpu_quota() is None:
                notes.append(f"CPU not capped (limits.cpus {limits.cpus:g}: the whole machine)")
            elif cgroup is None or cgroup.cpu_cap is None:
                why = cgroup.cap_note if cgroup is not None else "no cgroup"
                notes.append(f"CPU not capped ({why})")
            if not limits.network and not caps.netns:
                notes.append("network not isolated")
            new_net = not limits.network and caps.netns
            netns = netns_cache() if new_net and lease is not None else None
            plan = Confinement(
                parent_pid=os.getpid(),
                cwd=str(cwd),
                cgroup_procs=cgroup.procs_files() if cgroup is not None else (),
                rlimits=_rlimits(
                    spec,
                    memory_by_cgroup=bool(cgroup and "memory" in cgroup.dirs),
                    nproc=lease is not None,
                ),
                cpu_affinity=spec.cpu_affinity,
                new_net=new_net,
                netns_fd=netns.get(lease.uid) if netns is not None and lease else None,
                new_mount=caps.mountns,
                scratch=str(scratch) if caps.mountns else None,
                tmpfs_mb=limits.tmpfs_mb,
                owner=lease.uid if lease is not None else os.geteuid(),
                exposures=exposures,
                writable=(str(workdir),) if spec.writable_workdir and workdir else (),
                uid=lease.uid if lease is not None else None,
                # without a uid of its own (unreachable files) the bot stays uid 0 but still
                # loses every capability: it cannot remount, escape its cgroup or namespaces
                drop_capabilities=caps.uids,
                cap_last=_cap_last(),
            )
            child = await _Child.spawn(list(spec.command), scrubbed_env(spec, cwd, scratch), plan)
            if netns is not None and lease is not None and plan.netns_fd is None:
                netns.keep(lease.uid, child.pid)
        except BaseException as exc:
            if cgroup is not None:
                cgroup.kill()
                cgroup.remove()
            if lease is not None:
                if spec.writable_workdir and workdir is not None:
                    with contextlib.suppress(OSError):
                        reclaim_tree(workdir)
                lease.release()
            shutil.rmtree(scratch, ignore_errors=True)
            if isinstance(exc, OSError | subprocess.SubprocessError):
                raise SandboxFault(f"bot {spec.name}: cannot start the sandbox: {exc}") from exc
            raise
        bot = ProcessBot(spec, child, scratch, cgroup, lease, tuple(notes))
        if cgroup is not None:
            bot.counters = cgroup.cpu_counters()
        if spec.writable_workdir:
            bot.lent = workdir  # given back (owner, modes) whichever uid the bot ran as
        nursery.start_soon(bot._drain_stderr)
        nursery.start_soon(bot._watch_exit)
        return bot


class _Child:
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
        self.pid = pid
        self.returncode: int | None = None
        self._pidfd: int | None = os.pidfd_open(pid)
        self.stdin = trio.lowlevel.FdStream(stdin)
        self.stdout = trio.lowlevel.FdStream(stdout)
        self.stderr = trio.lowlevel.FdStream(stderr)
        self._lock = trio.Lock()

    @classmethod
    async def spawn(cls, argv: list[str], env: dict[str, str], plan: Confinement) -> _Child:
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
    gc_enabled = gc.isenabled()
    gc.disable()  # no collection in the child: it would touch (copy) every object
    try:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            exec_child(argv, candidates, env, plan, std, report)
    finally:
        if gc_enabled:
            gc.enable()
    return pid


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
        self.ready = False  # it says so on its socket once it serves (zygote.READY)
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
            if said != zygote.READY:
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
        if self.broken:
            return None
        fds = [*std, report] + ([plan.netns_fd] if plan.netns_fd is not None else [])
        payload = pickle.dumps((argv, candidates, env, dataclasses.replace(plan, netns_fd=None)))
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            try:
                zygote.send_request(self.sock, payload, [theirs.fileno(), *fds])
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
    if os.environ.get("ARENA_NO_SPAWNER") or zygote.clone_number() is None:
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


def _spawner() -> _Spawner | None:
    """This thread's spawner if it is serving (started, if need be, for the next bots)."""
    spawner = _spawner_of(os.getpid(), threading.get_ident())
    return spawner if spawner is not None and spawner.serving() else None


async def _read_to_end(fd: int) -> bytes:
    """Everything written to a pipe until its last writer closes it; closes `fd`."""
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


def chown_tree(top: Path, uid: int) -> None:
    """Give `top` and everything under it to `uid` (and its group), never following a link:
    what a build left there (links to anywhere) is changed itself, not what it points to."""
    os.chown(top, uid, uid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            with contextlib.suppress(FileNotFoundError):
                os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


def reclaim_tree(top: Path) -> None:
    """Take a lent directory back: owned by the arena again, and every mode normalised
    (directories 0755, files 0644 or 0755 when the owner could execute them: no setuid,
    setgid, sticky or group/other write bit). A bot that later runs from it can read all of
    it under a uid of its own, so no file a build made unreadable (chmod 700) can make the
    launcher fall back to the arena's uid."""
    chown_tree(top, os.geteuid())
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [*dirnames, *filenames, None]:
            path = dirpath if name is None else os.path.join(dirpath, name)
            with contextlib.suppress(FileNotFoundError):
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode):
                    continue
                wanted = 0o755 if stat.S_ISDIR(st.st_mode) or st.st_mode & stat.S_IXUSR else 0o644
                if stat.S_IMODE(st.st_mode) != wanted:
                    os.chmod(path, wanted)


def _describe(exposures: tuple[Exposure, ...]) -> list[str]:
    return [f"{os.path.join(e.directory, n)}" for e in exposures for n in e.names]


def _unreachable_paths(spec: LaunchSpec, workdir: Path | None, uid: int) -> list[Path]:
    """The bot's own files (workdir, program, command words naming existing files) that `uid`
    could not reach. The program counts although setpriv could exec it anyway: an interpreter
    under /root (pyenv) would start but could not read its own library as another uid.

    Walked at every start (a few stat calls on strings, each component once): exact, so a
    bot's directory made unreachable between two games is seen at the next start."""
    wd = str(workdir) if workdir is not None else None
    paths = [wd] if wd is not None else []
    prog = spec.command[0]
    if "/" in prog:
        exe: str | None = prog if os.path.isabs(prog) or wd is None else os.path.join(wd, prog)
    else:
        exe = shutil.which(prog, path=spec.env.get("PATH", DEFAULT_PATH))
    if exe is not None and os.path.exists(exe):
        paths.append(exe)  # _first_blocked also walks its resolved path
    for word in spec.command[1:]:
        if "/" in word and not word.startswith("-"):
            p = word if os.path.isabs(word) or wd is None else os.path.join(wd, word)
            if os.path.exists(p):
                paths.append(p)
    stats: dict[str, os.stat_result | None] = {}
    return [Path(p) for p in paths if _first_blocked(p, uid, uid, stats) is not None]


def _check_files(spec: LaunchSpec) -> Path | None:
    """The bot's working directory (None: none of its own), after checking that it and the
    program exist: a missing one is the bot's fault, reported before anything starts."""
    workdir = Path(spec.workdir) if spec.workdir is not None else None
    if workdir is not None and not os.path.isdir(workdir):
        raise LaunchError(f"bot {spec.name}: working directory {workdir} does not exist")
    _check_executable(spec, workdir)
    return workdir


def _check_executable(spec: LaunchSpec, workdir: Path | None) -> None:
    """A missing program is the bot's fault, reported before anything is started."""
    prog = spec.command[0]
    if "/" in prog:
        path = prog
        if not os.path.isabs(path):
            if workdir is None:
                raise LaunchError(f"bot {spec.name}: relative command {prog} needs a workdir")
            path = os.path.join(workdir, path)
        if not os.path.isfile(path):
            raise LaunchError(f"bot {spec.name}: cannot start {prog}: no such file")
        if not os.access(path, os.X_OK):
            raise LaunchError(f"bot {spec.name}: cannot start {prog}: not executable")
    elif shutil.which(prog, path=spec.env.get("PATH", DEFAULT_PATH)) is None:
        raise LaunchError(f"bot {spec.name}: cannot start {prog}: not found in PATH")


def _rlimits(
    spec: LaunchSpec, memory_by_cgroup: bool, nproc: bool
) -> tuple[tuple[int, tuple[int, int]], ...]:
    """Kernel-enforced limits for the child, inherited by everything it starts."""
    limits = spec.limits
    mib = 1024 * 1024
    todo = [
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * mib),
        (resource.RLIMIT_NOFILE, limits.open_files),
    ]
    if limits.cpu_seconds is not None:
        todo.append((resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1)))
    if not memory_by_cgroup:
        # not RLIMIT_AS: runtimes such as V8 reserve far more address space than they use
        todo.append((resource.RLIMIT_DATA, limits.memory_mb * mib))
    if nproc:
        # per uid, so only meaningful (and harmless to others) with a uid of the bot's own
        todo.append((resource.RLIMIT_NPROC, limits.processes))
    return tuple(
        (res, _within_own_limit(res, value if isinstance(value, tuple) else (value, value)))
        for res, value in todo
    )


def _within_own_limit(res: int, pair: tuple[int, int]) -> tuple[int, int]:
    """An rlimit the child can take: without CAP_SYS_RESOURCE (which even root lacks in
    most containers) no process may raise its hard limit above its parent's, so a larger one
    would make every start fail; the arena's own hard limit is then the bot's too."""
    _, hard = resource.getrlimit(res)
    if hard == resource.RLIM_INFINITY:
        return pair
    return (min(pair[0], hard), min(pair[1], hard))


@functools.cache
def _cap_last() -> int:
    """The highest capability number this kernel knows (all are dropped from bots)."""
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 63
