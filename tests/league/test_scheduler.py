"""Matchmaking and the scheduler: who plays whom (properties over random pools), queued replays
before new games, no game without two bots, outcomes recorded once through the scheduler."""

from __future__ import annotations

import random
import time

import trio
from hypothesis import given
from hypothesis import strategies as st

from arena.league.backoff import Backoff
from arena.league.db import ledger, schema, views
from arena.league.executors.base import Outcome
from arena.league.scheduler import Scheduler, plan_game
from arena.league.settings import Matchmaking, settings_from_dict

from .support import add_bots, database_fixtures

VARIANTS = ["papagra", "stripes"]
url, db = database_fixtures()


def cand(vid: int, bot: int, mu: float, games: int, idle: str | None = None) -> ledger.Candidate:
    return ledger.Candidate(vid, bot, mu, 8.0, games, idle)


pools = st.lists(
    st.tuples(st.floats(0, 50), st.integers(0, 30), st.sampled_from([None, "a", "b", "c"])),
    min_size=2,
    max_size=12,
)


@given(
    pool=pools, seed=st.integers(0, 2**32), played=st.tuples(st.integers(0, 5), st.integers(0, 5))
)
def test_a_pairing_is_two_different_bots_in_the_least_played_variant(pool, seed, played):
    cands = [cand(i + 1, i + 1, mu, g, idle) for i, (mu, g, idle) in enumerate(pool)]
    counts = dict(zip(VARIANTS, played, strict=True))
    p = plan_game(
        random.Random(seed), Matchmaking(), VARIANTS, counts, {v: cands for v in VARIANTS}
    )
    assert p is not None
    assert p.variant in [v for v in VARIANTS if counts[v] == min(counts.values())]
    a, b = p.seats
    assert a != b and {a, b} <= {c.version_id for c in cands}


@given(pool=pools, seed=st.integers(0, 2**32))
def test_a_version_in_placement_plays_first(pool, seed):
    mm = Matchmaking(placement_games=10)
    cands = [cand(i + 1, i + 1, mu, 10 + g, idle) for i, (mu, g, idle) in enumerate(pool)]
    cands[-1] = cand(len(cands), len(cands), 25.0, 3)  # the new one
    p = plan_game(random.Random(seed), mm, ["stripes"], {}, {"stripes": cands})
    assert p is not None and len(cands) in p.seats
    # seats alternate with the first bot's game count (3: odd, so it sits second)
    assert p.seats[1] == len(cands)


def test_opponents_are_near_in_rating_except_for_the_wide_window():
    cands = [cand(i + 1, i + 1, float(i), 50) for i in range(40)]
    narrow = Matchmaking(placement_games=0, window=3, wide_window_chance=0.0)
    wide = Matchmaking(placement_games=0, window=3, wide_window_chance=1.0)
    gaps_narrow, gaps_wide = [], []
    for seed in range(300):
        for mm, gaps in ((narrow, gaps_narrow), (wide, gaps_wide)):
            p = plan_game(random.Random(seed), mm, ["stripes"], {}, {"stripes": cands})
            assert p is not None
            gaps.append(abs(p.seats[0] - p.seats[1]))
    assert max(gaps_narrow) <= 3  # mu is i: the 3 nearest are within 3
    assert max(gaps_wide) > 10


def test_no_pairing_without_two_distinct_bots():
    rng = random.Random(0)
    assert plan_game(rng, Matchmaking(), ["stripes"], {}, {"stripes": []}) is None
    one_bot_two_versions = [cand(1, 1, 20, 0), cand(2, 1, 30, 0)]
    assert plan_game(rng, Matchmaking(), ["stripes"], {}, {"stripes": one_bot_two_versions}) is None


async def test_the_scheduler_waits_for_two_bots_then_makes_rated_games(
    db, tmp_path, autojump_clock
):
    """Under trio's MockClock: the wait that shows nothing comes with no bots takes no real
    time (the scheduler's first look, in its database thread, runs to its end all the same)."""
    settings = settings_from_dict({"games": VARIANTS, "opening_turns": 1}, root=tmp_path)
    now = [time.time()]
    scheduler = Scheduler(db, settings, seed=1, clock=lambda: now[0])
    with trio.move_on_after(0.5) as idle:
        await scheduler.next_job()
    assert idle.cancelled_caught  # nothing to play with no bots
    add_bots(db, 2, VARIANTS)
    scheduler.wake()
    job = await scheduler.next_job()
    assert job.attempt == 1 and job.match["game"] in VARIANTS
    assert {job.bots[0]["source"], job.bots[1]["source"]} == {"/bots/0", "/bots/1"}
    assert all(bot["build"] is False for bot in job.bots)
    assert job.match["limits"]["memory_mb"] == settings.limits.memory_mb
    assert len(job.match["opening"]) == 1
    # a platform fault: the game is queued again and, once its backoff is over, comes back
    # before any new game
    await scheduler.finished(Outcome(job, void=schema.VoidKind.SANDBOX_FAULT, reason="boom"))
    now[0] += Backoff().cap
    again = await scheduler.next_job()
    assert (again.game_id, again.attempt) == (job.game_id, 2)
    # the stale first attempt reports late: dropped
    await scheduler.finished(Outcome(job, record={"result": {"winner": 0}}))
    assert scheduler.stale == 1
    await scheduler.finished(Outcome(again, record={"result": {"winner": 1}}))
    assert scheduler.recorded == 1
    with db.read() as conn:
        detail = views.game_detail(conn, job.game_id)
    assert detail["state"] == "finished" and detail["winner"] == 1 and detail["attempt"] == 2
    nxt = await scheduler.next_job()
    assert nxt.game_id != job.game_id
    # the least-played variant goes next: the first game was in the other one
    assert nxt.match["game"] != job.match["game"]
