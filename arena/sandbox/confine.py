"""The bot's confinement, applied by the forked child itself between fork and exec.

Every layer is a handful of system calls (through ctypes) made in `Confinement.enter`, which
the forked child runs before it execs the bot (`exec_child`): the
child joins its cgroup, takes its rlimits,
enters new mount and network namespaces (or joins its uid's empty network namespace), makes
the whole filesystem read-only in one call
(`mount_setattr(2)` with `AT_RECURSIVE`), mounts its private tmpfs, drops every capability,
switches to its own uid, sets `no_new_privs` and a parent-death signal, and only then execs
the bot. So the bot is contained from its first instruction without a gate, and no helper
program (`sh`, `unshare`, one `mount` per mount point, `setpriv`) is started per bot: those
cost tens of milliseconds per bot, the calls here well under one.

Why running Python between fork and exec is acceptable here although the arena has threads
(trio's worker threads):
the child only makes system calls, opens files and allocates small objects under the GIL it
holds (CPython re-initialises its own locks after fork; glibc's malloc is fork-safe), and the
libc functions ctypes needs are looked up in the parent, when the plan is made.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import gc
import os
import resource
import signal
from dataclasses import dataclass

# <linux/sched.h>, <sys/mount.h>, <linux/mount.h>, <linux/prctl.h>, <fcntl.h>
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MOUNT_ATTR_RDONLY = 0x1
AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
AT_RECURSIVE = 0x8000
OPEN_TREE_CLONE = 1
OPEN_TREE_CLOEXEC = 0o2000000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_TIMERSLACK = 29
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
# the mount API's syscalls have the same numbers on every architecture (asm-generic, >= 424)
SYS_OPEN_TREE = 428
SYS_MOVE_MOUNT = 429
SYS_MOUNT_SETATTR = 442


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


#: made here, before any fork: a ctypes array type made in the child is a new class there,
#: a tenth of a millisecond of Python and page faults per bot
_CapDataPair = _CapData * 2


@functools.cache
def libc() -> ctypes.CDLL:
    """The C library with every function the child calls already looked up: ctypes caches
    them on the handle, so the forked child never enters the dynamic loader (whose lock
    another thread may have held at the fork)."""
    lib = ctypes.CDLL(None, use_errno=True)
    for name in ("unshare", "setns", "mount", "syscall", "prctl", "capset"):
        getattr(lib, name)
    return lib


def _check(ret: int, what: str) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return ret


def _b(path: str) -> bytes:
    return os.fsencode(path)


def unshare(flags: int) -> None:
    _check(libc().unshare(ctypes.c_int(flags)), "unshare")


def setns(fd: int, nstype: int) -> None:
    _check(libc().setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None):
    _check(
        libc().mount(
            None if source is None else _b(source),
            _b(target),
            None if fstype is None else _b(fstype),
            ctypes.c_ulong(flags),
            None if data is None else _b(data),
        ),
        f"mount {target}",
    )


def mount_setattr_recursive_readonly(path: str) -> None:
    """The whole tree under `path` read-only in one system call (Linux >= 5.12)."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    _check(
        libc().syscall(
            ctypes.c_long(SYS_MOUNT_SETATTR),
            ctypes.c_long(AT_FDCWD),
            _b(path),
            ctypes.c_uint(AT_RECURSIVE),
            ctypes.byref(attr),
            ctypes.c_size_t(ctypes.sizeof(attr)),
        ),
        "mount_setattr",
    )


def open_tree_clone(path: str) -> int:
    """A detached copy of the mount tree at `path` (Linux >= 5.2), to attach elsewhere."""
    flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE
    return _check(
        libc().syscall(
            ctypes.c_long(SYS_OPEN_TREE), ctypes.c_long(AT_FDCWD), _b(path), ctypes.c_uint(flags)
        ),
        f"open_tree {path}",
    )


def move_mount(fd: int, target: str) -> None:
    _check(
        libc().syscall(
            ctypes.c_long(SYS_MOVE_MOUNT),
            ctypes.c_long(fd),
            b"",
            ctypes.c_long(AT_FDCWD),
            _b(target),
            ctypes.c_uint(MOVE_MOUNT_F_EMPTY_PATH),
        ),
        f"move_mount {target}",
    )


def prctl(option: int, arg: int = 0) -> None:
    _check(
        libc().prctl(
            ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        ),
        f"prctl {option}",
    )  # fmt: skip


