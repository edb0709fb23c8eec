"""The blame policy (arena/referee/blame.py) with injected measurements: measurements in,
verdict out. Real bots under real load: tests/referee/test_fair_clocks.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

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
    return Measures(wall, cpu, draw(secs), draw(secs), draw(secs), draw(secs))


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
    later = judge(Measures(m.wall + extra, m.cpu, m.wait, m.stall, m.throttled, m.late), d, mg, c)
    if first.flagged:
        assert later.flagged
    assert later.charged >= first.charged - 1e-9


@given(measures(), deadlines, margins, clocks, secs)
def test_more_cpu_never_helps(m: Measures, d: float, mg: float, c: str, extra: float) -> None:
    assert m.cpu is not None
    first = judge(m, d, mg, c)
    more = Measures(m.wall, m.cpu + extra, m.wait, m.stall, m.throttled, m.late)
    later = judge(more, d, mg, c)
    if first.flagged:
        assert later.flagged
    assert later.charged >= first.charged - 1e-9


@given(measures(), deadlines, margins, clocks)
def test_a_verdict_is_one_thing(m: Measures, d: float, mg: float, c: str) -> None:
    v = judge(m, d, mg, c)
    assert not (v.flagged and v.stall)
    assert v.charged >= 0.0 and v.host >= 0.0
    if v.stall:  # the host's share was past the bound, and the bot was not to blame
        assert v.host >= stall_bound(d, mg)


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
