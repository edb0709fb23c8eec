"""Per-bot control groups: count, limit and kill a bot's whole process tree.

A process group is not enough to contain a hostile bot: a child that calls `setsid` leaves it,
and `RLIMIT_NPROC` is per user, not per bot. A cgroup follows every descendant whatever it
does, so it is what limits the number of processes and the memory of the tree, tells us that
the memory limit was hit, and kills the tree at the end.

Machines differ: pure cgroup v2 (controllers in /sys/fs/cgroup), the hybrid layout (v1
controllers in /sys/fs/cgroup/<controller>, an empty v2 tree in /sys/fs/cgroup/unified), or
no writable cgroup at all (unprivileged, some containers). `CgroupSystem.detect()` finds what
the machine gives and `BotCgroup` uses whichever parts exist; the process launcher falls back
to rlimits and a kill by user id when nothing can be created.

The CPU controller caps the CPU the whole tree may use (`Limits.cpus`, docker's `--cpus`): a
bot that runs many busy processes would otherwise take every core of the machine and starve the
bots of the other games, whose late replies would then void their games as host stalls. The cap
is a quota per period of the kernel's default 100 ms (v2 `cpu.max`, v1 `cpu.cfs_quota_us`), the
same as docker's; its throttling is the bot's own doing and is read as such by the accounting
(`cpu.stat`: v2 `throttled_usec`, v1 `throttled_time`). Where no CPU controller can be had the
bot is not capped, and the capability report and the record say so.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.sandbox.cpuacct import CpuCounters

CGROUP_ROOT = Path("/sys/fs/cgroup")
#: the CPU quota's period (µs): the kernel's default for a new cgroup, v1 and v2, and docker's
CPU_PERIOD_US = 100_000


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per hierarchy: controller name (or "" for v2) -> path."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            parts = line.split(":", 2)
            if len(parts) != 3:
                continue
            _, controllers, path = parts
            if controllers == "":
                paths[""] = path
            for c in controllers.split(","):
                if c:
                    paths[c] = path
    return paths


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


@dataclass(frozen=True)
class CgroupSystem:
    """Where this process may create per-bot cgroups, per feature (None = not available).

    `v2` is a v2 directory (pure v2 or the hybrid's unified tree) giving membership and
    `cgroup.kill`; `memory`/`pids`/`freezer` are the directories whose files set each limit,
    and `memory_v2`/`pids_v2` say whether they use v2 file names.
    """

    v2: Path | None = None
    memory: Path | None = None
    memory_v2: bool = False
    pids: Path | None = None
    pids_v2: bool = False
    freezer: Path | None = None
    notes: tuple[str, ...] = field(default=())
    #: v1 cpuacct, for the CPU accounting of bots (arena/sandbox/cpuacct.py) where no v2
    #: directory counts CPU time (a v2 `cpu.stat`); a hybrid machine's unified tree does
    cpuacct: Path | None = None
    #: the CPU controller, for the per-bot CPU cap (`Limits.cpus`): `cpu_v2` says v2 (`cpu.max`
    #: in the v2 directory, `cpu` is then `v2`), else v1 (`cpu.cfs_quota_us`)
    cpu: Path | None = None
    cpu_v2: bool = False

    @property
    def usable(self) -> bool:
        return any(
            p is not None
            for p in (self.v2, self.memory, self.pids, self.freezer, self.cpuacct, self.cpu)
        )

    def describe(self) -> str:
        parts = []
        if self.v2 is not None:
            parts.append("cgroup v2 membership/kill")
        if self.memory is not None:
            parts.append(f"memory ({'v2' if self.memory_v2 else 'v1'})")
        if self.pids is not None:
            parts.append(f"pids ({'v2' if self.pids_v2 else 'v1'})")
        if self.freezer is not None:
            parts.append("freezer (v1)")
        if self.counts_cpu:
            parts.append("CPU accounting (" + ("v2" if self.cpuacct is None else "v1") + ")")
        if self.cpu is not None:
            parts.append(f"CPU cap ({'v2' if self.cpu_v2 else 'v1'})")
        return ", ".join(parts) if parts else "no cgroup (" + "; ".join(self.notes) + ")"

    @property
    def counts_cpu(self) -> bool:
        """A bot's cgroup counts its CPU time (v2 cpu.stat, or v1 cpuacct)."""
        return self.cpuacct is not None or (self.v2 is not None and (self.v2 / "cpu.stat").exists())

    @classmethod
    def detect(cls, root: Path = CGROUP_ROOT) -> CgroupSystem:
        """Probe the machine: which cgroup directories can we create children in?"""
        if os.environ.get("ARENA_NO_CGROUP"):
            return cls(notes=("disabled by ARENA_NO_CGROUP",))
        own = _own_paths()
        notes: list[str] = []
        v2 = memory = pids = freezer = cpuacct = cpu = None
        memory_v2 = pids_v2 = cpu_v2 = False
        # pure v2: the root is itself a cgroup2 mount with cgroup.controllers
        if (root / "cgroup.controllers").exists():
            base = root / own.get("", "/").lstrip("/")
            if _writable_dir(base):
                v2 = base
                controllers = set(_read(base / "cgroup.controllers").split())
                enabled = set(_read(base / "cgroup.subtree_control").split())
                for c in ("memory", "pids", "cpu"):
                    if c in controllers and c not in enabled:
                        try:
                            (base / "cgroup.subtree_control").write_text(f"+{c}")
                            enabled.add(c)
                        except OSError as exc:
                            notes.append(f"cannot enable {c} controller: {exc.strerror}")
                if "memory" in enabled:
                    memory, memory_v2 = base, True
                if "pids" in enabled:
                    pids, pids_v2 = base, True
                if "cpu" in enabled:
                    cpu, cpu_v2 = base, True
                else:
                    notes.append("no cpu controller: bots are not CPU-capped")
            else:
                notes.append(f"{base} is not writable")
        else:
            unified = root / "unified"
            if (unified / "cgroup.controllers").exists():
                base = unified / own.get("", "/").lstrip("/")
                if _writable_dir(base):
                    v2 = base
            for name in ("memory", "pids", "freezer", "cpuacct", "cpu"):
                if name == "cpuacct" and v2 is not None and (v2 / "cpu.stat").exists():
                    continue  # the unified tree counts CPU time: one directory less per bot
                d = root / name / own.get(name, "/").lstrip("/")
                if name in ("cpu", "cpuacct"):
                    # often mounted together (cpu,cpuacct with two links to it): one
                    # directory per bot then, however many names it has
                    d = Path(os.path.realpath(d))
                if _writable_dir(d):
                    if name == "memory":
                        memory = d
                    elif name == "pids":
                        pids = d
                    elif name == "cpuacct":
                        cpuacct = d
                    elif name == "cpu":
                        cpu = d if (d / "cpu.cfs_quota_us").exists() else None
                    else:
                        freezer = d
                elif (root / name).is_dir():
                    notes.append(f"{d} is not writable")
            if not (root / "memory").is_dir() and v2 is None:
                notes.append(f"no cgroup hierarchy under {root}")
            if cpu is None:
                notes.append("no cpu controller: bots are not CPU-capped")
        return cls(
            v2, memory, memory_v2, pids, pids_v2, freezer, tuple(notes), cpuacct, cpu, cpu_v2
        )


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@dataclass
class BotCgroup:
    """The cgroup(s) of one bot: one directory per hierarchy the machine gives us.

    Blocking file I/O on a pseudo-filesystem; each call is microseconds, so the launcher
    calls these directly rather than through a thread. Plain `os` calls on strings: this runs
    for every bot, and pathlib's objects cost more than the system calls themselves.
    """

    system: CgroupSystem
    dirs: dict[str, Path] = field(default_factory=dict)
    #: the v2 `cgroup.kill` file, where the kernel has one (found at creation)
    kill_file: str | None = None
    #: a write to `kill_file` succeeded: every process of the tree is dead and no new one
    #: can join it (the kernel handles forks racing the kill; a bot cannot write cgroup.procs)
    killed: bool = False
    #: the CPUs the tree may use at once, as set (None: not capped, see `cap_note`)
    cpu_cap: float | None = None
    #: why the tree is not CPU-capped, when it is not
    cap_note: str = ""

    @classmethod
    def create(
        cls, system: CgroupSystem, memory_bytes: int, pids_max: int, cpus: float | None = None
    ) -> BotCgroup:
        """Make the directories and set the limits (`cpus`: the CPU cap, None for none);
        raises OSError on failure. A CPU cap the kernel refuses (v1 wants it within its
        parent's) leaves the bot uncapped rather than without a cgroup: `cap_note` says why."""
        name = f"arena-{os.getpid()}-{os.urandom(4).hex()}"
        cg = cls(system)
        try:
            if system.v2 is not None:
                d = system.v2 / name
                os.mkdir(d)
                cg.dirs["v2"] = d
                kill = f"{d}/cgroup.kill"
                if os.path.exists(kill):
                    cg.kill_file = kill
            for key, parent in (
                ("memory", system.memory),
                ("pids", system.pids),
                ("freezer", system.freezer),
                ("cpuacct", system.cpuacct),
                ("cpu", system.cpu if cpus is not None and not system.cpu_v2 else None),
            ):
                if parent is None:
                    continue
                # the v1 freezer only serves `kill`, which cgroup.kill does in one write where
                # the kernel has it: then one directory (one join, one removal) less
                if key == "freezer" and cg.kill_file is not None:
                    continue
                d = parent / name
                if d not in cg.dirs.values():
                    os.mkdir(d)
                cg.dirs[key] = d
            if system.memory is not None:
                d = cg.dirs["memory"]
                if system.memory_v2:
                    _write(f"{d}/memory.max", str(memory_bytes))
                    with contextlib.suppress(OSError):
                        _write(f"{d}/memory.swap.max", "0")
                else:
                    _write(f"{d}/memory.limit_in_bytes", str(memory_bytes))
                    with contextlib.suppress(OSError):
                        _write(f"{d}/memory.memsw.limit_in_bytes", str(memory_bytes))
            if system.pids is not None:
                _write(f"{cg.dirs['pids']}/pids.max", str(pids_max))
            if cpus is not None:
                cg._cap(cpus)
        except OSError:
            cg.remove()
            raise
        return cg

    def _cap(self, cpus: float) -> None:
        """The CPU quota: `cpus` x the period, per period (one write)."""
        system = self.system
        if system.cpu is None:
            self.cap_note = "no cpu controller"
            return
        quota = max(1000, round(cpus * CPU_PERIOD_US))
        try:
            if system.cpu_v2:
                _write(f"{self.dirs['v2']}/cpu.max", f"{quota} {CPU_PERIOD_US}")
            else:  # a new v1 cgroup's period is the default, CPU_PERIOD_US
                _write(f"{self.dirs['cpu']}/cpu.cfs_quota_us", str(quota))
        except OSError as exc:
            self.cap_note = f"CPU quota refused: {exc.strerror}"
            return
        self.cpu_cap = quota / CPU_PERIOD_US

    def add(self, pid: int) -> None:
        """Move a (not yet running) process into every hierarchy."""
        for d in set(self.dirs.values()):
            _write(f"{d}/cgroup.procs", str(pid))

    def procs_files(self) -> tuple[str, ...]:
        """The files a process writes its own pid to, to join every hierarchy (the bot's
        child does it itself before exec, so it is never outside its cgroup)."""
        return tuple(f"{d}/cgroup.procs" for d in set(self.dirs.values()))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in set(self.dirs.values()):
            for line in _read_str(f"{d}/cgroup.procs").split():
                with contextlib.suppress(ValueError):
                    found.add(int(line))
        return found

    def cpu_counters(self) -> CpuCounters | None:
        """Kept descriptors on this cgroup's CPU accounting (v2 cpu.stat where it counts
        CPU, else v1 cpuacct) and, where the tree is capped, on its throttling by its own
        quota (`cpu.stat` of the CPU controller's directory); None if no counter is there or
        opens."""
        from arena.sandbox.cpuacct import CpuCounters

        throttle: tuple[str | None, bool] = (None, False)
        if self.cpu_cap is not None:
            if self.system.cpu_v2:
                throttle = (f"{self.dirs['v2']}/cpu.stat", True)
            else:
                throttle = (f"{self.dirs['cpu']}/cpu.stat", False)
        v2 = self.dirs.get("v2")
        try:
            if v2 is not None and os.path.exists(f"{v2}/cpu.stat"):
                counters = CpuCounters(
                    "cgroup v2", f"{v2}/cpu.stat", True, f"{v2}/cgroup.threads", *throttle
                )
            elif (v1 := self.dirs.get("cpuacct")) is not None:
                counters = CpuCounters(
                    "cgroup v1", f"{v1}/cpuacct.usage", False, f"{v1}/tasks", *throttle
                )
            else:
                return None
        except OSError:
            return None
        counters.cap = self.cpu_cap
        return counters

    def memory_exceeded(self) -> bool:
        """Did the kernel OOM-kill something in this cgroup (or refuse it memory)?"""
        d = self.dirs.get("memory")
        if d is None:
            return False
        if self.system.memory_v2:
            return _kv(_read_str(f"{d}/memory.events")).get("oom_kill", 0) > 0
        return _kv(_read_str(f"{d}/memory.oom_control")).get("oom_kill", 0) > 0

    def kill(self) -> None:
        """SIGKILL every process in the cgroup, fork bombs included."""
        if self.killed:
            return  # cgroup.kill did it once and for all
        if self.kill_file is not None:
            with contextlib.suppress(OSError):
                _write(self.kill_file, "1")
                self.killed = True
                return
        freezer = self.dirs.get("freezer")
        if freezer is not None:
            # frozen processes cannot fork, so one pass over cgroup.procs gets them all
            with contextlib.suppress(OSError):
                (freezer / "freezer.state").write_text("FROZEN")
            self._kill_listed()
            with contextlib.suppress(OSError):
                (freezer / "freezer.state").write_text("THAWED")
            return
        for _ in range(100):
            if not self._kill_listed():
                break

    def _kill_listed(self) -> bool:
        pids = self.pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return bool(pids)

    def remove(self) -> bool:
        """Remove the directories; False if some still hold processes (try again later)."""
        ok = True
        for d in set(self.dirs.values()):
            try:
                os.rmdir(d)
            except FileNotFoundError:
                pass
            except OSError as exc:
                if exc.errno in (errno.EBUSY, errno.ENOTEMPTY):
                    ok = False
                else:
                    raise
        return ok


def _write(path: str, text: str) -> None:
    """A control file written with one open, one write and one close."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _read_str(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _kv(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


_NAME = re.compile(r"arena-(\d+)-[0-9a-f]+")


def sweep_stale(system: CgroupSystem) -> int:
    """Kill and remove the bot cgroups of arenas that died without cleaning up (a crash, a
    SIGKILL), so their bots do not run on forever. Returns how many directories went."""
    removed = 0
    parents = {
        p
        for p in (system.v2, system.memory, system.pids, system.freezer, system.cpuacct, system.cpu)
        if p
    }
    for parent in parents:
        try:
            children = list(parent.iterdir())
        except OSError:
            continue
        for d in children:
            m = _NAME.fullmatch(d.name)
            if m is None or not d.is_dir():
                continue
            try:
                os.kill(int(m.group(1)), 0)
                continue  # its arena still runs (or the pid was reused: leave it alone)
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
            stale = BotCgroup(system, {"v2" if parent == system.v2 else "dir": d})
            for _ in range(10):
                stale._kill_listed()
                try:
                    d.rmdir()
                    removed += 1
                    break
                except OSError:
                    continue
    return removed