def clear_capabilities() -> None:
    """Empty effective, permitted and inheritable sets (lowering needs no privilege)."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = _CapDataPair()
    _check(libc().capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def drop_bounding_set(cap_last: int) -> None:
    """Empty this thread's capability bounding set (needs CAP_SETPCAP): what it forks can
    never gain a capability at exec, whatever else it keeps until then."""
    for cap in range(cap_last + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError as exc:
            if exc.errno != errno.EINVAL:  # EINVAL: a capability this kernel lacks
                raise


def _unescape(field_: str) -> str:
    """Mount points in /proc/self/mountinfo escape space, tab, newline and backslash."""
    out, i = [], 0
    while i < len(field_):
        if field_[i] == "\\" and field_[i + 1 : i + 4].isdigit():
            out.append(chr(int(field_[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field_[i])
            i += 1
    return "".join(out)


def remount_each_readonly(skip: str) -> None:
    """Fallback for kernels without mount_setattr: one remount per mount point, keeping the
    flags the kernel would otherwise refuse to drop (nosuid, nodev, noexec)."""
    with open("/proc/self/mountinfo") as f:
        lines = f.read().splitlines()
    for line in lines:
        parts = line.split()
        target, opts = _unescape(parts[4]), parts[5].split(",")
        if target == skip:
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for name, bit in (("nosuid", MS_NOSUID), ("nodev", MS_NODEV), ("noexec", MS_NOEXEC)):
            if name in opts:
                flags |= bit
        try:
            mount(None, target, None, flags, None)
        except OSError:
            continue  # a mount we cannot remount (gone meanwhile, or locked): left as is


@dataclass(frozen=True)
class Exposure:
    """A directory the bot's uid cannot traverse (e.g. /root, mode 0700) covered, in the
    bot's own mount namespace, by an empty tmpfs into which only `names` (e.g. `.pyenv`, an
    interpreter's prefix) are bound again: the bot reaches what it needs, nothing else."""

    directory: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class Confinement:
    """What the forked child does to itself before it execs the bot (all computed in the
    parent: the child only makes system calls)."""

    parent_pid: int
    cwd: str
    cgroup_procs: tuple[str, ...] = ()
    rlimits: tuple[tuple[int, tuple[int, int]], ...] = ()
    cpu_affinity: tuple[int, ...] | None = None
    new_net: bool = False
    #: with new_net: an empty network namespace to join (an open fd the child keeps until
    #: then) instead of creating one; see hostres.NetnsCache
    netns_fd: int | None = None
    new_mount: bool = False
    scratch: str | None = None  # gets a tmpfs of tmpfs_mb owned by `owner` (new_mount only)
    tmpfs_mb: int = 64
    owner: int = 0
    exposures: tuple[Exposure, ...] = ()
    #: directories bound back read-write (nosuid, nodev) into the read-only tree (new_mount)
    writable: tuple[str, ...] = ()
    uid: int | None = None  # switch to this uid (and gid), no supplementary groups
    drop_capabilities: bool = False  # empty bounding set (needs root), then no capabilities
    cap_last: int = 40
    #: the process that forks the child emptied its own bounding set already (the spawner
    #: does it once, at its first bot), so the child inherits it empty and skips the drop
    bounding_set_empty: bool = False

    def __post_init__(self) -> None:
        libc()  # in the parent, before the fork (see libc)

    def enter(self) -> None:
        """Runs in the child after fork, before exec. A failure is also written to the
        child's stderr (the probe of what the machine gives reads it there)."""
        try:
            self._enter()
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.write(2, f"arena sandbox: {exc}\n".encode(errors="replace"))
            raise

    def _enter(self) -> None:
        pid = os.getpid()
        # first the cgroup, so that everything after (the tmpfs pages) is charged to it
        for procs in self.cgroup_procs:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, str(pid).encode())
            finally:
                os.close(fd)
        for res, limit in self.rlimits:
            resource.setrlimit(res, limit)
        if self.cpu_affinity:
            os.sched_setaffinity(0, self.cpu_affinity)
        # the least timer slack (1 ns, inherited by its threads and children): the bot's
        # sleeps end when they should, not up to 50 us later; what delays its wake-up beyond
        # that is run-queue wait, which the fair clocks count as the host's (docs/security.md)
        prctl(PR_SET_TIMERSLACK, 1)
        join_net = self.new_net and self.netns_fd is not None
        if join_net:
            assert self.netns_fd is not None
            setns(self.netns_fd, CLONE_NEWNET)
        new_net = self.new_net and not join_net
        flags = (CLONE_NEWNET if new_net else 0) | (CLONE_NEWNS if self.new_mount else 0)
        if flags:
            unshare(flags)
        if self.new_mount:
            self._mounts()
        if self.drop_capabilities and not self.bounding_set_empty:
            # the bounding set needs CAP_SETPCAP, so it goes before the uid switch clears it
            drop_bounding_set(self.cap_last)
        if self.uid is not None:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        if self.drop_capabilities:
            prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
            clear_capabilities()
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        # after the uid switch: it would fail for a directory the bot's uid cannot enter,
        # and the scratch directory shows its tmpfs only when entered after the mount
        os.chdir(self.cwd)
        # last: a change of uid clears it. It fires when the thread that forked us exits,
        # which is why the launcher forks from trio's (main) thread, never a worker thread.
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != self.parent_pid:
            os.kill(pid, signal.SIGKILL)  # the arena died before the signal was armed

    def _mounts(self) -> None:
        # private propagation first: nothing done below may leak to the machine's mounts
        mount(None, "/", None, MS_REC | MS_PRIVATE, None)
        for exp in self.exposures:
            trees = [open_tree_clone(os.path.join(exp.directory, n)) for n in exp.names]
            try:
                opts = "size=16k,mode=0755"
                mount("arena-cover", exp.directory, "tmpfs", MS_NOSUID | MS_NODEV, opts)
                for name, fd in zip(exp.names, trees, strict=True):
                    target = os.path.join(exp.directory, name)
                    if os.path.isdir(f"/proc/self/fd/{fd}"):
                        os.mkdir(target, 0o755)
                    else:
                        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
                    move_mount(fd, target)
            finally:
                for fd in trees:
                    os.close(fd)
        try:
            mount_setattr_recursive_readonly("/")
        except OSError as exc:
            if exc.errno not in (errno.ENOSYS, errno.EINVAL):
                raise
            remount_each_readonly(skip=self.scratch or "")
        for path in self.writable:
            # a bind mount copies the read-only flag of the tree it comes from: remount it
            mount(path, path, None, MS_BIND, None)
            mount(None, path, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV, None)
        if self.scratch is not None:
            opts = f"size={self.tmpfs_mb}m,mode=0700,uid={self.owner},gid={self.owner}"
            mount("arena-tmp", self.scratch, "tmpfs", MS_NOSUID | MS_NODEV, opts)


