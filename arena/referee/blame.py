"""Who made a reply late: the bot, or the machine it ran on. A pure function of measurements.

The referee times a reply by the wall clock, from the moment its request was completely
written until its last byte arrived. On a shared machine part of that time is not the bot's:
its tasks were runnable but another process had the CPU, or the referee itself waited for a CPU
before it could see the reply. `judge` splits the wall time into the host's share and the
bot's own, and decides from the bot's own share alone:

- host share = the bot's *stall* (time in which some task of the bot was runnable and no task
  of the bot ran, see `task_stall`) less the time its own CPU quota throttled it, plus the
  referee's lateness, and never more than `wall - cpu`: every second the bot's tasks spent on
  a CPU is its own, so a bot whose CPU time alone reaches the limit is never forgiven;
- wall clock: the bot is charged `wall - host`, and flagged (time_forfeit) only when that is
  past `deadline + margin`;
- CPU clock: the bot is charged its CPU time and flagged when that is past `deadline + margin`,
  or when its own wall share is past the wall cap (`wall_cap * deadline + margin`): sleeping and
  blocking use no CPU, the cap is what makes a sleeping bot lose;
- a reply the bot was not to blame for, whose host share is larger than `stall_bound` (half the
  deadline, at least the margin), is a host stall: the game is voided and played again rather
  than decided on a degraded machine. A smaller host share is forgiven;
- the referee's lateness (its run-queue wait since its last sleep) bounds how long it was held
  off its CPU while the reply was there, but no part of it is surely after the reply: the
  wake-up it waited for may have been its own re-check timer's, another task's, or the first of
  a reply written in two parts. It is forgiven in the charge; it never decides a flag away:
  where forgiving it would spare a reply that is late without it, the bot is flagged, unless
  it is at least the margin, and then the game is voided as a host stall (a bot within its
  deadline is late without it only if the referee's delay is past the margin, so it is never
  flagged for it). The same holds of the referee's delay between starting to write a request
  and stamping it written (`lag`), when the bot may already have been reading it. The
  referee's own delay never turns a late reply into an accepted one;
- without measurements (no cgroup, a person at a seat) the rule is the plain one of the wall
  clock, whatever clock was asked for: nothing is forgiven, nothing is charged by CPU.

The `deadline` of every rule here is what the reply may be charged before the margin: the
move's own deadline plus what is left of the bot's time bank (arena/referee/clock.py), so the
wall cap, the hard cap and the stall bound stretch with the bank: a bot is never flagged or
voided for drawing on it, and the host's share, never charged, never draws on it.

Sleeping, blocking on I/O and waiting for one's own threads are the bot's choice: none of them
is "runnable while no task of the bot runs", so none of it is ever part of the host's share.
docs/security.md gives the argument in full; tests/referee/test_blame.py pins it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

#: a host share larger than this fraction of the deadline (and than the margin) voids the game
HOST_STALL_FRACTION = 0.5
#: the shortest re-check the referee makes while it waits for a stalled bot (seconds)
MIN_STEP = 0.001
#: how long, in limits, the referee waits on past a bot's limit while the host holds the bot
#: up: a busy bot on a crowded machine reaches its own limit at its share of a CPU, and is then
#: flagged as it would have been alone; only a bot still held at this cap voids the game
PATIENCE = 3.0

WALL = "wall"
CPU = "cpu"
CLOCKS = (WALL, CPU)


@dataclass(frozen=True, slots=True)
class Measures:
    """What was measured over one reply (seconds). `cpu` None: no accounting (the wall rule)."""

    wall: float
    #: CPU time of all the bot's tasks, exited ones included (its cgroup's counter)
    cpu: float | None = None
    #: runnable-but-not-running time summed over the bot's tasks (shown, not used for blame)
    wait: float = 0.0
    #: the part of `wait` that provably no task of the bot ran (`task_stall`)
    stall: float = 0.0
    #: time the bot's own CPU quota throttled it (its choice of threads, never the host's)
    throttled: float = 0.0
    #: the referee's own run-queue wait before it saw the reply, since its last sleep: more
    #: than that cannot have delayed it (the reply would have woken it), and how much of it
    #: did is unknown (arena/referee/accounting.py, `lateness`)
    late: float = 0.0
    #: seconds the bot may have had the request before the wall clock started (the referee
    #: was held off its CPU between starting to write it and stamping it written)
    lag: float = 0.0


@dataclass(frozen=True, slots=True)
class Verdict:
    charged: float  # what the bot's clock is charged
    host: float  # the host's share of the wall time
    flagged: bool = False  # time_forfeit
    stall: bool = False  # the host made it late beyond the bound: void the game
    why: str = ""  # for a flag or a stall: the rule that decided it


def task_stall(tasks: Iterable[tuple[float, float]], cpu: float) -> float:
    """A lower bound of the time in which a task of the bot was runnable and none of the bot's
    tasks was running, from per-task (cpu_i, wait_i) over the reply and the cgroup's `cpu`.

    While task i waited, something else ran on its CPU: another task of the bot (that time
    is in the others' CPU time, cpu - cpu_i) or the host. So wait_i - (cpu - cpu_i) is at most
    the time i waited while no other task of the bot ran: the bot was stalled. Threads that
    wait for each other cancel out exactly, and `cpu` counts tasks that exited in between, so
    a helper that burns CPU and exits before the reply still counts against the bot.
    """
    best = 0.0
    for cpu_i, wait_i in tasks:
        best = max(best, wait_i - (cpu - cpu_i))
    return best


def host_share(m: Measures) -> float:
    """The part of the wall time that was the host's, never more than `wall - cpu`."""
    if m.cpu is None:
        return 0.0
    share = max(0.0, m.stall - m.throttled) + max(0.0, m.late)
    return max(0.0, min(share, m.wall - m.cpu))


def stall_bound(deadline: float, margin: float) -> float:
    """The largest host share a reply may have and still count (else: host_stall, void)."""
    return max(HOST_STALL_FRACTION * deadline, margin)


def wall_limit(deadline: float, margin: float, clock: str, wall_cap: float) -> float:
    """The wall time a bot's own share may reach under `clock`."""
    if clock == CPU:
        return wall_cap * deadline + margin
    return deadline + margin


def hard_cap(deadline: float, margin: float, clock: str = WALL, wall_cap: float = 3.0) -> float:
    """The wall time at which the referee stops waiting for a reply, whoever is to blame:
    `PATIENCE` limits past the limit (at least the stall bound), so that a hung bot never
    stalls a game and a bot the host slows down still gets to show whether it is late."""
    cap = wall_limit(deadline, margin, clock, wall_cap)
    return cap + max(stall_bound(deadline, margin), PATIENCE * cap)


def judge(
    m: Measures,
    deadline: float | None,
    margin: float,
    clock: str = WALL,
    wall_cap: float = 3.0,
) -> Verdict:
    """The verdict on one reply (or on a reply still awaited: `m.wall` is the time so far).

    The referee's lateness (and its lag in starting the clock) are forgiven unless that
    decides the verdict: a reply late without them is flagged, or, where they are at least
    the margin, the game is voided."""
    verdict = _judge(m, deadline, margin, clock, wall_cap)
    unsure = max(0.0, m.late) + max(0.0, m.lag)
    if deadline is None or unsure <= 0.0:
        return verdict
    strict_m = replace(m, wall=m.wall + max(0.0, m.lag), late=0.0, lag=0.0)
    strict = _judge(strict_m, deadline, margin, clock, wall_cap)
    if not strict.flagged:
        return verdict
    if verdict.flagged:
        return strict
    if unsure < margin:
        why = f"{strict.why} (the referee's wait for a CPU is not surely after the reply)"
        return Verdict(strict.charged, strict.host, True, False, why)
    why = "the referee waited for a CPU while the reply may have been there: its share decides"
    return Verdict(verdict.charged, verdict.host, False, True, why)


def _judge(
    m: Measures, deadline: float | None, margin: float, clock: str, wall_cap: float
) -> Verdict:
    if m.cpu is None:  # not measured: the wall clock's plain rule
        flagged = deadline is not None and m.wall > deadline + margin
        why = "wall time past deadline + margin (no accounting)" if flagged else ""
        return Verdict(m.wall, 0.0, flagged, False, why)
    host = host_share(m)
    own = m.wall - host
    charged = m.cpu if clock == CPU else own
    if deadline is None:
        return Verdict(charged, host)
    limit = deadline + margin
    if clock == CPU and m.cpu > limit:
        return Verdict(charged, host, True, False, "CPU time past deadline + margin")
    cap = wall_limit(deadline, margin, clock, wall_cap)
    if own > cap:
        why = "own wall time past the wall cap" if clock == CPU else "own time past the limit"
        return Verdict(charged, host, True, False, why)
    if m.wall > cap and host >= stall_bound(deadline, margin):
        return Verdict(charged, host, False, True, "host share past the stall bound")
    return Verdict(charged, host)


def next_check(
    m: Measures, deadline: float, margin: float, clock: str = WALL, wall_cap: float = 3.0
) -> float | None:
    """While a reply is awaited and `judge` found no fault yet: the wall time (from the
    request) at which to measure again; None: stop waiting (the hard cap is reached, so
    `judge` at that moment decides a flag or a stall).

    The earliest moment the bot's own share could pass its limit: now plus what is left of it
    (a stalled bot's own share does not grow), and under the CPU clock also the moment its CPU
    time could pass the limit at one CPU. Never later than the hard cap, `hard_cap`, where
    the host's share is past the bound unless the bot's own is past the cap."""
    cap = wall_limit(deadline, margin, clock, wall_cap)
    hard = hard_cap(deadline, margin, clock, wall_cap)
    if m.wall >= hard:
        return None
    own = m.wall - host_share(m)
    at = m.wall + max(MIN_STEP, cap - own)
    if clock == CPU and m.cpu is not None:
        at = min(at, m.wall + max(MIN_STEP, deadline + margin - m.cpu))
    return min(at, hard)
