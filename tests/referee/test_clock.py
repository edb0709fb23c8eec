"""Time controls: parsing and the clock arithmetic (the timing against real bots is in
test_match.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.referee import Clocks, TimeControl, TimeControlError


def test_parse():
    assert TimeControl.parse("5+0.05") == TimeControl(base=5.0, increment=0.05)
    assert TimeControl.parse("5") == TimeControl(base=5.0)
    assert TimeControl.parse(None, "0.5") == TimeControl(move_time=0.5)
    assert TimeControl.parse("2+1", 0.5, startup=3, margin=0) == TimeControl(
        startup=3.0, base=2.0, increment=1.0, move_time=0.5, margin=0.0
    )
    assert TimeControl.parse(None) == TimeControl(base=60.0, increment=1.0)


@pytest.mark.parametrize("tc", ["fast", "5+x", "-1+0", "0+1", "5+-1", "nan"])
def test_parse_errors_name_the_problem(tc):
    with pytest.raises(TimeControlError, match="time control"):
        TimeControl.parse(tc)


def test_bad_move_time_and_margin():
    with pytest.raises(TimeControlError, match="move time"):
        TimeControl.parse(None, "soon")
    with pytest.raises(TimeControlError, match="margin"):
        TimeControl.parse("5", margin=-1)


def test_describe_and_dict_roundtrip():
    tc = TimeControl(base=5.0, increment=0.05, move_time=1.0)
    assert tc.describe() == "5+0.05 and 1s/turn"
    assert TimeControl.from_dict(tc.to_dict()) == tc


def test_fischer_and_move_time_deadlines():
    clocks = Clocks(TimeControl(base=2.0, increment=0.5, move_time=1.0))
    assert clocks.deadline(0) == 1.0  # move_time is smaller
    clocks.charge(0, 0.4)  # a partial move
    assert clocks.deadline(0) == pytest.approx(0.6)  # the turn's remaining move time
    clocks.end_turn(0)
    assert clocks.remaining == [pytest.approx(2.1), 2.0]
    assert clocks.deadline(0) == 1.0  # a new turn
    clocks.charge(0, 1.95)
    clocks.end_turn(0)
    assert clocks.deadline(0) == pytest.approx(0.65)  # the Fischer clock is smaller now


def test_margin_is_not_a_loan():
    clocks = Clocks(TimeControl(base=1.0, increment=0.1, margin=0.05))
    assert not clocks.flagged(1.0, 1.04)
    assert clocks.flagged(1.0, 1.06)
    clocks.charge(0, 1.04)
    assert clocks.remaining[0] == 0.0
    clocks.end_turn(0)
    assert clocks.remaining[0] == pytest.approx(0.1)


def test_no_limits():
    clocks = Clocks(TimeControl())
    assert clocks.deadline(1) is None
    assert not clocks.flagged(None, 1e9)
    assert clocks.snapshot() == [None, None]


@settings(max_examples=100, deadline=None)
@given(
    base=st.floats(0.1, 100),
    inc=st.floats(0, 5),
    move_time=st.one_of(st.none(), st.floats(0.05, 10)),
    replies=st.lists(st.tuples(st.integers(0, 1), st.floats(0, 5), st.booleans()), max_size=50),
)
def test_clock_invariants(base, inc, move_time, replies):
    """Clocks never go negative, a deadline never exceeds what remains, and the increment is
    added exactly once per completed turn."""
    clocks = Clocks(TimeControl(base=base, increment=inc, move_time=move_time))
    for seat, elapsed, ends_turn in replies:
        deadline = clocks.deadline(seat)
        assert deadline is not None and deadline >= 0
        assert deadline <= clocks.remaining[seat] + 1e-9
        if move_time is not None:
            assert deadline <= move_time + 1e-9
        before = clocks.remaining[seat]
        clocks.charge(seat, elapsed)
        assert clocks.remaining[seat] == pytest.approx(max(0.0, before - elapsed))
        if ends_turn:
            mid = clocks.remaining[seat]
            clocks.end_turn(seat)
            assert clocks.remaining[seat] == pytest.approx(mid + inc)
            assert clocks.turn_used == 0
        assert all(r >= 0 for r in clocks.remaining)


def test_time_odds_give_each_seat_its_own_clock() -> None:
    common = TimeControl(base=2.0, increment=0.5)
    odds = TimeControl(base=1.0, increment=0.1, move_time=0.4, margin=0.2)
    clocks = Clocks(common, (odds, common))
    assert clocks.remaining == [1.0, 2.0]
    assert clocks.deadline(0) == 0.4 and clocks.deadline(1) == 2.0
    assert not clocks.flagged(0.4, 0.55, 0) and clocks.flagged(2.0, 2.1, 1)  # own margins
    clocks.charge(0, 0.3)
    clocks.end_turn(0)
    clocks.charge(1, 0.3)
    clocks.end_turn(1)
    assert clocks.remaining == [pytest.approx(0.8), pytest.approx(2.2)]


def test_times_are_bounded_and_the_derived_cpu_limit_fits_the_kernel():
    """A huge time control once reached the sandbox as a CPU rlimit no C long holds, and
    every start failed as the arena's fault (voided and replayed forever in a tournament)."""
    from arena.referee.clock import CPU_BUDGET_MAX, MAX_SECONDS, TimeControlError

    with pytest.raises(TimeControlError, match="base must be at most 604800 s"):
        TimeControl(base=1e300)
    with pytest.raises(TimeControlError, match="move_time must be at most"):
        TimeControl(base=None, move_time=MAX_SECONDS + 1)
    longest = TimeControl(
        startup=MAX_SECONDS, base=MAX_SECONDS, increment=MAX_SECONDS, move_time=MAX_SECONDS
    )
    assert 60 <= longest.cpu_budget() <= CPU_BUDGET_MAX
