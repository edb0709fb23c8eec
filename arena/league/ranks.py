"""Rank intervals: where a version's true place in its variant's table lies, 95% of the time.

A leaderboard's rank is the place by the conservative rating mu - 3 sigma; what an author wants
to know is how sure that place is. OpenSkill keeps each version's skill as a normal posterior
N(mu, sigma^2), independent of the others', so the true place of version i is
1 + #{j : skill_j > skill_i}. Given skill_i = x the comparisons are independent Bernoulli
trials, P(skill_j > x) = Phi((mu_j - x) / sigma_j), and the count above is Poisson-binomial;
over x ~ N(mu_i, sigma_i^2) the place's distribution is the mixture of those. The interval is
its 2.5% and 97.5% quantiles ("the ranks' posterior", as Goldstein & Spiegelhalter, "League
tables and their limitations", JRSS A 1996, compute it by simulation; here it is computed
exactly up to the quadrature, with no random draws, so a page shows the same interval on every
load).

Cost: x takes `NODES` equal-probability quantiles of its normal (a midpoint rule); at each,
versions whose comparison is certain (probability within 1e-9 of 0 or 1) only shift the count,
and the uncertain ones (usually the few neighbours) are convolved exactly, or through the normal
approximation of the Poisson-binomial when there are more than `EXACT_UP_TO` of them. A window
over the others sorted by mu finds the uncertain ones, so a version costs about NODES x its
neighbours, not the league's size. In a dense table (more than `DENSE` versions within reach:
a thousand bots a few sigmas apart) the place itself is taken as normal, its mean and variance
computed in one pass (`RankTable._dense`); the page stays fast and the interval, that wide, is
what it says: the place is uncertain by hundreds.

Caveat, stated on the pages: OpenSkill's sigma is a conservative posterior (its tau adds
variance before every game and its update shrinks sigma more slowly than Bayes would), so the
interval is, if anything, wider than the truth.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from math import erfc
from statistics import NormalDist

#: the quadrature's points over the version's own skill
NODES = 24
#: most uncertain comparisons convolved exactly; beyond, a normal approximation
EXACT_UP_TO = 80
#: versions within reach of one beyond which its interval takes the normal approximation whole
DENSE = 200
#: a dense table's grid of x, and the quantiles of a version's skill its mixture takes
GRID = 240
DENSE_NODES = 64
#: comparisons closer than this to certain count as certain
_CERTAIN = 1e-9
#: how many sigmas from x a comparison can be uncertain at all (Phi(-6.1) < 1e-9)
_REACH = 6.1
_STD = NormalDist()
_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)
_QUANTILES = [_STD.inv_cdf((k + 0.5) / NODES) for k in range(NODES)]
_DENSE_QUANTILES = [_STD.inv_cdf((k + 0.5) / DENSE_NODES) for k in range(DENSE_NODES)]


@dataclass(frozen=True)
class RankInterval:
    """Places 1 (best) .. n, both ends included."""

    low: int
    high: int

    def within(self, place: int, slack: int = 1) -> bool:
        """Whether the whole interval lies within `slack` places of `place`."""
        return place - slack <= self.low and self.high <= place + slack


def rank_intervals(
    skills: Sequence[tuple[float, float]], level: float = 0.95
) -> list[RankInterval]:
    """The `level` interval of every version's place among `skills` ((mu, sigma) each)."""
    table = RankTable(skills)
    return [table.interval(i, level) for i in range(len(skills))]


def rank_interval(
    skills: Sequence[tuple[float, float]], index: int, level: float = 0.95
) -> RankInterval:
    """The `level` interval of the place of `skills[index]` among `skills`."""
    return RankTable(skills).interval(index, level)


