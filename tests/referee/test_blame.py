"""The blame policy (arena/referee/blame.py) with injected measurements: measurements in,
verdict out. Real bots under real load: tests/referee/test_fair_clocks.py."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import example, given
from hypothesis import strategies as st

from arena.referee.accounting import lateness
from arena.referee.blame import (
    CPU,
    PATIENCE,
    WALL,
    Measures,
    hard_cap,
    host_share,
    judge,
    next_check,
    stall_bound,
    task_stall,
)

secs = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)
deadlines = st.floats(min_value=0.001, max_value=5.0, allow_nan=False)
margins = st.floats(min_value=0.0, max_value=0.5, allow_nan=False)
clocks = st.sampled_from([WALL, CPU])


@st.composite
def measures(draw: st.DrawFn) -> Measures:
    wall = draw(secs)
    cpu = draw(st.floats(min_value=0.0, max_value=20.0, allow_nan=False))
    lag = draw(st.one_of(st.just(0.0), secs))
    return Measures(wall, cpu, draw(secs), draw(secs), draw(secs), draw(secs), lag)


def test_a_hog_beside_an_honest_bot_is_forgiven() -> None:
    # 30 ms deadline, 10 ms margin: the bot computed 28 ms, waited 15 ms for a CPU
    m = Measures(wall=0.043, cpu=0.028, wait=0.015, stall=0.015)
    v = judge(m, 0.030, 0.010)
    assert not v.flagged and not v.stall
    assert abs(v.charged - 0.028) < 1e-9 and abs(v.host - 0.015) < 1e-9


def test_the_wall_rule_without_measurements() -> None:
    assert judge(Measures(0.041), 0.030, 0.010).flagged
    assert not judge(Measures(0.040), 0.030, 0.010).flagged
    # the CPU clock asked for, nothing measured: the wall rule still holds
    v = judge(Measures(0.041), 0.030, 0.010, clock=CPU)
    assert v.flagged and v.charged == 0.041


def test_a_sleeping_bot_is_charged_its_sleep() -> None:
    v = judge(Measures(wall=0.050, cpu=0.0001), 0.030, 0.010)
    assert v.flagged and v.charged > 0.049


def test_threads_waiting_for_each_other_are_not_a_stall() -> None:
    # four busy threads on one CPU for 40 ms: each ran 10 ms and waited 30 ms
    tasks = [(0.010, 0.030)] * 4
    assert task_stall(tasks, 0.040) <= 0.0
    # one thread waited 20 ms behind a helper that burnt 20 ms and exited: no stall either
    assert task_stall([(0.0, 0.020)], cpu=0.020) <= 0.0
    # a real host stall: one task, 15 ms runnable behind another process
    assert task_stall([(0.025, 0.015)], 0.025) == 0.015


def test_a_large_host_share_voids_a_late_reply_only() -> None:
    m = Measures(wall=0.080, cpu=0.020, stall=0.055)
    v = judge(m, 0.030, 0.010)
    assert v.stall and not v.flagged
    # the same stall, but the bot replied in time anyway: nothing to void
    assert not judge(Measures(wall=0.039, cpu=0.001, stall=0.030), 0.030, 0.010).stall
    assert stall_bound(0.030, 0.010) == 0.015
    assert stall_bound(0.010, 0.050) == 0.050


def test_cpu_clock_charges_cpu_and_caps_the_wall() -> None:
    # slept 60 ms on a 30 ms deadline: fine under the CPU clock (cap 3 x 30 + 10 = 100 ms)
    v = judge(Measures(wall=0.060, cpu=0.002), 0.030, 0.010, clock=CPU)
    assert not v.flagged and v.charged == 0.002
    assert judge(Measures(wall=0.101, cpu=0.002), 0.030, 0.010, clock=CPU).flagged
    assert judge(Measures(wall=0.041, cpu=0.041), 0.030, 0.010, clock=CPU).flagged


@given(measures(), deadlines, margins, clocks)
def test_cpu_past_the_limit_is_never_forgiven(m: Measures, d: float, mg: float, c: str) -> None:
    if m.cpu is not None and m.cpu > d + mg and m.wall > d + mg:
        assert judge(m, d, mg, c).flagged


@given(measures())
def test_host_share_is_bounded(m: Measures) -> None:
    h = host_share(m)
    assert m.cpu is not None
    assert 0.0 <= h <= max(0.0, m.wall - m.cpu) + 1e-12
    assert h <= max(0.0, m.stall - m.throttled) + max(0.0, m.late) + 1e-12


@given(measures(), deadlines, margins, clocks, secs)
def test_more_wall_time_never_helps(m: Measures, d: float, mg: float, c: str, extra: float) -> None:
    """Monotonic: the same measurements with a longer wall time are never judged better."""
    first = judge(m, d, mg, c)
    later = judge(replace(m, wall=m.wall + extra), d, mg, c)
    if first.flagged:
        assert later.flagged
    assert later.charged >= first.charged - 1e-9


@given(measures(), deadlines, margins, clocks, secs)
def test_more_cpu_never_helps(m: Measures, d: float, mg: float, c: str, extra: float) -> None:
    assert m.cpu is not None
    first = judge(m, d, mg, c)
    more = replace(m, cpu=m.cpu + extra)
    later = judge(more, d, mg, c)
    if first.flagged:
        assert later.flagged
    assert later.charged >= first.charged - 1e-9


@given(measures(), deadlines, margins, clocks)
def test_a_verdict_is_one_thing(m: Measures, d: float, mg: float, c: str) -> None:
    v = judge(m, d, mg, c)
    assert not (v.flagged and v.stall)
    assert v.charged >= 0.0 and v.host >= 0.0
    if v.stall:  # the host's share was past the bound, and the bot was not to blame; or
        # the referee's wait for a CPU (not surely after the reply) decided, and was >= margin
        assert v.host >= stall_bound(d, mg) or m.late + m.lag >= mg


@given(measures(), deadlines, margins, clocks)
def test_waiting_stops_at_the_hard_cap(m: Measures, d: float, mg: float, c: str) -> None:
    at = next_check(m, d, mg, c)
    cap = (3.0 * d if c == CPU else d) + mg
    hard = cap + max(stall_bound(d, mg), PATIENCE * cap)
    assert hard == hard_cap(d, mg, c)
    if at is None:
        assert m.wall >= hard
        # at the hard cap every awaited reply is decided: a flag or a stall
        v = judge(m, d, mg, c)
        assert v.flagged or v.stall
    else:
        assert m.wall < at <= hard


def test_a_reply_that_came_while_the_referee_waited_for_a_cpu_is_not_spared() -> None:
    """Issue 19's sleeping bot: 43 ms asleep on a 30 ms deadline + 10 ms margin, its own stamp
    says it replied 45.9 ms after the request (2.7 ms of it runnable behind other processes);
    the referee read the reply at 50.7 ms. Its run-queue wait over the whole reply was 10.2 ms
    (its re-check timer's wake-up at 40 ms among it), since its last sleep at most 4.8 ms, and
    none of it is surely after the reply: forgiving it must not spare the bot."""
    whole = Measures(wall=0.0507, cpu=0.0002, wait=0.0027, stall=0.0027, late=0.0102)
    assert whole.wall - host_share(whole) <= 0.040  # forgiven in full (as before): spared
    # the wait since its last sleep: flagged even if all of it is forgiven
    v = judge(replace(whole, late=0.0048), 0.030, 0.010)
    assert v.flagged and not v.stall and abs(v.charged - (0.0507 - 0.0027)) < 1e-9
    # a wait that would spare it, under the margin: flagged all the same
    v = judge(replace(whole, late=0.0080), 0.030, 0.010)
    assert v.flagged and not v.stall and "referee" in v.why
    # the referee held off a CPU a margin or more: it cannot tell whose time it was, a void
    v = judge(whole, 0.030, 0.010)
    assert v.stall and not v.flagged and "referee" in v.why
    # an honest reply (29 ms), late only by the referee's 16 ms wait: voided, never flagged
    v = judge(Measures(wall=0.045, cpu=0.0002, late=0.0160), 0.030, 0.010)
    assert v.stall and not v.flagged
    # within the limit anyway: the wait is forgiven in the charge
    v = judge(Measures(wall=0.038, cpu=0.0002, late=0.0090), 0.030, 0.010)
    assert not v.flagged and not v.stall and abs(v.charged - 0.029) < 1e-9


def test_lateness_counts_from_the_referees_last_sleep() -> None:
    """The referee's run-queue wait (ns) at the request, at its last sleep and at the read."""
    ms = 1_000_000
    # never slept: all of it since the request
    assert lateness(10 * ms, None, 13 * ms) == 0.003
    # a re-check timer woke it (5 ms in the run queue), it slept again, the reply came and it
    # waited 4.8 ms more: only what followed the start of its last sleep
    assert lateness(10 * ms, 15 * ms, int(19.8 * ms)) == 0.0048


async def test_the_referees_clock_marks_its_sleeps() -> None:
    """OwnClock, armed, marks a sleep of the event loop (a timer's or a pipe's), not an I/O
    wait that returned at once."""
    import os

    import trio

    from arena.referee.accounting import OwnClock, open_own_schedstat

    own = OwnClock(open_own_schedstat())
    try:
        await trio.sleep(0.002)
        assert own.sleeps == 0  # not armed
        own.arm()
        await trio.sleep(0.002)
        assert own.sleeps >= 1 and own.slept >= 0
        r, w = os.pipe()
        try:
            marks = own.sleeps
            async with trio.open_nursery() as nursery:
                nursery.start_soon(trio.lowlevel.wait_readable, r)
                await trio.sleep(0.002)
                os.write(w, b"x")
            assert own.sleeps > marks
            os.read(r, 1)
            # ready before the wait: no sleep
            os.write(w, b"y")
            marks = own.sleeps
            await trio.lowlevel.wait_readable(r)
            assert own.sleeps == marks
        finally:
            os.close(r)
            os.close(w)
        own.disarm()
        marks = own.sleeps
        await trio.sleep(0.002)
        assert own.sleeps == marks and own.armed == 0  # out of the run again
        own.arm()  # in the run still, armed again: it counts again
        marks = own.sleeps
        await trio.sleep(0.002)
        assert own.sleeps > marks
    finally:
        own.close()
    assert own.fd is None and own.armed == 0


unit = st.floats(min_value=0.0, max_value=1.0)


def own_at(m: Measures, a: float, b: float) -> float:
    """The bot's own time had the reply come `a` of the way into the referee's wait, and had
    the bot had the request `b` of the referee's lag before the wall clock started. Its
    runnable wait is counted from before the request was written (the meter's first sample),
    so it may have come in that part of the lag too: the host's share is of the whole time
    the bot had the request."""
    had = m.wall + b * m.lag
    return had - host_share(replace(m, wall=had, late=a * m.late))


@given(measures(), deadlines, margins, unit, unit)
# the sleeping bot, had the referee waited 8 ms since its last sleep
@example(Measures(0.0507, 0.0002, 0.0027, 0.0027, 0.0, 0.0080), 0.030, 0.010, 0.0, 0.0)
def test_the_referees_wait_never_spares_a_late_bot(
    m: Measures, d: float, mg: float, a: float, b: float
) -> None:
    """Whenever the reply may have come at a moment of the referee's wait (and the request
    been read at a moment of its lag) that makes the bot late by the wall clock, the reply is
    never accepted: flagged, or the game voided."""
    if own_at(m, a, b) > d + mg:
        v = judge(m, d, mg)
        assert v.flagged or v.stall


@given(measures(), deadlines, margins, unit, unit)
def test_a_bot_within_its_deadline_is_never_flagged_for_the_referees_wait(
    m: Measures, d: float, mg: float, a: float, b: float
) -> None:
    """If the reply may have come when the bot's own time was within its deadline, it is not
    flagged for the referee's wait or lag: at worst the game is voided."""
    if own_at(m, a, b) <= d:
        assert not judge(m, d, mg).flagged


def test_a_request_read_before_the_referee_stamped_it_written() -> None:
    """Traced under load: a bot sleeping 43 ms (its own stamp) was recorded as replying
    39.45 ms after its request was written: the referee, preempted by the bot its write
    woke, stamped the request written 3.7 ms after the write began. Its lag is not forgiven
    in the flag."""
    m = Measures(wall=0.03945, cpu=0.0003, wait=0.00026, stall=0.00026, late=0.0)
    assert not judge(m, 0.030, 0.010).flagged  # as before: the lag unseen, accepted
    v = judge(replace(m, lag=0.0037), 0.030, 0.010)
    assert v.flagged and "referee" in v.why
    assert abs(v.charged - (0.03945 + 0.0037 - 0.00026)) < 1e-9
    # an on-time bot is not charged the lag
    v = judge(Measures(wall=0.0300, cpu=0.0003, lag=0.0037), 0.030, 0.010)
    assert not v.flagged and abs(v.charged - 0.0300) < 1e-9
