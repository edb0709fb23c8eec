"""Matchmaking: which two versions play the league's next rated game, and in which variant.

Pure: a policy gets the pool (every active version of each variant as `ledger.Candidate`, and
the rated games per variant) and a random generator, and returns a `Pairing`; the scheduler
reads the pool and creates the game in one transaction (arena/league/scheduler.py). Two
policies, chosen by league.toml's `[matchmaking] policy` (docs/league.md, "Matchmaking"):

- `uncertainty` (the default): new versions first, then the game that most reduces the
  ranking's uncertainty, measured as OpenSkill's own one-step lookahead (below);
- `halite`: the policy before it, after Halite's coordinator (fewest games or longest idle,
  then an opponent near in mu), kept as the baseline `benchmarks/league.py` compares against.

Both share what keeps the league fair: the variant with the fewest rated games goes next, so
every table fills evenly; a version still in placement (fewer than `placement_games` games in
the variant) plays first; the first bot is sometimes the one idle longest, so none starves;
the opponent is sometimes drawn among all, so every pair can meet; seats alternate with the
first bot's game count.

Why the lookahead is exact and cheap. OpenSkill's Weng-Lin Plackett-Luce update (Weng & Lin,
"A Bayesian Approximation Method for Online Ranking", JMLR 2011, Algorithm 1 with the default
gamma = sigma / c, as `openskill` implements it) shrinks, for a two-player game, each player's
variance to

    sigma'^2 = s^2 * (1 - (s^2 / c^2) * p * (1 - p) * s / c),   s^2 = sigma^2 + tau^2,
    c^2 = s_a^2 + s_b^2 + 2 beta^2,   p = 1 / (1 + exp((mu_b - mu_a) / c))

whatever the result (win, loss or draw give the same delta for two players), so the "expected
reduction of sigma" of a pairing is known before it is played, in closed form:
(s_a^5 + s_b^5) * p * (1 - p) / c^3. It prefers an opponent as strong as the first bot
(p near 1/2: the result is least predictable) whose own rating is already sure (a small s_b
keeps c small, so the game says more about the first bot): the classic active-learning choice
of the most informative comparison. tests/league/test_matchmaking.py checks the formula
against `openskill`'s update. TrueSkill's "match quality" (the draw probability) was the other
candidate; it penalises uncertain players, the opposite of what learning needs, so it is not
used.

The first bot (out of placement) is the one whose own rating has most to gain, the largest
sigma, with probability 1 - `idle_chance`; otherwise the one idle longest (no starvation:
a bot waits at most as many such draws as there are bots). Scoring every pair would find the
single best game, but it costs n^2 per game; the first-bot rule makes it n.

A version still *settling* (in placement, or its sigma above `SETTLED` times the table's
median: a new version starts at several times the level tau holds a played table at, and
comes down over its first hundred or two games) is the largest sigma, so it is the first bot
in all but the idle draws, and it never gets the wide draw: a far opponent (p near 0 or 1)
teaches it almost nothing, and it meets the far ones once settled. What limits how fast its
PLACE settles is mostly not the pairing: benchmarks/league.py measured it (docs/league.md,
"Matchmaking"); where its neighbours are closer in skill than the sigmas tau keeps can
separate, no pairing tells its place to +-1.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.league.db.ledger import Candidate
from arena.league.ratings import BETA, TAU
from arena.league.settings import Matchmaking

#: a sigma this many times the table's median or more is a version still settling
SETTLED = 1.25


@dataclass(frozen=True)
class Pairing:
    variant: str
    seats: tuple[int, int]  # version ids, seat 0 moves first


def plan_game(
    rng: random.Random,
    mm: Matchmaking,
    variants: Sequence[str],
    played: Mapping[str, int],
    pool: Mapping[str, list[Candidate]],
) -> Pairing | None:
    """The next rated game under `mm.policy`, or None when no variant has two bots."""
    variant = pick_variant(rng, variants, played, pool)
    if variant is None:
        return None
    cands = pool[variant]
    if mm.policy == "halite":
        first, opponent = _halite(rng, mm, cands)
    else:
        first, opponent = _uncertainty(rng, mm, cands)
    seats = (first.version_id, opponent.version_id)
    if first.games % 2:
        seats = (seats[1], seats[0])
    return Pairing(variant, seats)


def pick_variant(
    rng: random.Random,
    variants: Sequence[str],
    played: Mapping[str, int],
    pool: Mapping[str, list[Candidate]],
) -> str | None:
    """The playable variant (two bots or more) with the fewest rated games, ties at random."""
    playable = [v for v in variants if len({c.bot_id for c in pool.get(v, [])}) >= 2]
    if not playable:
        return None
    fewest = min(played.get(v, 0) for v in playable)
    return rng.choice([v for v in playable if played.get(v, 0) == fewest])


def _placing(mm: Matchmaking, cands: list[Candidate]) -> list[Candidate]:
    return [c for c in cands if c.games < mm.placement_games]


# The baseline, after Halite's coordinator (HaliteChallenge coordinator/matchmaking.py):
# 1. the first bot: a version still in placement with the fewest games; otherwise, 70% of the
#    time the one with the fewest games and 30% the one idle longest, so no bot starves;
# 2. the opponent: the others sorted by distance in mu, then one drawn uniformly among the
#    nearest k, k itself drawn from 1..window, except with probability `wide_window_chance`
#    when it is drawn among all; this keeps games informative (similar strength) while every
#    pair can still meet.
def _halite(
    rng: random.Random, mm: Matchmaking, cands: list[Candidate]
) -> tuple[Candidate, Candidate]:
    placing = _placing(mm, cands)
    if placing:
        first = _least(rng, placing, lambda c: c.games)
    elif rng.random() < 0.7:
        first = _least(rng, cands, lambda c: c.games)
    else:
        first = _least(rng, cands, lambda c: c.last_game_at or "")
    others = [c for c in cands if c.bot_id != first.bot_id]
    rng.shuffle(others)  # ties in distance broken at random
    others.sort(key=lambda c: abs(c.mu - first.mu))
    if rng.random() < mm.wide_window_chance:
        k = len(others)
    else:
        k = min(len(others), rng.randint(1, mm.window))
    return first, rng.choice(others[:k])


def _uncertainty(
    rng: random.Random, mm: Matchmaking, cands: list[Candidate]
) -> tuple[Candidate, Candidate]:
    placing = _placing(mm, cands)
    if placing:
        first = _least(rng, placing, lambda c: c.games)
    elif rng.random() < mm.idle_chance:
        first = _least(rng, cands, lambda c: c.last_game_at or "")
    else:
        first = _least(rng, cands, lambda c: -c.sigma)
    others = [c for c in cands if c.bot_id != first.bot_id]
    # a version still settling learns nothing from a far opponent (p(1 - p) near 0): its
    # games all go to the informative one; the wide draw is for the settled, so every pair
    # can still meet once it has settled
    if not settling(first, cands, mm) and rng.random() < mm.wide_window_chance:
        return first, rng.choice(others)
    return first, _least(rng, others, lambda c: -sigma_reduction(first, c))


def settling(version: Candidate, cands: Sequence[Candidate], mm: Matchmaking) -> bool:
    """Whether `version` is still settling: in placement, or its sigma above `SETTLED` times
    the table's median sigma (the level OpenSkill's tau holds a table's played versions at;
    a fresh version starts at several times it)."""
    if version.games < mm.placement_games:
        return True
    return version.sigma > SETTLED * statistics.median(c.sigma for c in cands)


def sigma_reduction(a: Any, b: Any, *, beta: float = BETA, tau: float = TAU) -> float:
    """How much a game between `a` and `b` (anything with mu and sigma) shrinks the sum of
    their variances under OpenSkill's Plackett-Luce update, before the tau both gain for
    playing: (s_a^5 + s_b^5) p (1 - p) / c^3, the same for every result (module docstring)."""
    sa2 = a.sigma * a.sigma + tau * tau
    sb2 = b.sigma * b.sigma + tau * tau
    c = math.sqrt(sa2 + sb2 + 2.0 * beta * beta)
    p = 1.0 / (1.0 + math.exp(max(-700.0, min(700.0, (b.mu - a.mu) / c))))
    return (sa2**2.5 + sb2**2.5) * p * (1.0 - p) / c**3


def _least(rng: random.Random, cands: list[Candidate], key: Callable[[Candidate], Any]):
    """The candidate with the least key, ties broken at random."""
    best = min(key(c) for c in cands)
    return rng.choice([c for c in cands if key(c) == best])