class RankTable:
    """A variant's table, made once (sorted by mu, with the widest sigma, for the window
    search) and asked for the intervals of the versions a page shows."""

    def __init__(self, skills: Sequence[tuple[float, float]]) -> None:
        self.skills = [(float(mu), max(float(sigma), 1e-9)) for mu, sigma in skills]
        order = sorted(range(len(self.skills)), key=lambda i: self.skills[i][0])
        self.order = order
        self.mus = [self.skills[i][0] for i in order]
        self.reach = _REACH * max((s for _, s in self.skills), default=0.0)
        #: a dense table's grid: its first x, its step, and the points computed so far
        self._grid: tuple[float, float, dict[int, tuple[float, float]]] | None = None

    def interval(self, index: int, level: float = 0.95) -> RankInterval:
        n = len(self.skills)
        skills = self.skills
        mu, sigma = skills[index]
        wide = _REACH * math.hypot(sigma, self.reach / _REACH)
        lo = bisect.bisect_left(self.mus, mu - wide)
        hi = bisect.bisect_right(self.mus, mu + wide)
        if hi - lo > DENSE:
            return self._dense(index, level)
        pmf = [0.0] * n  # pmf[k]: probability that k others are above
        for z in _QUANTILES:
            x = mu + sigma * z
            lo = bisect.bisect_left(self.mus, x - self.reach)
            hi = bisect.bisect_right(self.mus, x + self.reach)
            # surely above: mu beyond the widest reach (never the version itself: |x - mu|
            # is at most 2.1 of its own sigmas)
            above = n - hi
            probs = []
            for j in self.order[lo:hi]:
                if j == index:
                    continue
                mj, sj = skills[j]
                p = 0.5 * erfc((x - mj) / (sj * _SQRT2))  # P(skill_j > x)
                if p >= 1.0 - _CERTAIN:
                    above += 1
                elif p > _CERTAIN:
                    probs.append(p)
            _add(pmf, above, probs, 1.0 / NODES)
        tail = (1.0 - level) / 2.0
        return RankInterval(_quantile(pmf, tail) + 1, _quantile(pmf, 1.0 - tail) + 1)

    def _dense(self, index: int, level: float) -> RankInterval:
        """Many comparisons uncertain at once: given skill_i = x the count above is close to
        normal, with mean m(x) = sum_j P(skill_j > x) and variance v(x) = sum_j p (1 - p);
        both are read off a grid the table's rows share (`_at`), less the version's own
        term, at `DENSE_NODES` quantiles of x; the mixture's quantiles found by bisection."""
        mu, sigma = self.skills[index]
        n = len(self.skills)
        nodes = []
        for z in _DENSE_QUANTILES:
            x = mu + sigma * z
            own = 0.5 * erfc((x - mu) / (sigma * _SQRT2))
            m, v = self._at(x)
            m -= own
            v = max(v - own * (1.0 - own), 1e-12)
            nodes.append((m, 1.0 / math.sqrt(2.0 * v)))

        def cdf(k: int) -> float:  # P(count above <= k), with a continuity correction
            return sum(0.5 * erfc((m - k - 0.5) * scale) for m, scale in nodes) / len(nodes)

        # start from the mixture's normal approximation and gallop to the crossing, then
        # bisect: a few cdf evaluations a quantile, not log2(n)
        mean = sum(m for m, _ in nodes) / len(nodes)
        var = sum(0.5 / (scale * scale) + (m - mean) ** 2 for m, scale in nodes) / len(nodes)

        def quantile(q: float) -> int:
            guess = mean + _STD.inv_cdf(q) * math.sqrt(var)
            k = min(n - 1, max(0, round(guess)))
            step = 1
            if cdf(k) >= q:  # the answer is k or below
                hi = k
                while hi > 0 and cdf(max(0, hi - step)) >= q:
                    hi = max(0, hi - step)
                    step *= 2
                lo = max(0, hi - step)
            else:  # above k
                lo = k + 1
                while lo < n - 1 and cdf(min(n - 1, lo + step - 1)) < q:
                    lo = min(n - 1, lo + step)
                    step *= 2
                hi = min(n - 1, lo + step - 1)
            while lo < hi:
                mid = (lo + hi) // 2
                if cdf(mid) >= q:
                    hi = mid
                else:
                    lo = mid + 1
            return lo

        tail = (1.0 - level) / 2.0
        return RankInterval(quantile(tail) + 1, quantile(1.0 - tail) + 1)

    def _at(self, x: float) -> tuple[float, float]:
        """m(x) and v(x) over every version, interpolated on a grid over the skills; each
        point is computed when first needed and kept, so a page of rows shares them and a page
        near the top never computes the bottom's."""
        if self._grid is None:
            # a step of half the narrowest sigma: m and v change on the scale of the sigmas
            # (each term is a normal's cdf), so linear interpolation is exact to a fraction of
            # a place; at most GRID points
            widest = max(s for _, s in self.skills)
            narrowest = min(s for _, s in self.skills)
            lo = self.mus[0] - 2.5 * widest
            span = self.mus[-1] + 2.5 * widest - lo
            step = max(narrowest / 2.0, span / (GRID - 1))
            self._grid = (lo, step, {})
        lo, step, _ = self._grid
        at = max((x - lo) / step, 0.0)
        g = int(at)
        frac = at - g
        (m0, v0), (m1, v1) = self._point(g), self._point(g + 1)
        return m0 + (m1 - m0) * frac, v0 + (v1 - v0) * frac

    def _point(self, g: int) -> tuple[float, float]:
        assert self._grid is not None
        lo, step, points = self._grid
        if g not in points:
            x = lo + step * g
            m = v = 0.0
            for mj, sj in self.skills:
                p = 0.5 * erfc((x - mj) / (sj * _SQRT2))
                m += p
                v += p * (1.0 - p)
            points[g] = (m, v)
        return points[g]


def _add(pmf: list[float], shift: int, probs: list[float], weight: float) -> None:
    """Add `weight` x the distribution of `shift` + a Poisson-binomial count of `probs`."""
    if len(probs) <= EXACT_UP_TO:
        dist = [1.0]
        for p in probs:
            nxt = [0.0] * (len(dist) + 1)
            for k, q in enumerate(dist):
                nxt[k] += q * (1.0 - p)
                nxt[k + 1] += q * p
            dist = nxt
        for k, q in enumerate(dist):
            pmf[min(shift + k, len(pmf) - 1)] += weight * q
        return
    mean = sum(probs)
    sd = math.sqrt(sum(p * (1.0 - p) for p in probs)) or 1e-9
    # the normal's mass on each count, with a continuity correction, over mean +- 8 sd only
    first = max(0, math.floor(mean - 8.0 * sd))
    last = min(len(probs), math.ceil(mean + 8.0 * sd))
    scale = 1.0 / (sd * _SQRT2)
    prev = 0.0
    for k in range(first, last + 1):
        cum = 1.0 if k == last else 0.5 * erfc((mean - k - 0.5) * scale)
        pmf[min(shift + k, len(pmf) - 1)] += weight * (cum - prev)
        prev = cum


def _quantile(pmf: list[float], q: float) -> int:
    total = 0.0
    for k, p in enumerate(pmf):
        total += p
        if total >= q - 1e-12:
            return k
    return len(pmf) - 1
