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

This module holds the running bot (`ProcessBot`) and the launcher that puts the layers
together (`ProcessLauncher`); beside it, each concern in its own module: the machine's
capabilities (machine.py, probed once, trio-free so that a command starts the probes before
it imports trio), the fork (spawner.py, with its spawner process zygote.py), what
a bot takes from the host and gives back (hostres.py: scratch directories, uid leases, the
network namespace cache, leftovers by uid, lent directories), and the paths a bot's uid cannot
reach (exposure.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import trio

from arena.sandbox.base import (
    DEFAULT_PATH,
    BotProcess,
    ExitInfo,
    Launcher,
    LaunchError,
    LaunchSpec,
    SandboxFault,
)
from arena.sandbox.cgroups import BotCgroup
from arena.sandbox.confine import Confinement, Exposure
from arena.sandbox.exposure import (
    check_files,
    describe_exposures,
    exposures_for,
    unreachable_paths,
)
from arena.sandbox.hostres import (
    DEFAULT_UID_BASE,
    DEFAULT_UID_COUNT,
    UidLease,
    chown_tree,
    kill_uid,
    make_scratch,
    netns_cache,
    processes_of_uid,
    reclaim_tree,
)
from arena.sandbox.machine import Capabilities, capabilities
from arena.sandbox.pipes import PipeLevel
from arena.sandbox.spawner import Child

#: how long aclose waits for a killed tree to disappear before giving up on its cgroup
CLEANUP_SECONDS = 3.0


class StderrRing:
    """The last `capacity` bytes written to stderr, each part with the tag it was read under.

    A bot that floods stderr must not grow the referee's memory, yet the last lines are what
    explain a crash, so old bytes are dropped and only the tail is kept. The referee tags
    what it reads with the turn in progress (`retag`), so a replay can show each turn's
    lines beside it: a tag is remembered where it starts, and forgotten once its bytes have
    left the tail, so the tags are never more than the bytes kept.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = max(0, capacity)
        self._buf = bytearray()
        self.total = 0
        self.tag: Any = None
        #: (offset in the whole stream where the bytes of `tag` begin, tag), in order
        self._tags: list[tuple[int, Any]] = []

    def retag(self, tag: Any) -> None:
        """Bytes fed from now on belong to `tag`."""
        self.tag = tag

    def feed(self, data: bytes) -> None:
        start = self.total
        self.total += len(data)
        if self.capacity == 0 or not data:
            return
        if not self._tags or self._tags[-1][1] != self.tag:
            self._tags.append((start, self.tag))
        if len(data) >= self.capacity:
            self._buf = bytearray(data[-self.capacity :])
        else:
            self._buf += data
            excess = len(self._buf) - self.capacity
            if excess > 0:
                del self._buf[:excess]
        first = self.total - len(self._buf)
        drop = 0
        while drop + 1 < len(self._tags) and self._tags[drop + 1][0] <= first:
            drop += 1
        if drop:
            del self._tags[:drop]

    def segments(self) -> list[tuple[Any, str]]:
        """The kept tail as (tag, text) parts in order, each decoded leniently."""
        first = self.total - len(self._buf)
        out = []
        for i, (offset, tag) in enumerate(self._tags):
            end = self._tags[i + 1][0] if i + 1 < len(self._tags) else self.total
            part = self._buf[max(offset, first) - first : end - first]
            if part:
                out.append((tag, bytes(part).decode("utf-8", errors="replace")))
        return out

    def text(self) -> str:
        return "".join(text for _, text in self.segments())


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


# -- the running bot -------------------------------------------------------------------------


class ProcessBot(BotProcess):
    """One bot running as a local process tree."""

    def __init__(
        self,
        spec: LaunchSpec,
        proc: Child,
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
        self._stderr_level = PipeLevel()
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

    def tag_stderr(self, tag: Any) -> None:
        """What the bot wrote before now is read under the old tag first: a bot writes its
        stderr lines and then its reply, and the referee, which read the reply at once, may
        move on before the drain task has run. One look at the pipe (arena/sandbox/pipes.py),
        which nearly always finds it empty."""
        stream = self._proc.stderr
        if stream is not None:
            try:
                fd = stream.fileno()
                if self._stderr_level(fd) == 0:  # nearly always: nothing to read
                    self._stderr.retag(tag)
                    return
                for _ in range(4):  # a bounded catch-up; the drain task reads the rest
                    data = os.read(fd, 65536)
                    if not data:
                        break
                    self._stderr.feed(data)
            except (OSError, ValueError):  # empty now (BlockingIOError), or closed
                pass
        self._stderr.retag(tag)

    def stderr_segments(self) -> list[tuple[Any, str]]:
        return self._stderr.segments()

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
        check_files(spec)

    async def start(self, spec: LaunchSpec, nursery: trio.Nursery) -> BotProcess:
        if not spec.command:
            raise LaunchError(f"bot {spec.name}: empty command")
        caps = self.caps
        if caps is None:
            # probed once per process (it runs programs): in a thread the first time only
            probed = capabilities.cache_info().currsize > 0
            caps = capabilities() if probed else await trio.to_thread.run_sync(capabilities)
        workdir = check_files(spec)
        notes: list[str] = []
        lease = None
        exposures: tuple[Exposure, ...] = ()
        if caps.uids:
            lease = UidLease.acquire(self.uid_base, self.uid_count)
            blocked = unreachable_paths(spec, workdir, lease.uid)
            if blocked and caps.mountns:
                # usually an interpreter under /root (pyenv): show the bot just that
                needed = [*blocked, Path(tempfile.gettempdir())]
                exposed = exposures_for(needed, lease.uid)
                if exposed is not None:
                    blocked = []
                    exposures = exposed
                    notes.append("exposed: " + ", ".join(describe_exposures(exposed)))
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
            child = await Child.spawn(list(spec.command), scrubbed_env(spec, cwd, scratch), plan)
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
