"""The knockout bracket (arena/tournaments/knockout.py): every bracket ends with one champion."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournaments.knockout import (
    BracketError,
    GameKey,
    Rules,
    bracket,
    seed_order,
    size_of,
)


def play_out(n: int, rules: Rules, rng: random.Random, draw_rate: float):
    """Play a bracket to its end with random results; every state seen along the way."""
    results: dict[GameKey, int | None] = {}
    states = []
    for _ in range(10_000):
        b = bracket(n, rules, results)
        states.append(b)
        if b.champion is not None:
            assert not b.wanted
            return b, results, states
        assert b.wanted, "an unfinished bracket must want games"
        for g in b.wanted:
            assert g.key not in results, "a recorded game is never wanted again"
            r = rng.random()
            if r < draw_rate:
                results[g.key] = None
            else:
                results[g.key] = g.seats[0] if r < 0.5 + draw_rate / 2 else g.seats[1]
    raise AssertionError("the bracket never ended")


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 40),
    pairs=st.integers(1, 3),
    extra=st.integers(0, 3),
    seed=st.integers(0, 2**32),
    draw_rate=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_every_bracket_has_one_champion(n, pairs, extra, seed, draw_rate):
    rules = Rules(pairs, extra)
    final, results, _ = play_out(n, rules, random.Random(seed), draw_rate)
    assert final.champion is not None and 0 <= final.champion < n
    matches = final.matches
    # byes only in round 1, and never two byes in one match
    for m in matches:
        if m.bye:
            assert m.round == 1
            assert (m.sides[0] is None) != (m.sides[1] is None)
        if m.round > 1:
            assert None not in m.sides
    # every match decided; exactly n - 1 matches played (each eliminates one entrant)
    assert all(m.winner is not None for m in matches)
    played = [m for m in matches if not m.bye]
    assert len(played) == n - 1
    # a winner sits in its match, each played match has K to K + extra complete pairs
    for m in played:
        assert m.winner in m.sides
        assert pairs <= m.pairs_played <= pairs + extra
        if m.decided_by == "seed":
            assert m.points[0] == m.points[1] and m.pairs_played == pairs + extra
            assert m.winner == min(m.sides)
        else:
            assert m.decided_by == "points" and m.points[0] != m.points[1]
    # every entrant but the champion lost exactly one match
    losers = [s for m in played for s in m.sides if s != m.winner]
    assert sorted([*losers, final.champion]) == list(range(n))
    # every recorded game was wanted by the bracket: nothing played twice, nothing extra
    assert len(results) == sum(2 * m.pairs_played for m in played)
    # all draws: every match goes to the higher seed, so seed 0 wins
    if draw_rate == 1.0:
        assert final.champion == 0


@given(n=st.integers(2, 200))
def test_seeding_puts_byes_against_the_best_seeds(n):
    size = size_of(n)
    order = seed_order(size)
    assert sorted(order) == list(range(size))
    pairs = [(order[2 * m], order[2 * m + 1]) for m in range(size // 2)]
    assert all(a + b == size - 1 for a, b in pairs)
    byes = [min(a, b) for a, b in pairs if max(a, b) >= n]
    assert sorted(byes) == list(range(size - n))


def test_the_two_best_seeds_meet_only_in_the_final():
    rules = Rules(1, 0)
    results: dict[GameKey, int | None] = {}
    while (b := bracket(8, rules, results)).champion is None:
        for g in b.wanted:  # the better seed always wins
            results[g.key] = min(g.seats)
    assert b.rounds[-1][0].sides == (0, 1)
    assert b.champion == 0


def test_rules_refuse_nonsense():
    with pytest.raises(BracketError):
        Rules(0, 1)
    with pytest.raises(BracketError):
        Rules(1, -1)
    with pytest.raises(BracketError):
        Rules(60, 60)
    with pytest.raises(BracketError):
        bracket(0, Rules(), {})
