"""Matchmaking's policies (arena/league/matchmaking.py) as properties over random pools: always
two different bots of one variant, the least-played variant, new versions first, nobody
starving over many draws, every pair able to meet; the `uncertainty` policy's lookahead equal
to OpenSkill's own update, and its choice of the informative game; league.toml's policy."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.league.db.ledger import Candidate
from arena.league.matchmaking import plan_game, settling, sigma_reduction
from arena.league.ratings import TAU, Skill, rate
from arena.league.settings import MATCHMAKING_POLICIES, Matchmaking, settings_from_dict
from arena.tournaments.checks import ConfigError

VARIANTS = ["papagra", "stripes"]

candidates = st.lists(
    st.tuples(
        st.integers(1, 6),  # bot id: several versions of one bot may be active at once
        st.floats(-20, 70),  # mu
        st.floats(0.5, 8.4),  # sigma
        st.integers(0, 40),  # games
        st.sampled_from([None, "2026-01-01", "2026-02-01", "2026-03-01"]),
    ),
    min_size=1,
    max_size=14,
)


def pool_of(rows) -> list[Candidate]:
    return [Candidate(i + 1, bot, mu, s, g, idle) for i, (bot, mu, s, g, idle) in enumerate(rows)]


@settings(max_examples=300, deadline=None)
@given(
    rows=candidates,
    other=candidates,
    policy=st.sampled_from(MATCHMAKING_POLICIES),
    seed=st.integers(0, 2**32),
    played=st.tuples(st.integers(0, 5), st.integers(0, 5)),
    wide=st.sampled_from([0.0, 0.1, 1.0]),
)
def test_a_pairing_is_two_different_bots_of_one_playable_variant(
    rows, other, policy, seed, played, wide
):
    pool = {"papagra": pool_of(rows), "stripes": pool_of(other)}
    counts = dict(zip(VARIANTS, played, strict=True))
    mm = Matchmaking(policy=policy, wide_window_chance=wide)
    p = plan_game(random.Random(seed), mm, VARIANTS, counts, pool)
    playable = [v for v in VARIANTS if len({c.bot_id for c in pool[v]}) >= 2]
    if not playable:
        assert p is None
        return
    assert p is not None
    assert p.variant in playable
    assert counts[p.variant] == min(counts[v] for v in playable)
    by_id = {c.version_id: c for c in pool[p.variant]}
    a, b = p.seats
    assert a in by_id and b in by_id
    assert by_id[a].bot_id != by_id[b].bot_id


@settings(max_examples=200, deadline=None)
@given(rows=candidates, policy=st.sampled_from(MATCHMAKING_POLICIES), seed=st.integers(0, 2**32))
def test_a_version_in_placement_plays_first(rows, policy, seed):
    mm = Matchmaking(policy=policy, placement_games=10, wide_window_chance=0.5)
    cands = [
        Candidate(c.version_id, c.bot_id, c.mu, c.sigma, 10 + c.games, c.last_game_at)
        for c in pool_of(rows)
    ]
    new = Candidate(len(cands) + 1, 99, 25.0, 8.3, 3, None)
    p = plan_game(random.Random(seed), mm, ["stripes"], {}, {"stripes": [*cands, new]})
    assert p is not None and new.version_id in p.seats
    assert p.seats[1] == new.version_id  # 3 games: odd, so it sits second


@pytest.mark.parametrize("policy", MATCHMAKING_POLICIES)
@settings(max_examples=10, deadline=None)
@given(n=st.integers(2, 25), seed=st.integers(0, 2**32))
def test_no_bot_starves_and_every_pair_can_meet(policy, n, seed):
    """Draw many games, keeping the pool's game counts, idle times and ratings as a league
    does: every bot keeps playing (none waits more than a bound of games), and pairs of bots
    far apart in rating meet too (the wide window)."""
    rng = random.Random(seed)
    results = random.Random(seed + 1)
    skills = [Skill(rng.uniform(0, 60), rng.uniform(1, 8.3)) for _ in range(n)]
    games, last = [0] * n, [0] * n
    mm = Matchmaking(policy=policy)
    waits = [0] * n
    longest = 0
    met = Counter()
    rounds = 80 * n
    for t in range(1, rounds + 1):
        pool = [
            Candidate(i, i, s.mu, s.sigma, games[i], f"{last[i]:09d}") for i, s in enumerate(skills)
        ]
        p = plan_game(rng, mm, ["stripes"], {}, {"stripes": pool})
        assert p is not None
        a, b = p.seats
        skills[a], skills[b] = rate(skills[a], skills[b], results.choice([0.0, 0.5, 1.0]))
        met[frozenset((a, b))] += 1
        for i in range(n):
            waits[i] = 0 if i in (a, b) else waits[i] + 1
            longest = max(longest, waits[i])
        for i in (a, b):
            games[i] += 1
            last[i] = t
    # the idle rule brings every bot back within about n / idle chance draws: runs wait at
    # most 2 to 5 n; without it (idle_chance 0, no wide draws) the longest wait is 15 to 70 n
    assert longest <= 8 * n + 30, (longest, games)
    # far pairs meet: the first and last by rating met at least once in all those games
    order = sorted(range(n), key=lambda i: skills[i].mu)
    if n >= 3:
        far = sum(met[frozenset((i, j))] for i in order[: n // 3] for j in order[-(n // 3) :])
        assert far > 0


@settings(max_examples=200, deadline=None)
@given(
    a=st.tuples(st.floats(-10, 60), st.floats(0.3, 8.4)),
    b=st.tuples(st.floats(-10, 60), st.floats(0.3, 8.4)),
    points=st.sampled_from([0.0, 0.5, 1.0]),
)
def test_the_lookahead_is_openskills_own_update(a, b, points):
    """The closed form `sigma_reduction` uses is what openskill does to the two variances
    (after each gains tau^2 for playing), whatever the result."""
    sa, sb = Skill(*a), Skill(*b)
    na, nb = rate(sa, sb, points)
    before = sa.sigma**2 + sb.sigma**2 + 2 * TAU**2
    after = na.sigma**2 + nb.sigma**2
    assert before - after == pytest.approx(sigma_reduction(sa, sb), rel=1e-6, abs=1e-9)


def test_uncertainty_picks_the_informative_game():
    """Out of placement and with no wide draw: the first bot is the least sure one, and its
    opponent the one of its strength whose rating is sure (not one as strong but unsure, not
    a sure one far away)."""
    mm = Matchmaking(policy="uncertainty", placement_games=0, wide_window_chance=0.0)
    unsure = Candidate(1, 1, 30.0, 6.0, 40, "2026-03-01")
    pool = [
        unsure,
        Candidate(2, 2, 30.5, 1.0, 40, "2026-03-01"),  # as strong, sure: the one
        Candidate(3, 3, 30.5, 5.0, 40, "2026-03-01"),  # as strong, unsure
        Candidate(4, 4, 45.0, 1.0, 40, "2026-03-01"),  # sure, far above
        Candidate(5, 5, 15.0, 1.0, 40, "2026-03-01"),  # sure, far below
    ]
    picks = Counter()
    for seed in range(200):
        mm_no_idle = Matchmaking(
            policy="uncertainty", placement_games=0, wide_window_chance=0.0, idle_chance=0.0
        )
        p = plan_game(random.Random(seed), mm_no_idle, ["v"], {}, {"v": pool})
        assert p is not None and set(p.seats) == {1, 2}
        picks[frozenset(plan_game(random.Random(seed), mm, ["v"], {}, {"v": pool}).seats)] += 1
    # with the idle rule (all equally idle here) some games go to others, most to the best
    assert picks[frozenset((1, 2))] > 100


def test_the_policy_is_chosen_in_league_toml(tmp_path):
    s = settings_from_dict({"games": ["stripes"]}, root=tmp_path)
    assert s.matchmaking.policy == "uncertainty"
    s = settings_from_dict(
        {"games": ["stripes"], "matchmaking": {"policy": "halite", "idle_chance": 0.5}},
        root=tmp_path,
    )
    assert s.matchmaking.policy == "halite" and s.matchmaking.idle_chance == 0.5
    with pytest.raises(ConfigError, match=r"matchmaking\.policy.*uncertainty, halite.*'best'"):
        settings_from_dict({"games": ["stripes"], "matchmaking": {"policy": "best"}}, root=tmp_path)
    with pytest.raises(ConfigError, match=r"matchmaking\.idle_chance"):
        settings_from_dict({"games": ["stripes"], "matchmaking": {"idle_chance": 2}}, root=tmp_path)


@settings(max_examples=200, deadline=None)
@given(
    rows=candidates,
    mu=st.floats(-20, 70),
    games=st.integers(10, 200),
    seed=st.integers(0, 2**32),
)
def test_a_settling_version_always_plays_its_most_informative_game(rows, mu, games, seed):
    """A version out of placement whose sigma is still well above the table's (a new version
    after its placement games) gets no wide draw, even at wide_window_chance 1: its opponent is
    the one the lookahead prefers, never a far one that would teach it nothing."""
    mm = Matchmaking(
        policy="uncertainty", placement_games=10, wide_window_chance=1.0, idle_chance=0.0
    )
    cands = [
        Candidate(c.version_id, c.bot_id, c.mu, min(c.sigma, 2.0), 10 + c.games, c.last_game_at)
        for c in pool_of(rows)
    ]
    new = Candidate(len(cands) + 1, 99, mu, 6.0, games, None)
    pool = [*cands, new]
    assert settling(new, pool, mm)
    p = plan_game(random.Random(seed), mm, ["v"], {}, {"v": pool})
    assert p is not None and new.version_id in p.seats
    opponent = next(c for c in cands if c.version_id in p.seats)
    best = max(sigma_reduction(new, c) for c in cands)
    assert sigma_reduction(new, opponent) == pytest.approx(best)


def test_settling_is_placement_or_a_sigma_well_above_the_tables():
    mm = Matchmaking(placement_games=10)
    table = [Candidate(i, i, 25.0, 1.9, 50, None) for i in range(1, 10)]
    assert settling(Candidate(20, 20, 25.0, 1.9, 3, None), table, mm)  # in placement
    assert settling(Candidate(20, 20, 25.0, 3.0, 60, None), table, mm)  # still unsure
    assert not settling(Candidate(20, 20, 25.0, 2.0, 60, None), table, mm)  # settled
    # a young table, everyone unsure alike: nobody is singled out
    young = [Candidate(i, i, 25.0, 6.0, 12, None) for i in range(1, 10)]
    assert not any(settling(c, young, mm) for c in young)


def test_a_settled_version_still_meets_far_opponents():
    """Out of settling, the wide draw stays: with wide_window_chance 1 the opponent is drawn
    among all, so far bots meet too (what the no-wide rule must not take away)."""
    mm = Matchmaking(
        policy="uncertainty", placement_games=0, wide_window_chance=1.0, idle_chance=0.0
    )
    pool = [Candidate(i, i, 5.0 * i, 1.9 + 0.01 * i, 50, None) for i in range(1, 21)]
    opponents = set()
    for seed in range(200):
        p = plan_game(random.Random(seed), mm, ["v"], {}, {"v": pool})
        assert p is not None and 20 in p.seats
        opponents |= set(p.seats) - {20}
    assert len(opponents) >= 15
