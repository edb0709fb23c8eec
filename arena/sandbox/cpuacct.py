"""A bot's CPU accounting as the kernel keeps it: what the referee's blame is measured from.

For every reply the referee needs the CPU time of all the bot's tasks and, per task, how long it
was runnable but waiting for a CPU (arena/referee/blame.py). Both come from the bot's own
cgroup, which every descendant is in whatever it does (a bot has no capability to leave it):

- CPU time: the cgroup's counter (v2 `cpu.stat` usage_usec, v1 `cpuacct.usage`), which keeps
  the time of tasks that have exited, so a helper cannot burn CPU and vanish before the reply;
- the tasks: the cgroup's thread list (v2 `cgroup.threads`, v1 `tasks`), and for each task its
  scheduler statistics, /proc/<tid>/schedstat (CPU ns, run-queue wait ns, time slices);
- throttling by the bot's own CPU quota (docker's `--cpus`): v1 `cpu.stat` throttled_time,
  v2 `cpu.stat` throttled_usec, where the cgroup has one.

Not the cgroup's CPU pressure (`cpu.pressure`, v2 and this machine's hybrid unified tree): its
`full` total is a per-CPU state averaged over the CPUs, weighted by each CPU's non-idle time
counted in jiffies, so a sample every few milliseconds loses what happened below a jiffy and a
bot with one task stalled on one CPU and one running on another reads as half stalled. The
per-task statistics are exact to the nanosecond and the blame bounds them soundly.

Without a cgroup of its own (ARENA_NO_CGROUP, an unprivileged arena) nothing is counted: a
process that starts and ends inside one reply could not be seen by any scan of /proc, and its
CPU time would be missing. The referee then keeps the wall clock's plain rule and the record says
so (`accounting: "none"`).

Reads are one `pread` on a descriptor kept open for the bot's life (the per-reply cost is
measured in benchmarks/referee.py); a bot with more than MAX_TASKS tasks has the waits of the
first MAX_TASKS read, which can only lower what is forgiven to it, never raise it.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

#: the tasks whose run-queue wait is read per reply (the rest count by their CPU time only)
MAX_TASKS = 32

_RDONLY = os.O_RDONLY | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Sample:
    """The counters at one moment (nanoseconds)."""

    cpu: int
    throttled: int
    #: tid -> (CPU ns, run-queue wait ns)
    tasks: dict[int, tuple[int, int]]
    #: `tasks` are all the bot's tasks at that moment: one missing from them and present later
    #: was born since (at 0). False past MAX_TASKS.
    complete: bool = True


#: the counters as read, not parsed (`CpuCounters.snapshot`): the cgroup's CPU file (for a
#: lean snapshot, the anchor it is derived from: cgroup ns and the task's own ns read together),
#: its throttling file (b"": none), the tids read and each one's schedstat (b"": unreadable),
#: and whether the tids are all the bot's tasks (a lean snapshot's, once `confirm`ed)
Raw = tuple[bytes | tuple[int, int], bytes, tuple[int, ...], list[bytes], bool]

#: CPU time (ns) the cgroup may count beyond its one task's between two samples before the
#: bot is taken to have other tasks (the cgroup's counter is read in whole microseconds, and a
#: tick may land between the reads of one sample)
LEAN_SLACK = 50_000
#: lean reads between two full ones, which check the anchor and move it (so a bot whose helpers
#: come and go between requests is read in full after at most this many requests)
LEAN_RUN = 16


class CpuCounters:
    """Kept descriptors on one bot's counters. `snapshot()` or `sample()` at any moment,
    `close()` once.

    Under the wall clock a bot that is one task (most are) is read *lean* at request time:
    that task's schedstat alone, without the cgroup's CPU file (the dearest read), whose figure
    is derived from an *anchor*: the cgroup's counter and the task's, read together at an
    earlier full sample; and the listing only if the reply is not there the moment the request
    is written (`confirm`: a reply read at once is never judged unless the referee itself was
    held up, and then a task born since gets no credit). Its tasks are then known as exactly as
    in a full read (a task born since is at 0); the derived CPU figure can only be low (what
    other tasks that came and went since the anchor used is missing from it), so the CPU
    measured over the reply can only be high and nothing more is ever forgiven. Every full
    sample (a judged reply's, and at least every LEAN_RUN requests) checks that the cgroup
    counted nothing beyond the one task since the anchor and moves the anchor there; once it
    counted more, or the bot is listed with another task, or its CPU quota throttled it since
    the anchor, it is read in full from then on. A lean read's throttling figure is the
    anchor's: it can only be low, so the throttling measured over the reply (subtracted from
    the host's share) can only be high, and nothing more is forgiven either."""

    def __init__(
        self,
        source: str,
        cpu_path: str,
        cpu_v2: bool,
        tasks_path: str,
        throttle_path: str | None = None,
        throttle_v2: bool = False,
    ) -> None:
        #: what the record names as the source of the figures
        self.source = source
        #: the CPUs the bot's tree may use at once (its cgroup's quota), None: not capped
        self.cap: float | None = None
        self._cpu_v2 = cpu_v2
        self._throttle_v2 = throttle_v2
        self._cpu_fd: int | None = None
        self._tasks_fd: int | None = None
        self._throttle_fd: int | None = None
        #: the last listing read, and the tids it names (at most MAX_TASKS) with a kept
        #: descriptor on each one's schedstat (-1: it could not be opened)
        self._listed: bytes | None = None
        self._tids: tuple[int, ...] = ()
        self._fds: tuple[int, ...] = ()
        #: lean reads: (tid, its descriptor, cgroup ns, its ns, the listing) of one full sample
        self._anchor: tuple[int, int, int, int, bytes] | None = None
        self.lean_ok = True
        self._lean_left = 0  # lean reads before the next full one
        self._lean_cpu: tuple[int, int] = (0, 0)  # the anchor's figures, as a lean read gives them
        self._lean_throttle = b""  # the anchor's throttling file, as read
        self._anchor_throttled = 0  # and its figure (ns)
        self._lean_tids: tuple[int, ...] = ()
        try:
            self._cpu_fd = os.open(cpu_path, _RDONLY)
            self._tasks_fd = os.open(tasks_path, _RDONLY)
            if throttle_path is not None:
                self._throttle_fd = os.open(throttle_path, _RDONLY)
        except OSError:
            self.close()
            raise

    def snapshot(self, lean: bool = False) -> Raw | None:
        """The counters now, as read: what a request takes before its reply, since most
        replies are never judged and the parsing is left to those that are (`parse`). One
        `pread` per file, and with `lean` only the one task's (see the class); the listing is
        parsed again only when it changed. None once the counters cannot be read (the cgroup
        is gone)."""
        if lean and self._lean_left > 0 and self._anchor is not None:
            try:
                stat = os.pread(self._anchor[1], 128, 0)
            except OSError:  # it is gone: read the whole cgroup
                self._drop_lean()
            else:
                self._lean_left -= 1
                return self._lean_cpu, self._lean_throttle, self._lean_tids, [stat], False
        raw = self._read()
        if raw is not None and lean and self.lean_ok:
            self._anchor_on(raw)
        return raw

    def _read(self) -> Raw | None:
        cpu_fd, tasks_fd = self._cpu_fd, self._tasks_fd
        if cpu_fd is None or tasks_fd is None:
            return None
        pread = os.pread
        try:
            cpu = pread(cpu_fd, 256, 0)
            listed = pread(tasks_fd, 4096, 0)
        except OSError:
            return None
        if listed != self._listed:
            self._relist(listed)
        stats = []
        for fd in self._fds:
            try:
                stats.append(pread(fd, 128, 0))
            except OSError:  # the task exited: its CPU time stays in the cgroup's counter
                stats.append(b"")
                self._listed = None  # a tid may come back as another task: open afresh
        throttled = b""
        if self._throttle_fd is not None:
            with contextlib.suppress(OSError):
                throttled = pread(self._throttle_fd, 1024, 0)
        return cpu, throttled, self._tids, stats, len(self._tids) < MAX_TASKS

    def confirm(self, raw: Raw) -> Raw:
        """A lean snapshot whose reply is not there yet: read the listing now. Still the one
        task: every task alive when the snapshot was taken is that one or has exited since
        (its CPU time is the cgroup's, not in the derived figure: so only ever more CPU time
        for the reply), so a task listed later was born since, at 0. Any other listing: the
        snapshot stays incomplete (a task not in it gets no credit) and the bot is read in
        full from now on. (A reply read the moment its request was written needs no listing.)"""
        anchor = self._anchor
        if raw[4] or not isinstance(raw[0], tuple) or anchor is None or self._tasks_fd is None:
            return raw
        try:
            if os.pread(self._tasks_fd, 4096, 0) == anchor[4]:
                return raw[0], raw[1], raw[2], raw[3], True
        except OSError:
            pass
        self._drop_lean()
        return raw

    def _anchor_on(self, raw: Raw, now: Sample | None = None) -> None:
        """Check the anchor against a full sample (the cgroup counted nothing beyond the one
        task since) and move it there; else, or if the bot is not one task, read it in full
        from now on."""
        cpu_raw, throttle_raw, tids, stats, _ = raw
        listed = self._listed
        if len(tids) != 1 or not stats[0] or listed is None or isinstance(cpu_raw, tuple):
            self._drop_lean()
            return
        cpu = now.cpu if now is not None else self._cpu_ns(cpu_raw)
        own = int(stats[0].split()[0])
        throttled = now.throttled if now is not None else self._throttled(throttle_raw)
        anchor = self._anchor
        if anchor is not None and (
            anchor[0] != tids[0]
            or (cpu - anchor[2]) - (own - anchor[3]) > LEAN_SLACK
            or throttled != self._anchor_throttled
        ):
            # the cgroup counted another task's time (it has others), or the bot reached
            # its CPU quota: read in full
            self._drop_lean()
            return
        self._anchor = (tids[0], self._fds[0], cpu, own, listed)
        self._lean_cpu, self._lean_tids = (cpu, own), (tids[0],)
        self._lean_throttle, self._anchor_throttled = throttle_raw, throttled
        self._lean_left = LEAN_RUN

    def _drop_lean(self) -> None:
        self._anchor = None
        self.lean_ok = False

    def _relist(self, listed: bytes) -> None:
        """Keep a descriptor on the schedstat of every task listed (the first MAX_TASKS)."""
        old = dict(zip(self._tids, self._fds, strict=True))
        tids: list[int] = []
        fds: list[int] = []
        for word in listed.split()[:MAX_TASKS]:
            tid = int(word)
            fd = old.pop(tid, -1)
            if fd < 0 or self._listed is None:  # after a failed read: the tid may be reused
                if fd >= 0:
                    os.close(fd)
                try:
                    fd = os.open(f"/proc/{tid}/schedstat", _RDONLY)
                except OSError:
                    fd = -1
            tids.append(tid)
            fds.append(fd)
        for fd in old.values():
            if fd >= 0:
                os.close(fd)
        self._listed, self._tids, self._fds = listed, tuple(tids), tuple(fds)
        anchor = self._anchor
        if anchor is not None:  # its descriptor may have been opened afresh, or closed
            if anchor[0] in tids and fds[tids.index(anchor[0])] >= 0:
                self._anchor = (anchor[0], fds[tids.index(anchor[0])], *anchor[2:])
            else:
                self._drop_lean()

    def _cpu_ns(self, cpu_raw: bytes) -> int:
        if self._cpu_v2:  # "usage_usec N\n..."
            return int(cpu_raw.split(None, 2)[1]) * 1000
        return int(cpu_raw)

    def parse(self, raw: Raw) -> Sample:
        """The figures of a `snapshot`."""
        cpu_raw, throttle_raw, tids, stats, complete = raw
        tasks: dict[int, tuple[int, int]] = {}
        for tid, stat in zip(tids, stats, strict=True):
            if stat:
                words = stat.split()
                tasks[tid] = (int(words[0]), int(words[1]))
        if isinstance(cpu_raw, tuple):  # lean: the anchor's cgroup time plus the task's since
            cpu, own = cpu_raw
            if tids[0] in tasks:
                cpu += tasks[tids[0]][0] - own
            return Sample(cpu, self._throttled(throttle_raw), tasks, complete)
        return Sample(self._cpu_ns(cpu_raw), self._throttled(throttle_raw), tasks, complete)

    def sample(self) -> Sample | None:
        """The counters now, read in full and parsed; None once they cannot be read. Checks
        the lean reads' anchor (see the class) and moves it here."""
        raw = self._read()
        if raw is None:
            return None
        now = self.parse(raw)
        if self._anchor is not None:
            self._anchor_on(raw, now)
        return now

    def held(self, earlier: Sample, now: Sample, interval: float) -> bool:
        """Is the bot held off the CPU right now: a task of it runnable (state R) while the
        whole bot used under a tenth of the `interval` (seconds) between the two samples? A
        task's run-queue wait only shows in its statistics once it runs again, so a bot
        stalled at the moment the referee looks is seen this way. Busy threads that keep one
        of their own waiting are no stall: the bot's CPU time moves."""
        least = 0.1 * interval * 1e9
        if now.cpu - earlier.cpu >= least:
            return False
        for tid, (cpu, _) in now.tasks.items():
            was = earlier.tasks.get(tid)
            if was is not None and cpu - was[0] >= least:
                continue
            try:
                with open(f"/proc/{tid}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            if stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"R":
                return True
        return False

    def _throttled(self, text: bytes) -> int:
        if not text:
            return 0
        key = b"throttled_usec" if self._throttle_v2 else b"throttled_time"
        for line in text.splitlines():
            name, _, value = line.partition(b" ")
            if name == key:
                return int(value) * (1000 if self._throttle_v2 else 1)
        return 0

    def close(self) -> None:
        for fd in (self._cpu_fd, self._tasks_fd, self._throttle_fd, *self._fds):
            if fd is not None and fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._cpu_fd = self._tasks_fd = self._throttle_fd = None
        self._listed, self._tids, self._fds = None, (), ()
        self._anchor = None


def counters_of(pid: int, own: str, root: str = "/sys/fs/cgroup") -> CpuCounters | None:
    """The counters of the cgroup(s) process `pid` is in, if they are its own: the cgroup's
    path must contain `own` (the bot's cgroup name, the container's id), never a parent that
    other processes share. None when there is no such cgroup or its files cannot be opened."""
    try:
        with open(f"/proc/{pid}/cgroup", "rb") as f:
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        return None
    v2_path = None
    v1: dict[str, str] = {}
    for line in lines:
        _, controllers, path = [*line.split(":", 2), "", ""][:3]
        if own not in path:
            continue
        if controllers == "":
            v2_path = path
        for c in controllers.split(","):
            v1[c] = path
    # the throttling of the bot's own quota: v1 cpu controller, or v2 cpu.stat (below)
    throttle: tuple[str, bool] | None = None
    if "cpu" in v1:
        for mount in ("cpu", "cpu,cpuacct"):
            stat = f"{root}/{mount}{v1['cpu']}/cpu.stat"
            if os.path.exists(stat):
                throttle = (stat, False)
                break
    if v2_path is not None:
        base = root if os.path.exists(f"{root}/cgroup.controllers") else f"{root}/unified"
        d = f"{base}{v2_path}"
        stat = f"{d}/cpu.stat"
        if os.path.exists(stat) and os.path.exists(f"{d}/cgroup.threads"):
            if throttle is None and b"throttled_usec" in _head(stat):
                throttle = (stat, True)
            with contextlib.suppress(OSError):
                return CpuCounters("cgroup v2", stat, True, f"{d}/cgroup.threads", *_t(throttle))
    if "cpuacct" in v1:
        for mount in ("cpuacct", "cpu,cpuacct"):
            d = f"{root}/{mount}{v1['cpuacct']}"
            if os.path.exists(f"{d}/cpuacct.usage"):
                with contextlib.suppress(OSError):
                    usage = f"{d}/cpuacct.usage"
                    return CpuCounters("cgroup v1", usage, False, f"{d}/tasks", *_t(throttle))
    return None


def _t(throttle: tuple[str, bool] | None) -> tuple[str | None, bool]:
    return (None, False) if throttle is None else throttle


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(1024)
    except OSError:
        return b""
