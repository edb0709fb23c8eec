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


# --- time banks and the first-move allowance (issue 22.5) ------------------------------------
def test_a_bank_takes_the_excess_over_the_move_time_and_nothing_else():
    tc = TimeControl(move_time=0.2, bank=1.0, margin=0.05)
    clocks = Clocks(tc)
    assert clocks.banked and clocks.bank_snapshot() == [1.0, 1.0]
    assert clocks.deadline(0) == 0.2  # the bot's own time: the bank is not in it
    assert clocks.limit(0, 0.2) == pytest.approx(1.2)
    assert clocks.charge(0, 0.1) == 0.0  # within the move time: nothing drawn
    assert clocks.charge(0, 0.3) == pytest.approx(0.2)  # a partial move runs 0.2 past it
    clocks.end_turn(0)
    assert clocks.bank_snapshot() == [pytest.approx(0.8), 1.0]
    assert not clocks.flagged(0.2, 1.04, 0)  # 0.84 past: the bank (0.8) and the margin
    assert clocks.flagged(0.2, 1.06, 0)
    assert clocks.charge(0, 5.0) == pytest.approx(0.8)  # never more than is left
    assert clocks.bank(0) == 0.0
    assert TimeControl.from_dict(tc.to_dict()) == tc
    assert tc.describe() == "0.2s/turn, bank 1s"


def test_the_first_move_allowance_is_each_seats_first_turn_only():
    clocks = Clocks(TimeControl(move_time=0.2, first_move=1.5))
    assert not clocks.banked
    assert clocks.deadline(0) == 1.5
    clocks.charge(0, 1.0)
    assert clocks.deadline(0) == pytest.approx(0.5)  # the rest of the first turn
    clocks.end_turn(0)
    assert clocks.deadline(1) == 1.5  # the other seat's first turn
    clocks.end_turn(1)
    assert clocks.deadline(0) == 0.2 and clocks.deadline(1) == 0.2
    assert clocks.flagged(0.2, 0.3, 0)  # no bank: past the margin is late


def test_records_and_hellos_without_a_bank_stay_as_they_were():
    assert set(TimeControl(move_time=0.5).to_dict()) == {
        "startup",
        "base",
        "increment",
        "move_time",
        "margin",
    }


@pytest.mark.parametrize(
    ("kw", "key", "problem"),
    [
        ({"base": 5.0, "bank": 1.0}, "bank", "without a Fischer clock"),
        ({"base": 5.0, "move_time": 1.0, "first_move": 2.0}, "first_move", "Fischer"),
        ({"bank": 1.0}, "bank", "needs a fixed move time"),
        ({"move_time": 1.0, "bank": -1.0}, "bank", "must be a number >= 0"),
        ({"move_time": 1.0, "bank": float("inf")}, "bank", "must be a number >= 0"),
        ({"move_time": 1.0, "bank": 1e300}, "bank", "at most 604800"),
        ({"move_time": 1.0, "first_move": 0.0}, "first_move", "must be a number > 0"),
        ({"move_time": 1.0, "first_move": 0.5}, "first_move", "at least move_time"),
    ],
)
def test_bad_banks_and_first_moves_name_their_key(kw, key, problem):
    with pytest.raises(TimeControlError, match=problem) as err:
        TimeControl(**kw)
    assert err.value.key == key and key in str(err.value)


def test_parse_takes_a_bank_and_refuses_it_on_the_default_clock():
    assert TimeControl.parse(None, "0.2", bank="1", first_move=2) == TimeControl(
        move_time=0.2, bank=1.0, first_move=2.0
    )
    with pytest.raises(TimeControlError, match="bank needs a fixed move time") as err:
        TimeControl.parse(None, bank=1)
    assert err.value.key == "bank"
    with pytest.raises(TimeControlError, match="bank: expected a number"):
        TimeControl.parse(None, "0.2", bank="lots")


@settings(max_examples=300, deadline=None)
@given(
    move_time=st.floats(0.01, 5),
    bank=st.floats(0.0, 10),
    first_move=st.one_of(st.none(), st.floats(0, 5)),
    margin=st.floats(0, 0.5),
    replies=st.lists(st.tuples(st.integers(0, 1), st.floats(0, 8), st.booleans()), max_size=60),
)
def test_bank_invariants(move_time, bank, first_move, margin, replies):
    """Over any sequence of replies: a bank never goes negative and never grows, a reply draws
    exactly its excess over the turn's time (what is left of it), capped at what the bank holds,
    and a reply is flagged exactly when that excess is past what was left plus the margin."""
    fm = None if first_move is None else move_time + first_move
    clocks = Clocks(TimeControl(move_time=move_time, bank=bank, first_move=fm, margin=margin))
    moved = [False, False]
    used = 0.0
    for seat, elapsed, ends_turn in replies:
        turn_time = fm if fm is not None and not moved[seat] else move_time
        deadline = clocks.deadline(seat)
        assert deadline == pytest.approx(max(0.0, turn_time - used))
        left = clocks.bank(seat)
        other = clocks.bank(1 - seat)
        excess = max(0.0, elapsed - deadline)  # past the bot's own time for this reply
        if abs(excess - (left + margin)) > 1e-9:  # (at the edge itself, float rounding rules)
            assert clocks.flagged(deadline, elapsed, seat) == (excess > left + margin)
        drawn = clocks.charge(seat, elapsed)
        used += elapsed
        assert drawn == pytest.approx(min(left, excess), abs=1e-9, rel=1e-9)
        assert 0.0 <= clocks.bank(seat) <= left
        assert clocks.bank(seat) == pytest.approx(left - drawn, abs=1e-9)
        assert clocks.bank(1 - seat) == other  # only the replying seat's bank moves
        if ends_turn:
            clocks.end_turn(seat)
            moved[seat] = True
            used = 0.0
