"""The SPRT stopping rule of a tournament: the tested bot's game pairs, counted as they finish.

The test counts a game pair once both its games are recorded, from the tested bot's point of
view, against whichever opponent (a gauntlet with one challenger pools its opponents, as a
test of "is it better than the field"). The runner feeds it every recorded game and stops the
run when the test decides; the report recomputes it from the results file, so both agree on the
games they count. Games of a pair the run abandoned when it stopped are not in the file.
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.tournaments.sprt import SprtParams, SprtState, evaluate
from arena.tournaments.store import GameRow


class SprtRule:
    """The pentanomial counts of one bot's game pairs, and the test on them."""

    def __init__(self, params: SprtParams, bot: str) -> None:
        self.params = params
        self.bot = bot
        self.counts = [0] * 5
        self._half: dict[tuple[int, str, int], float] = {}

    def add(self, row: GameRow) -> SprtState | None:
        """Count one recorded game; the test's new state when it completed a game pair."""
        if self.bot not in row.bots:
            return None
        points = row.points(row.bots.index(self.bot))
        first = self._half.pop(row.pair_key, None)
        if first is None:
            self._half[row.pair_key] = points
            return None
        self.counts[round(2 * (first + points))] += 1
        return self.state()

    def state(self) -> SprtState:
        return evaluate(self.counts, self.params)

    @classmethod
    def from_rows(cls, params: SprtParams, bot: str, rows: Iterable[GameRow]) -> SprtRule:
        rule = cls(params, bot)
        for row in rows:
            rule.add(row)
        return rule
