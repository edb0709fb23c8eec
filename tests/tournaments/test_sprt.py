"""SPRT maths: closed forms, the constrained estimates' defining properties, simulated strength.

The expected values are derived here from the definitions (docs in arena/tournaments/sprt.py),
not copied from another implementation: two-point outcomes have a closed-form LLR, the
estimates must satisfy their hypothesis, the test is antisymmetric in the two bots, the
normal approximation agrees for small differences, and simulated bots of known strength are
classified at the stated error rates.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournaments.sprt import (
    NELO_PER_T,
    PAIR_SCORES,
    SprtError,
    SprtParams,
    elo_from_score,
    estimate,
    evaluate,
    llr,
    llr_brownian,
    mle_logistic,
    mle_normalized,
    score_from_elo,
)

counts_st = st.lists(st.integers(0, 200), min_size=5, max_size=5).filter(
    lambda c: sum(c) > 0 and sum(1 for x in c if x) >= 2
)


def test_bounds_are_walds() -> None:
    p = SprtParams(0, 5, 0.05, 0.05)
    assert p.upper == pytest.approx(math.log(19))  # 2.944
    assert p.lower == pytest.approx(-math.log(19))
    q = SprtParams(0, 5, 0.05, 0.10)
    assert q.upper == pytest.approx(math.log(0.90 / 0.05))  # 2.890
    assert q.lower == pytest.approx(math.log(0.10 / 0.95))  # -2.251


@pytest.mark.parametrize(
    "kw",
    [
        {"elo0": 5, "elo1": 0},
        {"alpha": 0},
        {"beta": 0.7},
        {"model": "bayes"},
        {"elo0": -2000, "elo1": 0},
    ],
)
def test_bad_parameters_are_refused(kw) -> None:
    with pytest.raises(SprtError):
        SprtParams(**kw)


def test_score_elo_round_trip() -> None:
    assert score_from_elo(0) == 0.5
    assert score_from_elo(400 * math.log10(3)) == pytest.approx(0.75)
    assert elo_from_score(score_from_elo(123.4)) == pytest.approx(123.4)


def test_two_point_outcomes_have_the_binomial_llr() -> None:
    # only double losses and double wins: the constrained estimate under "mean = s" puts
    # probability s on the win pair, so the LLR is the binomial one
    q = [0.4, 0, 0, 0, 0.6]
    s = score_from_elo(30)
    p = mle_logistic(q, s)
    assert p[4] == pytest.approx(s, abs=1e-12) and p[0] == pytest.approx(1 - s, abs=1e-12)
    params = SprtParams(0, 30)
    s0, s1 = score_from_elo(0), score_from_elo(30)
    expected = 60 * math.log(s1 / s0) + 40 * math.log((1 - s1) / (1 - s0))
    # regularized zero counts (epsilon each) move it only slightly
    assert llr([40, 0, 0, 0, 60], params) == pytest.approx(expected, abs=0.01)


def test_observed_hypothesis_gives_the_kullback_leibler_divergence() -> None:
    # counts whose mean pair score is exactly score_from_elo(elo1)... built by tilting
    base = [0.1, 0.2, 0.4, 0.2, 0.1]
    s1 = score_from_elo(20)
    q = mle_logistic(base, s1)
    n = 1000
    params = SprtParams(0, 20)
    p0 = mle_logistic(q, 0.5)
    kl = sum(a * math.log(a / b) for a, b in zip(q, p0, strict=True))
    # llr() takes counts: feed the exact fractions scaled by n (floats are accepted)
    assert llr([n * x for x in q], params) == pytest.approx(n * kl, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(counts_st, st.floats(-150, 150))
def test_logistic_estimate_satisfies_its_hypothesis(counts, elo) -> None:
    q = [max(c, 1e-3) / sum(max(x, 1e-3) for x in counts) for c in counts]
    p = mle_logistic(q, score_from_elo(elo))
    assert sum(p) == pytest.approx(1)
    assert all(x >= 0 for x in p)
    mean = sum(a * x for a, x in zip(PAIR_SCORES, p, strict=True))
    assert mean == pytest.approx(score_from_elo(elo), abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(counts_st, st.floats(-60, 60))
def test_normalized_estimate_satisfies_its_hypothesis(counts, nelo) -> None:
    q = [max(c, 1e-3) / sum(max(x, 1e-3) for x in counts) for c in counts]
    t = nelo / NELO_PER_T
    p = mle_normalized(q, t)
    mean = sum(a * x for a, x in zip(PAIR_SCORES, p, strict=True))
    sd = math.sqrt(sum(x * (a - mean) ** 2 for a, x in zip(PAIR_SCORES, p, strict=True)))
    assert (mean - 0.5) / sd == pytest.approx(t, abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(counts_st, st.sampled_from(["logistic", "normalized"]))
def test_the_test_is_antisymmetric_in_the_two_bots(counts, model) -> None:
    # the other bot's view: reversed counts, hypotheses mirrored (H0 <-> H1 with negated Elo)
    a = llr(counts, SprtParams(-2, 6, model=model))
    b = llr(list(reversed(counts)), SprtParams(-6, 2, model=model))
    assert a == pytest.approx(-b, abs=1e-6 * max(1.0, abs(a)))


def test_equal_hypotheses_limit_and_sign() -> None:
    wins = [5, 20, 50, 40, 15]  # clearly above 0.5
    assert llr(wins, SprtParams(0, 5)) > 0
    assert llr(list(reversed(wins)), SprtParams(0, 5)) < 0
    assert llr([0, 0, 0, 0, 0], SprtParams(0, 5)) == 0.0


def test_normal_approximation_agrees_for_small_differences() -> None:
    counts = [200, 1100, 2600, 1200, 230]
    params = SprtParams(0, 5)
    exact, approx = llr(counts, params), llr_brownian(counts, params)
    assert exact == pytest.approx(approx, rel=0.02)


def test_estimate_matches_hand_computation() -> None:
    counts = [10, 20, 40, 20, 10]  # symmetric: Elo 0, LOS 50%
    elo, ci, nelo, los = estimate(counts)
    assert elo == pytest.approx(0) and nelo == pytest.approx(0) and los == pytest.approx(0.5)
    # var of the pair score: 2 * (0.1 * 0.5^2 + 0.2 * 0.25^2) = 0.075; se = sqrt(0.075 / 100)
    se = math.sqrt(0.075 / 100)
    assert ci == pytest.approx(elo_from_score(0.5 + 1.959964 * se), rel=1e-4)  # 37.4
    elo2, _, _, los2 = estimate([0, 0, 10, 20, 10])  # mean 0.75 -> +190.8 Elo
    assert elo2 == pytest.approx(400 * math.log10(3))
    assert los2 == pytest.approx(1.0)


def _simulated_run(rng: random.Random, elo: float, draw: float, params: SprtParams) -> str:
    """One SPRT run on simulated games of a bot `elo` stronger (independent games)."""
    s = score_from_elo(elo)
    win = s - draw / 2
    counts = [0] * 5
    for _ in range(20000):
        pair = 0
        for _ in range(2):
            x = rng.random()
            pair += 2 if x < win else 1 if x < win + draw else 0
        counts[pair] += 1
        value = llr(counts, params)
        if value >= params.upper:
            return "H1"
        if value <= params.lower:
            return "H0"
    return "none"


@pytest.mark.parametrize("model", ["logistic", "normalized"])
def test_simulated_bots_are_classified_at_the_stated_error_rates(model) -> None:
    alpha = beta = 0.05
    if model == "logistic":
        params = SprtParams(0, 30, alpha, beta)
    else:
        params = SprtParams(0, 40, alpha, beta, model="normalized")  # +50 Elo is ~56 nElo here
    rng = random.Random(2026)
    runs = 100
    better = [_simulated_run(rng, 50, 0.2, params) for _ in range(runs)]
    equal = [_simulated_run(rng, 0, 0.2, params) for _ in range(runs)]
    # a +50 Elo bot is above H1, an equal one is at H0: wrong decisions at most at the
    # stated rate (5%), with room for sampling noise of 100 runs (binomial sd 2.2%)
    assert better.count("H1") >= runs * (1 - beta - 0.05), better
    assert equal.count("H0") >= runs * (1 - alpha - 0.05), equal
    assert "none" not in better + equal


def test_evaluate_decides_and_summarises() -> None:
    params = SprtParams(0, 10)
    state = evaluate([3, 9, 30, 60, 120], params)
    assert state.decision == "H1" and state.llr >= params.upper
    assert state.games == 444 and state.pairs == 222
    line = state.summary()
    assert "H1 accepted" in line and f"LLR {state.llr:.2f}" in line and "games 444" in line
    assert evaluate([120, 60, 30, 9, 3], params).decision == "H0"
    assert evaluate([1, 1, 1, 1, 1], params).decision is None


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([0, 0, 1, 3, 50, 400, 5000]), min_size=5, max_size=5).filter(sum),
    st.floats(-80, 60),
    st.floats(0.5, 40),
    st.sampled_from(["logistic", "normalized"]),
)
def test_llr_exists_for_any_counts(counts, elo0, width, model) -> None:
    # lopsided counts (a bot that wins nearly every pair) are the everyday case of a strong
    # new version; the estimate must not fail to converge on them
    value = llr(counts, SprtParams(elo0, elo0 + width, model=model))
    assert math.isfinite(value)


def test_a_perfect_score_has_no_finite_elo() -> None:
    assert estimate([0, 0, 0, 0, 23]) == (None, None, None, 1.0)
    assert estimate([23, 0, 0, 0, 0])[3] == 0.0
    assert "Elo +inf (a perfect score)" in evaluate([0, 0, 0, 0, 23], SprtParams(0, 50)).summary()
    elo, ci, nelo, los = estimate([0, 0, 7, 0, 0])  # every pair 1-1: Elo 0, no spread
    assert elo == 0 and ci is None and nelo is None and los == 0.5
