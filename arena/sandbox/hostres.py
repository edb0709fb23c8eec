"""What the process launcher takes from the host for a bot and gives back: its scratch
directory, its uid, its network namespace, its leftovers and the directory it was lent.

Each is a resource of the machine, not of one run, so each is found again if an arena dies:
- scratch directories are named after the arena's pid, so the next arena removes those of an
  arena that was killed (`sweep_stale_scratch`, like the cgroups' `sweep_stale`);
- a uid is held by a lock file the kernel releases when its holder dies (`UidLease`), and
  every process a bot leaves behind is found by its uid (`processes_of_uid`, `kill_uid`);
- a uid's empty network namespace is kept for its next bots in this process (`NetnsCache`);
- a directory lent to a bot's uid (`chown_tree`) is taken back and its modes normalised
  (`reclaim_tree`) before the uid goes to the next bot.

arena/sandbox/process.py uses them when it starts and closes a bot.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import re
import shutil
import signal
import stat
import tempfile
from pathlib import Path

from arena.sandbox.base import SandboxFault

#: unprivileged uids handed out to bots when the arena runs as root (one per running bot)
DEFAULT_UID_BASE = 70000
DEFAULT_UID_COUNT = 1000


# -- scratch directories -------------------------------------------------------------------


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


# -- directories lent to a bot's uid --------------------------------------------------------


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
