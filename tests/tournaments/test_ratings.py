"""Ratings: hand-computed values, symmetry and the properties a maximum-likelihood fit has."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournaments.ratings import elo_from_score, fit_ratings


def _diff(fit, a: int = 0, b: int = 1) -> float:
    return fit.ratings[a].elo - fit.ratings[b].elo


def test_75_percent_is_191_elo() -> None:
    fit = fit_ratings(["a", "b"], [(0, 1, 1.0)] * 3 + [(0, 1, 0.0)])
    assert fit.prior_draws == 0
    assert _diff(fit) == pytest.approx(400 * math.log10(3), abs=1e-6)  # 190.85
    assert _diff(fit) == pytest.approx(190.8, abs=0.1)
    assert fit.ratings[0].elo == pytest.approx(-fit.ratings[1].elo)  # anchored at mean 0
    # the same score made of draws gives the same rating (draws are half points)
    draws = fit_ratings(["a", "b"], [(0, 1, 1.0), (0, 1, 0.5), (0, 1, 0.5)] + [(1, 0, 0.5)] * 0)
    assert _diff(draws) == pytest.approx(elo_from_score(2 / 3), abs=1e-6)


def test_confidence_interval_matches_hand_computation() -> None:
    # 4 games at p = 0.75: information for the difference is n p (1 - p) = 0.75 per nat^2,
    # so sd(diff) = sqrt(4/3) nats and each mean-anchored rating has half that.
    fit = fit_ratings(["a", "b"], [(0, 1, 1.0)] * 3 + [(0, 1, 0.0)])
    sd = math.sqrt(1 / 0.75) / 2 * 400 / math.log(10)
    assert fit.ratings[0].ci95 == pytest.approx(1.959964 * sd, rel=1e-5)
    many = fit_ratings(["a", "b"], ([(0, 1, 1.0)] * 3 + [(0, 1, 0.0)]) * 25)
    assert many.ratings[0].ci95 == pytest.approx(fit.ratings[0].ci95 / 5, rel=1e-6)


def test_symmetric_cases() -> None:
    even = fit_ratings(["a", "b", "c"], [(0, 1, 0.5), (1, 2, 1), (2, 1, 1), (0, 2, 0.5)] * 3)
    for r in even.ratings:
        assert r.elo == pytest.approx(0, abs=1e-9)
    cyc = fit_ratings(["a", "b", "c"], [(0, 1, 1), (1, 2, 1), (2, 0, 1)])
    assert {round(r.elo, 9) for r in cyc.ratings} == {0}
    assert cyc.ratings[0].ci95 == pytest.approx(cyc.ratings[1].ci95)


def test_transitive_chain() -> None:
    # a scores 75% vs b and b 75% vs c, no a-c games: a - c = 2 * 190.85
    games = [(0, 1, 1)] * 3 + [(0, 1, 0)] + [(1, 2, 1)] * 3 + [(1, 2, 0)]
    fit = fit_ratings(["a", "b", "c"], games)
    assert _diff(fit, 0, 2) == pytest.approx(2 * 400 * math.log10(3), abs=1e-6)


def test_perfect_score_uses_prior() -> None:
    fit = fit_ratings(["a", "b"], [(0, 1, 1.0)] * 4)
    assert fit.prior_draws == 1
    # with one virtual draw: 4.5 / 5 = 90%
    assert _diff(fit) == pytest.approx(elo_from_score(0.9), abs=1e-6)
    assert all(math.isfinite(r.elo) for r in fit.ratings)


def test_player_without_games() -> None:
    fit = fit_ratings(["a", "b", "idle"], [(0, 1, 1.0), (0, 1, 0.0)])
    assert fit.ratings[2].elo is None and fit.ratings[2].games == 0
    assert fit.ratings[0].elo == pytest.approx(0, abs=1e-9)


games_strategy = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from([0.0, 0.5, 1.0])).filter(
        lambda g: g[0] != g[1]
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(games=games_strategy, perm=st.permutations(range(4)))
def test_permutation_invariance(games, perm) -> None:
    names = ["a", "b", "c", "d"]
    fit = fit_ratings(names, games, prior_draws=1)
    pnames = [names[perm.index(k)] for k in range(4)]  # new index k holds old player perm^-1(k)
    pgames = [(perm[i], perm[j], s) for i, j, s in games]
    pfit = fit_ratings(pnames, pgames, prior_draws=1)
    a = {r.name: r.elo for r in fit.ratings}
    b = {r.name: r.elo for r in pfit.ratings}
    for n in names:
        if a[n] is None:
            assert b[n] is None
        else:
            assert b[n] == pytest.approx(a[n], abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(games=games_strategy, winner=st.integers(0, 3), loser=st.integers(0, 3))
def test_an_extra_win_raises_the_winner(games, winner, loser) -> None:
    if winner == loser:
        loser = (winner + 1) % 4
    names = ["a", "b", "c", "d"]
    before = fit_ratings(names, games, prior_draws=1)
    after = fit_ratings(names, [*games, (winner, loser, 1.0)], prior_draws=1)
    old_w = before.ratings[winner].elo
    old_l = before.ratings[loser].elo
    assert after.ratings[winner].elo > (old_w if old_w is not None else -math.inf)
    assert after.ratings[winner].elo - after.ratings[loser].elo > (
        (old_w - old_l) if old_w is not None and old_l is not None else -math.inf
    )


@settings(max_examples=40, deadline=None)
@given(games=games_strategy)
def test_ratings_sum_to_zero_and_fit_the_scores(games) -> None:
    fit = fit_ratings(["a", "b", "c", "d"], games, prior_draws=1)
    rated = [r.elo for r in fit.ratings if r.elo is not None]
    assert sum(rated) == pytest.approx(0, abs=1e-6)
