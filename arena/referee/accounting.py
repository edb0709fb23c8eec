"""Measuring one bot's replies for the blame (arena/referee/blame.py).

Per reply, the referee samples the bot's counters (arena/sandbox/cpuacct.py) just before the
request is written and the moment the reply's last byte is read (the same moment its arrival
is stamped), and its own thread's run-queue wait (/proc/thread-self/schedstat) when the reply
is read and at the start of every sleep of its event loop while the reply is awaited (a trio
instrument, `OwnClock`). Its lateness in seeing the reply is its run-queue wait since the
start of its last sleep (since the request was written, if it never slept): while the referee
sleeps it waits on the bot's pipe, so a reply that came before the sleep ended would have ended
it; its waits before that sleep delayed nothing of this reply, whatever else woke it (its own
re-check timers, other tasks of its process). What woke it last is not known (a timer, another
task's pipe, the first bytes of a reply written in parts), so no part of that wait is surely
after the reply: it is forgiven in the charge, never in a flag (arena/referee/blame.py). The
same holds of its delay between starting to write a request and stamping it written (`lag`:
a bot woken by the write on the referee's CPU preempts it, and may read the request before
the wall clock starts).

The figures go to the record per reply (docs/record.md): `cpu`, `wait` (runnable wait summed
over the bot's tasks), `late`, `host` (the share forgiven), `charged`, and per turn the
`accounting` source ("cgroup v2", "cgroup v1", or "none": the wall clock's plain rule).
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from typing import Any

import trio

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


def close_fd(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


#: an I/O wait shorter than this (seconds, less the run-queue wait) did not sleep: the reply may
#: have been there before it, so it does not move the start of the lateness
SLEPT = 20e-6


def lateness(written: int, slept: int | None, read: int) -> float:
    """The referee's lateness in seconds, from its thread's run-queue wait (ns) when the
    request was written, at the start of its last sleep since (None: it never slept) and when
    the reply was read: from that sleep on, since a reply there before it would have ended
    it (arena/referee/blame.py: none of it is surely after the reply)."""
    return max(0, read - (written if slept is None else slept)) / 1e9


class OwnClock(trio.abc.Instrument):
    """The referee thread's run-queue wait at the start of every sleep of its event loop while
    a metered reply is awaited: a trio instrument, one per game, that reads only while some
    reply is awaited (`arm`, `disarm`), so that a reply read at once costs nothing more.
    `before_io_wait` reads it (one pread) when the loop may sleep, `after_io_wait` once it runs
    again: an I/O wait that returned at once (less its own run-queue wait) did not sleep, and
    does not count (the reply may have been there before it).

    The instrument joins the run at the first `arm` and stays until `close` (the game's end,
    or a slot's: its games share one, `SessionPool.own_clock`): adding one to a trio run costs
    about as much as a whole turn (trio looks its hooks up by name), and an idle one costs a
    test of `armed` per sleep of the loop."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.armed = 0
        self._installed = False
        #: the run-queue wait at the start of the last sleep while armed, and how many sleeps
        #: there were (a meter's mark)
        self.slept = -1
        self.sleeps = 0
        self._at = 0.0
        self._start = -1

    def arm(self) -> None:
        """A reply is awaited: watch the loop's sleeps (from the first one armed)."""
        if self.fd is None:
            return
        if not self._installed:
            trio.lowlevel.add_instrument(self)
            self._installed = True
        self.armed += 1

    def disarm(self) -> None:
        if self.armed > 0:
            self.armed -= 1
            if self.armed == 0:
                self._start = -1

    def idle(self) -> None:
        """A game is over and the clock stays for the next of the same run (a slot's games,
        arena/referee/sessions.py): nothing is awaited any more."""
        self.armed = 0
        self._start = -1

    def close(self) -> None:
        """The game is over: out of the run, and the descriptor closed."""
        self.idle()
        if self._installed:
            self._installed = False
            with contextlib.suppress(KeyError, RuntimeError):  # RuntimeError: the run is over
                trio.lowlevel.remove_instrument(self)
        close_fd(self.fd)
        self.fd = None

    def delay(self) -> int:
        """The thread's run-queue wait so far (ns), -1 where unreadable."""
        fd = self.fd
        if fd is not None:
            try:
                return int(os.pread(fd, 128, 0).split()[1])
            except (OSError, IndexError, ValueError):
                pass
        return -1

    def before_io_wait(self, timeout: float) -> None:
        if self.armed and timeout > 0.0:
            self._start = self.delay()
            self._at = time.perf_counter()
        else:
            self._start = -1

    def after_io_wait(self, timeout: float) -> None:
        start = self._start
        if start < 0:
            return
        self._start = -1
        woke = self.delay()
        if woke >= start and time.perf_counter() - self._at - (woke - start) / 1e9 >= SLEPT:
            self.slept = start
            self.sleeps += 1


class Meter:
    """The per-reply sampling of one bot. The bot's counters belong to its process (closed
    with it); `own` (the referee thread's clock) to the game that uses the meter.

    What a request takes is only what a later verdict needs, read and not parsed (most
    replies are quick and never judged): see `start` and `written`."""

    __slots__ = (
        "_after",
        "_armed",
        "_before",
        "_lag",
        "_late",
        "_late0",
        "_late1",
        "_sleeps",
        "counters",
        "last",
        "own",
    )

    def __init__(self, counters: CpuCounters, own: OwnClock | None) -> None:
        self.counters = counters
        self.own = own
        self._before: Raw | None = None
        self._after: Sample | None = None
        #: the sample the last `measures` used
        self.last: Sample | None = None
        self._late0 = self._late1 = -1
        self._sleeps = 0
        self._armed = False
        self._late = 0.0
        self._lag = 0.0

    @property
    def source(self) -> str:
        return self.counters.source

    def _own(self) -> int:
        own = self.own
        return -1 if own is None else own.delay()

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

    def written(self, lag: float = 0.0) -> None:
        """The request is written: the bot's clock starts. `lag`: seconds from the start of
        the write that the bot may already have had (the referee's own delay in writing and
        stamping it): not charged, never forgiven in a flag (arena/referee/blame.py)."""
        self._late0 = self._own()
        self._lag = max(0.0, lag)
        own = self.own
        if own is not None:
            self._sleeps = own.sleeps

    def waiting(self) -> None:
        """The reply is not there yet: what a lean snapshot left to now (the listing), and the
        referee's sleeps are watched until `done`."""
        before = self._before
        if before is not None and not before[4]:
            self._before = self.counters.confirm(before)
        if self.own is not None and not self._armed:
            self.own.arm()
            self._armed = True

    def done(self) -> None:
        """The wait for the reply is over (whatever ended it)."""
        if self._armed:
            self._armed = False
            assert self.own is not None
            self.own.disarm()

    def arrived(self) -> None:
        """The reply's last byte was just read."""
        self._after = self.counters.sample()
        self._late1 = read = self._own()
        written = self._late0
        if read < 0 or written < 0:
            self._late = 0.0
            return
        own = self.own
        assert own is not None
        self._late = lateness(written, own.slept if own.sleeps != self._sleeps else None, read)

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
        late = 0.0 if awaited else self._late
        throttled = (after.throttled - before.throttled) / 1e9
        stall = task_stall(tasks, cpu)
        return Measures(wall, cpu, wait, stall, throttled, late, self._lag)
