"""Measuring one bot's replies for the blame (arena/referee/blame.py).

Per reply, the referee samples the bot's counters (arena/sandbox/cpuacct.py) just before the
request is written and the moment the reply's last byte is read (the same moment its arrival
is stamped), and its own thread's run-queue wait (/proc/thread-self/schedstat) when the request
is written and when the reply is read: that difference is how long the referee was runnable
but off a CPU while the bot's clock ran, its lateness in seeing the reply.

The figures go to the record per reply (docs/record.md): `cpu`, `wait` (runnable wait summed
over the bot's tasks), `late`, `host` (the share forgiven), `charged`, and per turn the
`accounting` source ("cgroup v2", "cgroup v1", or "none": the wall clock's plain rule).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any

from arena.referee.blame import Measures, Verdict, task_stall
from arena.sandbox.cpuacct import CpuCounters, Raw, Sample

NO_ACCOUNTING = "none"


@dataclass(frozen=True, slots=True)
class Account:
    """One reply's measurements and the verdict on them."""

    measures: Measures
    verdict: Verdict

    def fields(self) -> dict[str, float]:
        """The reply's figures as the record keeps them."""
        m = self.measures
        return {
            "cpu": m.cpu if m.cpu is not None else 0.0,
            "wait": m.wait,
            "late": m.late,
            "host": self.verdict.host,
            "charged": self.verdict.charged,
        }

    def facts(self) -> dict[str, Any]:
        """For a failure's record: the figures, rounded."""
        return {k: round(v, 6) for k, v in self.fields().items()}


def open_own_schedstat() -> int | None:
    """A descriptor on the calling thread's scheduler statistics (the referee's event loop:
    the thread that reads every reply), None where the kernel has none. The caller closes it."""
    try:
        return os.open("/proc/thread-self/schedstat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def _delay(schedstat: bytes) -> int:
    """The run-queue wait (ns) in a thread's schedstat, 0 where unreadable."""
    try:
        return int(schedstat.split()[1])
    except (IndexError, ValueError):
        return 0


def close_fd(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


class Meter:
    """The per-reply sampling of one bot. The bot's counters belong to its process (closed
    with it); `self_fd` (open_own_schedstat) to the game that uses the meter.

    What a request takes is only what a later verdict needs, read and not parsed (most
    replies are quick and never judged): see `start` and `written`."""

    __slots__ = ("_after", "_before", "_late0", "_late1", "counters", "last", "self_fd")

    def __init__(self, counters: CpuCounters, self_fd: int | None) -> None:
        self.counters = counters
        self.self_fd = self_fd
        self._before: Raw | None = None
        self._after: Sample | None = None
        #: the sample the last `measures` used
        self.last: Sample | None = None
        self._late0 = self._late1 = b""

    @property
    def source(self) -> str:
        return self.counters.source

    def _own(self) -> bytes:
        fd = self.self_fd
        if fd is None:
            return b""
        try:
            return os.pread(fd, 128, 0)
        except OSError:
            return b""

    @property
    def measured(self) -> bool:
        """The reply was measured on arrival (`arrived`): not a quick one."""
        return self._after is not None

    @property
    def before(self) -> Sample | None:
        raw = self._before
        return None if raw is None else self.counters.parse(raw)

    def start(self, lean: bool = False) -> None:
        """Before the request is written. `lean`: the reply is judged by the wall clock
        (arena/sandbox/cpuacct.py: a one-task bot is then read by its task alone)."""
        self._before = self.counters.snapshot(lean)
        self._after = None

    def written(self) -> None:
        """The request is written: the bot's clock starts."""
        self._late0 = self._own()

    def waiting(self) -> None:
        """The reply is not there yet: what a lean snapshot left to now (the listing)."""
        before = self._before
        if before is not None and not before[4]:
            self._before = self.counters.confirm(before)

    def arrived(self) -> None:
        """The reply's last byte was just read."""
        self._after = self.counters.sample()
        self._late1 = self._own()

    def measures(self, wall: float) -> Measures:
        """The reply's measurements (`arrived` sampled them), or, for a reply still awaited,
        the bot's measurements up to now (the referee's lateness counts only for a reply it
        was late to see)."""
        after = self._after
        awaited = after is None
        if awaited:
            after = self.counters.sample()
        before = self.before
        self.last = after
        if before is None or after is None:
            return Measures(wall)
        cpu = (after.cpu - before.cpu) / 1e9
        tasks = []
        wait = 0.0
        old = before.tasks
        # every task was listed before: one not among them was born since, at 0
        complete = before.complete
        for tid, (cpu_ns, wait_ns) in after.tasks.items():
            was = old.get(tid)
            if was is None:
                if not complete:
                    continue  # its base is unknown: no credit from it
                was = (0, 0)
            task = ((cpu_ns - was[0]) / 1e9, (wait_ns - was[1]) / 1e9)
            wait += task[1]
            tasks.append(task)
        # while the reply is awaited the referee's own delays hid nothing: no lateness
        late = 0.0 if awaited else max(0, _delay(self._late1) - _delay(self._late0)) / 1e9
        throttled = (after.throttled - before.throttled) / 1e9
        return Measures(wall, cpu, wait, task_stall(tasks, cpu), throttled, late)
