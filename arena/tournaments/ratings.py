"""Elo ratings fitted over all games at once: Bradley-Terry maximum likelihood.

Sequential Elo updates depend on the order games finished in (which, with concurrency, is an
accident), so like BayesElo and Ordo we fit every rating at once: the model says player i
scores against j with probability p = 1 / (1 + 10^((r_j - r_i)/400)); a draw counts as half a
point (Ordo's convention), and the ratings maximise the likelihood of all games together.
Ratings are anchored so their mean is 0. The 95% intervals come from the observed Fisher
information (the curvature of the log-likelihood at the optimum) under that anchor.

A maximum-likelihood rating does not exist when some group of players never lost a point to
the rest (a perfect score makes the rating infinite). Only then, and only by default, a prior
of one virtual draw per pair of players is added (as BayesElo does with its virtual draws);
the result says so. Pure Python: the systems are tiny (one row per bot).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ELO_PER_NAT = 400.0 / math.log(10.0)
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Rating:
    name: str
    elo: float | None  # None: played no games
    ci95: float | None  # half-width of the 95% interval, Elo
    games: int
    points: float

    @property
    def score(self) -> float | None:
        return self.points / self.games if self.games else None


@dataclass(frozen=True)
class Ratings:
    ratings: tuple[Rating, ...]
    prior_draws: float  # virtual draws per pair added (0: pure maximum likelihood)
    iterations: int

    def by_name(self) -> dict[str, Rating]:
        return {r.name: r for r in self.ratings}


def elo_from_score(score: float) -> float:
    """The Elo difference that makes `score` (0..1, exclusive) the expected score."""
    return -400.0 * math.log10(1.0 / score - 1.0)


def fit_ratings(
    names: Sequence[str],
    games: Iterable[tuple[int, int, float]],
    prior_draws: float | None = None,
) -> Ratings:
    """Fit ratings to games given as (player i, player j, points of i: 0, 0.5 or 1).

    `prior_draws` None means: 0 when the maximum-likelihood ratings exist, else 1.
    """
    n = len(names)
    count = [[0.0] * n for _ in range(n)]
    points = [[0.0] * n for _ in range(n)]
    for i, j, s in games:
        if i == j:
            raise ValueError("a player cannot play itself")
        count[i][j] += 1
        count[j][i] += 1
        points[i][j] += s
        points[j][i] += 1.0 - s
    played = [i for i in range(n) if sum(count[i]) > 0]
    totals = [(sum(count[i]), sum(points[i])) for i in range(n)]
    if prior_draws is None:
        prior_draws = 0.0 if _mle_exists(played, count, points) else 1.0
    if prior_draws:
        for a in played:
            for b in played:
                if a != b:
                    count[a][b] += prior_draws
                    points[a][b] += prior_draws / 2

    theta, cov, iterations = _newton(played, count, points)
    out = []
    for i in range(n):
        g, pts = totals[i]
        if i in theta:
            k = played.index(i)
            var = cov[k][k] if cov is not None else None
            ci = Z95 * math.sqrt(var) * ELO_PER_NAT if var is not None and var > 0 else None
            out.append(Rating(names[i], theta[i] * ELO_PER_NAT, ci, int(g), pts))
        else:
            out.append(Rating(names[i], None, None, int(g), pts))
    return Ratings(tuple(out), prior_draws, iterations)


def _mle_exists(players: list[int], count: list[list[float]], points: list[list[float]]) -> bool:
    """True when every player can reach every other through "took a point from" edges.

    That strong connectivity of the score graph is the condition for finite Bradley-Terry
    maximum-likelihood ratings (Zermelo; Hunter 2004, assumption 1).
    """
    if len(players) < 2:
        return True

    def reach(start: int, forward: bool) -> set[int]:
        seen = {start}
        todo = [start]
        while todo:
            a = todo.pop()
            for b in players:
                if b in seen or not count[a][b]:
                    continue
                took = points[a][b] > 0 if forward else points[b][a] > 0
                if took:
                    seen.add(b)
                    todo.append(b)
        return seen

    everyone = set(players)
    return reach(players[0], True) == everyone and reach(players[0], False) == everyone


def _newton(
    players: list[int], count: list[list[float]], points: list[list[float]]
) -> tuple[dict[int, float], list[list[float]] | None, int]:
    """Newton's method with step halving on the concave log-likelihood, mean anchored at 0.

    Returns ratings in natural units (nats), the covariance under the anchor, iterations.
    The anchor is imposed by adding 11^T/m to the information matrix: for a connected
    comparison graph that matrix is invertible, and its inverse minus 11^T/m is the
    pseudo-inverse, i.e. the covariance of mean-zero ratings.
    """
    m = len(players)
    if m == 0:
        return {}, None, 0
    if m == 1:
        return {players[0]: 0.0}, None, 0
    theta = [0.0] * m

    def loglik(t: list[float]) -> float:
        total = 0.0
        for a in range(m):
            for b in range(a + 1, m):
                i, j = players[a], players[b]
                c = count[i][j]
                if c:
                    d = t[a] - t[b]
                    total -= points[i][j] * _log1pexp(-d) + (c - points[i][j]) * _log1pexp(d)
        return total

    def info_and_grad(t: list[float]) -> tuple[list[list[float]], list[float]]:
        info = [[1.0 / m] * m for _ in range(m)]  # the anchor term 11^T/m
        grad = [0.0] * m
        for a in range(m):
            for b in range(m):
                if a == b:
                    continue
                i, j = players[a], players[b]
                c = count[i][j]
                if not c:
                    continue
                p = 1.0 / (1.0 + math.exp(t[b] - t[a]))
                grad[a] += points[i][j] - c * p
                w = c * p * (1.0 - p)
                info[a][a] += w
                info[a][b] -= w
        return info, grad

    ll = loglik(theta)
    iterations = 0
    for iterations in range(1, 200):
        info, grad = info_and_grad(theta)
        step = _solve(info, grad)
        if step is None:  # disconnected comparison graph: no unique anchor
            return dict(zip(players, theta, strict=True)), None, iterations
        scale = 1.0
        while True:
            cand = [x + scale * s for x, s in zip(theta, step, strict=True)]
            mean = sum(cand) / m
            cand = [x - mean for x in cand]
            new_ll = loglik(cand)
            if new_ll >= ll - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        moved = max(abs(a - b) for a, b in zip(cand, theta, strict=True))
        theta, ll = cand, new_ll
        if moved < 1e-10:
            break
    info, _ = info_and_grad(theta)
    inv = _inverse(info)
    cov = None if inv is None else [[inv[a][b] - 1.0 / m for b in range(m)] for a in range(m)]
    return dict(zip(players, theta, strict=True)), cov, iterations


def _log1pexp(x: float) -> float:
    """log(1 + e^x) without overflow."""
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None if singular."""
    n = len(b)
    m = [[*row[:], b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-12:
            return None
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col and m[r][col]:
                f = m[r][col] / m[col][col]
                for k in range(col, n + 1):
                    m[r][k] -= f * m[col][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def _inverse(a: list[list[float]]) -> list[list[float]] | None:
    n = len(a)
    cols = []
    for k in range(n):
        e = [0.0] * n
        e[k] = 1.0
        x = _solve(a, e)
        if x is None:
            return None
        cols.append(x)
    return [[cols[j][i] for j in range(n)] for i in range(n)]
