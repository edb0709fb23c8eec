"""Rank intervals (arena/league/ranks.py): the computed distribution of a place matches sampling
from the rating posteriors, and in a simulated league that has settled under the league's own
ratings and matchmaking, a bot's 95% interval holds its true place (the place of its true
strength) nearly always."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.league.db.ledger import Candidate
from arena.league.matchmaking import plan_game
from arena.league.ranks import RankInterval, RankTable, rank_interval, rank_intervals
from arena.league.ratings import BETA, MU0, Skill, rate
from arena.league.settings import Matchmaking


def sampled_interval(skills, index, draws, rng) -> tuple[int, int]:
    """The 2.5% and 97.5% quantiles of the place, by sampling every skill from N(mu, sigma)."""
    places = []
    for _ in range(draws):
        values = [rng.gauss(mu, s) for mu, s in skills]
        mine = values[index]
        places.append(1 + sum(1 for j, v in enumerate(values) if j != index and v > mine))
    places.sort()
    return places[int(0.025 * draws)], places[int(0.975 * draws) - 1]


@settings(max_examples=25, deadline=None)
@given(
    skills=st.lists(st.tuples(st.floats(0, 40), st.floats(0.3, 8.4)), min_size=1, max_size=12),
    seed=st.integers(0, 2**32),
)
def test_the_interval_matches_sampling_from_the_posteriors(skills, seed):
    rng = random.Random(seed)
    index = rng.randrange(len(skills))
    iv = rank_interval(skills, index)
    assert 1 <= iv.low <= iv.high <= len(skills)
    low, high = sampled_interval(skills, index, 4000, rng)
    # the quadrature against 4000 draws: the ends agree within a place
    assert abs(iv.low - low) <= 1 and abs(iv.high - high) <= 1, (iv, (low, high))


def test_sure_and_far_apart_is_one_place_each():
    skills = [(10.0 * i, 0.5) for i in range(30)]
    assert rank_intervals(skills) == [RankInterval(30 - i, 30 - i) for i in range(30)]
    # a new version (fresh sigma) among them spans the places its sigma reaches
    wide = rank_interval([*skills, (145.0, 8.33)], 30)
    assert wide.low < 16 < wide.high and wide.high - wide.low >= 2


def test_a_dense_table_is_fast_and_close_to_the_exact_mixture(monkeypatch):
    """A thousand bots a few sigmas apart take the normal approximation over a grid made once
    a table: within 2% of the table of the quadrature it replaces, and quick for a page."""
    import time

    from arena.league import ranks

    rng = random.Random(3)
    skills = [(rng.gauss(25, 5), rng.uniform(0.8, 3)) for _ in range(1000)]
    table = RankTable(skills)
    started = time.process_time()
    quick = [table.interval(i) for i in range(100)]
    spent = time.process_time() - started
    monkeypatch.setattr(ranks, "DENSE", 10**9)
    exact = [table.interval(i) for i in range(0, 100, 10)]
    for q, e in zip(quick[::10], exact, strict=True):
        assert abs(q.low - e.low) <= 20 and abs(q.high - e.high) <= 20, (q, e)
        assert q.high - q.low >= 50  # that dense, the place is uncertain by dozens or more
    assert spent < 2.0  # about 0.06 s here; the quadrature takes about 0.5 s


@pytest.mark.parametrize("policy", ["uncertainty", "halite"])
def test_the_interval_holds_the_true_place_in_a_settled_league(policy):
    """40 bots of known strength play 4000 games under the league's ratings and matchmaking,
    results drawn from their true skills with the model's own win probability; then each
    bot's 95% interval is checked against the place of its true skill, over three leagues."""
    held = total = 0
    for seed in range(3):
        rng = random.Random(seed)
        n = 40
        true = [rng.uniform(0, 150) for _ in range(n)]
        skills = [Skill() for _ in range(n)]
        games, last = [0] * n, [0] * n
        mm = Matchmaking(policy=policy)
        scale = math.sqrt(2) * BETA
        for t in range(1, 4001):
            pool = [
                Candidate(i, i, s.mu, s.sigma, games[i], f"{last[i]:09d}")
                for i, s in enumerate(skills)
            ]
            p = plan_game(rng, mm, ["v"], {}, {"v": pool})
            a, b = p.seats
            p_a = 1 / (1 + math.exp(-(true[a] - true[b]) / scale))
            skills[a], skills[b] = rate(skills[a], skills[b], float(rng.random() < p_a))
            for i in (a, b):
                games[i] += 1
                last[i] = t
        intervals = rank_intervals([(s.mu, s.sigma) for s in skills])
        for i in range(n):
            place = 1 + sum(1 for j in range(n) if j != i and true[j] > true[i])
            held += intervals[i].low <= place <= intervals[i].high
            total += 1
    assert all(s.mu != MU0 for s in skills)
    # 95% intervals over OpenSkill's conservative sigmas: nearly all hold
    assert held >= 0.9 * total, (held, total)
