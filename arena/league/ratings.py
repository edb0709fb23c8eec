"""The league's two rating systems, both per variant.

Online: OpenSkill's Weng-Lin Plackett-Luce model updates a version's (mu, sigma) in the same
transaction that records its game, so the leaderboard moves with every result; it is ordered by
the conservative estimate mu - 3 sigma, which keeps a lucky new version from topping the table
after three games. A new version inherits its bot's mu with a fresh sigma (as Halite did), so
an upload is placed quickly near where its predecessor stood.

Official: every `official_every` seconds the bundled Bradley-Terry maximum-likelihood Elo
(arena/tournaments/ratings.py) is refitted over all rated games, with 95% intervals. Bots do
not drift once submitted, so a fit over everything is the better estimate; the online rating is
what matchmaking uses in between.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from openskill.models import PlackettLuce

from arena.tournaments.ratings import Ratings, fit_ratings

_MODEL = PlackettLuce()
MU0: float = _MODEL.mu
SIGMA0: float = _MODEL.sigma
#: the model's performance noise and the additive dynamics added to sigma^2 before each game
#: (what matchmaking's lookahead of an update needs: arena/league/matchmaking.py)
BETA: float = _MODEL.beta
TAU: float = _MODEL.tau


@dataclass(frozen=True)
class Skill:
    mu: float = MU0
    sigma: float = SIGMA0

    @property
    def conservative(self) -> float:
        return self.mu - 3.0 * self.sigma


def rate(a: Skill, b: Skill, points_a: float) -> tuple[Skill, Skill]:
    """The two skills after one game in which `a` scored `points_a` (1, 0.5 or 0)."""
    ra = _MODEL.rating(mu=a.mu, sigma=a.sigma)
    rb = _MODEL.rating(mu=b.mu, sigma=b.sigma)
    ranks = [1, 1] if points_a == 0.5 else ([1, 2] if points_a > 0.5 else [2, 1])
    (na,), (nb,) = _MODEL.rate([[ra], [rb]], ranks=ranks)
    return Skill(na.mu, na.sigma), Skill(nb.mu, nb.sigma)


def official_table(
    versions: list[int], pair_results: Iterable[tuple[int, int, float, int]]
) -> Ratings:
    """Bradley-Terry Elo over aggregated results (version a, version b, points of a, games).

    Aggregation happens in SQL (one row per pair), so a million games cost one GROUP BY; the
    fit then sees each pair's games as that many results with the pair's average score.
    """
    index = {v: i for i, v in enumerate(versions)}

    def games() -> Iterable[tuple[int, int, float]]:
        for a, b, points, n in pair_results:
            i, j = index[a], index[b]
            wins = int(points)
            half = points - wins
            for _ in range(wins):
                yield i, j, 1.0
            if half:
                yield i, j, 0.5
            for _ in range(n - wins - (1 if half else 0)):
                yield i, j, 0.0

    return fit_ratings([str(v) for v in versions], games())
