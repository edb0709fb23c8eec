"""How deep the queue executor keeps the job queue (arena/league/executors/remote.py): deep
enough that short games never leave a worker's slot idle between two of its looks, shallow
enough that slow games are paired on recent ratings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arena.league.executors.remote import HEADROOM, MAX_HEADROOM, adapt_headroom

looks = st.lists(st.tuples(st.integers(0, 500), st.integers(0, 64)), max_size=60)


@given(looks)
def test_headroom_stays_within_its_bounds(seq):
    h = HEADROOM
    for queued, capacity in seq:
        h = adapt_headroom(h, queued, capacity)
        assert HEADROOM <= h <= MAX_HEADROOM


@given(st.integers(1, 64))
def test_a_queue_that_keeps_running_dry_deepens_to_the_cap(capacity):
    h = HEADROOM
    depths = []
    for _ in range(10):
        h = adapt_headroom(h, 0, capacity)
        depths.append(h)
    assert depths == sorted(depths) and depths[-1] == MAX_HEADROOM


@given(st.integers(1, 64), st.floats(HEADROOM, MAX_HEADROOM))
def test_a_queue_mostly_still_waiting_shrinks_back_to_two_per_slot(capacity, start):
    h = start
    for _ in range(20):
        h = adapt_headroom(h, round(h * capacity), capacity)  # nothing was taken
    assert h == HEADROOM


@given(st.floats(HEADROOM, MAX_HEADROOM), st.integers(0, 500))
def test_no_live_worker_leaves_the_depth_alone(start, queued):
    assert adapt_headroom(start, queued, 0) == start