#: the bot's file descriptors from 3 up to this are closed before it execs
MAX_FD = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1 << 16


def fork_child(
    argv: list[str],
    candidates: tuple[bytes, ...],
    env: dict[str, str],
    plan: Confinement,
    std: tuple[int, int, int],
    report: int,
) -> int:
    """Fork this process into a confined child that execs `argv` (`exec_child`); its pid.
    The collector stays off around the fork: a collection in the child would touch (and so
    copy) every object of the arena's heap."""
    gc_enabled = gc.isenabled()
    gc.disable()
    try:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            exec_child(argv, candidates, env, plan, std, report)
    finally:
        if gc_enabled:
            gc.enable()
    return pid


def exec_child(
    argv: list[str],
    candidates: tuple[bytes, ...],
    env: dict[str, str],
    plan: Confinement,
    std: tuple[int, int, int],
    report: int,
) -> None:
    """In the forked child (of the arena or of its spawner, arena/sandbox/zygote.py):
    standard streams, default signals, own session, confinement, exec. Any failure is
    reported on `report` (close-on-exec, so an exec closes it empty) and the child exits; it
    never returns into the arena's code."""
    step = "confine"
    try:
        for target, fd in enumerate(std):
            os.dup2(fd, target)
        low = 3
        for keep in sorted({report, plan.netns_fd or report}):
            os.closerange(low, keep)
            low = keep + 1
        os.closerange(low, MAX_FD)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # ignored by Python, not by the bot
            signal.signal(sig, signal.SIG_DFL)
        os.setsid()
        plan.enter()
        step = "exec"
        error: OSError | None = None
        for path in candidates:
            try:
                os.execve(path, argv, env)
            except OSError as exc:
                if error is None or exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                    error = exc
        raise error or OSError(errno.ENOENT, "no such file")
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            number = exc.errno if isinstance(exc, OSError) and exc.errno else 0
            text = exc.strerror if step == "exec" and isinstance(exc, OSError) else exc
            os.write(report, f"{step}:{number}:{text}".encode(errors="replace")[:4000])
    finally:
        os._exit(127)
