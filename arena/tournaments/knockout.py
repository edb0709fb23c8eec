"""Knockout brackets: who meets whom, which games a match still needs, who goes through.

Pure (no I/O, no clock, no randomness): the whole state of a bracket is a function of the
entrants' number, the rules and the games recorded so far. That is what makes a knockout
resumable anywhere it is played: the local runner (arena/tournaments/runner.py) and the league's
finals (arena/league/db/finals.py) never keep a bracket in memory between games; they derive it
from their recorded games each time and play the games it says are wanted.

Conventions:

- Entrants are numbered by seed, 0 the best (a ranking: the config's order locally, the
  season's leaderboard in a final). The bracket's size is the next power of two; the seeds
  past the last entrant are byes, placed by the standard seeding (1 meets n, 2 meets n-1, and
  the two best seeds can only meet in the final), so every bye stands against a real entrant in
  round 1, the best seeds get them, and no later round has one.
- A match is K game pairs (`Rules.pairs`): each pair is the same opening from both seats. All K
  pairs are played (a league plays them at once on its workers), then the side with more
  points goes through. Level after K pairs: up to `Rules.extra_pairs` more pairs, one at a time,
  each deciding if it breaks the tie; still level after those, the higher seed goes through
  (`decided_by = "seed"`), so a match always ends, after at most K + extra pairs.
- A game is named by `GameKey` (round, match, pair, seat order); its result is the entrant
  who won it, or None for a draw.
- Forfeits: an entrant disqualified mid-bracket (`forfeits`; a league's final whose finalist an
  admin disabled) loses every match its recorded games have not decided yet, whatever the
  points so far: the other side goes through (`decided_by = "forfeit"`; both disqualified, the
  higher seed, who then forfeits the next), and none of its games is wanted any more. A match
  its games had decided stands.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: the most game pairs a match can have (regular and tie-break together): game ids number the
#: pairs of a match below it (arena/tournaments/schedule.py `knockout_pair`)
MAX_MATCH_PAIRS = 100


class BracketError(ValueError):
    """Rules or entrants a bracket cannot be made of."""


@dataclass(frozen=True)
class Rules:
    """How a match is played: `pairs` game pairs, then up to `extra_pairs` tie-break pairs."""

    pairs: int = 1
    extra_pairs: int = 1

    def __post_init__(self) -> None:
        if self.pairs < 1:
            raise BracketError(f"a match needs at least one game pair, got {self.pairs}")
        if self.extra_pairs < 0:
            raise BracketError(f"extra pairs cannot be negative, got {self.extra_pairs}")
        if self.pairs + self.extra_pairs > MAX_MATCH_PAIRS:
            raise BracketError(
                f"pairs + extra pairs must be at most {MAX_MATCH_PAIRS}, "
                f"got {self.pairs + self.extra_pairs}"
            )


@dataclass(frozen=True, order=True)
class GameKey:
    """One game of a bracket: round (1 = first), match (0-based in its round), pair (0-based
    in its match; the tie-break pairs follow the regular ones), seat order (0: the match's
    first side sits in seat 0)."""

    round: int
    match: int
    pair: int
    seat_order: int


@dataclass(frozen=True)
class GameSpec:
    """A game the bracket wants played: its key and the entrants by seat."""

    key: GameKey
    seats: tuple[int, int]


@dataclass(frozen=True)
class Match:
    """A match as the results so far leave it. `sides` are entrants (None: not known yet,
    or a bye); `points` are the sides' points over complete game pairs."""

    round: int
    index: int
    sides: tuple[int | None, int | None]
    bye: bool = False
    points: tuple[float, float] = (0.0, 0.0)
    pairs_played: int = 0
    winner: int | None = None
    #: how it was decided: "bye", "points", "seed" (level after every tie-break), "forfeit" (a
    #: side was disqualified before its games decided it), "" undecided
    decided_by: str = ""


@dataclass(frozen=True)
class Bracket:
    """A bracket's state: every match by round, the champion once known, the games wanted now
    (both sides known, the match undecided, not recorded yet)."""

    entrants: int
    rules: Rules
    rounds: tuple[tuple[Match, ...], ...]
    champion: int | None
    wanted: tuple[GameSpec, ...]

    @property
    def matches(self) -> list[Match]:
        return [m for r in self.rounds for m in r]

    def least_games_left(self) -> int:
        """Games still to play at the least (no more tie-breaks than recorded already): the
        undecided matches' regular pairs not recorded yet."""
        left = 0
        for m in self.matches:
            if m.winner is None:
                left += 2 * max(0, self.rules.pairs - m.pairs_played)
        return left


def size_of(entrants: int) -> int:
    """The bracket's size: the smallest power of two holding every entrant."""
    size = 1
    while size < entrants:
        size *= 2
    return size


def seed_order(size: int) -> list[int]:
    """Seeds by bracket position (size a power of two): round 1's match m is positions 2m and
    2m+1, and seeds s and s' meet in round 1 only when s + s' = size - 1."""
    order = [0]
    while len(order) < size:
        n = 2 * len(order)
        order = [x for s in order for x in (s, n - 1 - s)]
    return order


def match_games(rnd: int, index: int, pair: int, sides: tuple[int, int]) -> list[GameSpec]:
    """A game pair of a match: the first side in seat 0, then the seats swapped."""
    a, b = sides
    return [
        GameSpec(GameKey(rnd, index, pair, 0), (a, b)),
        GameSpec(GameKey(rnd, index, pair, 1), (b, a)),
    ]


def bracket(
    entrants: int,
    rules: Rules,
    results: Mapping[GameKey, int | None],
    forfeits: frozenset[int] = frozenset(),
) -> Bracket:
    """The bracket of `entrants` seeds under `rules`, given the recorded games' winners and
    the entrants disqualified since (`forfeits`).

    A result for a game the bracket never wanted (another bracket's, or a side that does not
    sit in it) is ignored, so a results file or a league holding other games does no harm.
    """
    if entrants < 1:
        raise BracketError(f"a bracket needs at least one entrant, got {entrants}")
    size = size_of(entrants)
    order = seed_order(size)
    rounds: list[tuple[Match, ...]] = []
    wanted: list[GameSpec] = []
    current: list[tuple[int | None, int | None]] = [
        (_entrant(order[2 * m], entrants), _entrant(order[2 * m + 1], entrants))
        for m in range(size // 2)
    ]
    rnd = 1
    while current:
        played = [
            _match(rnd, i, sides, rules, results, wanted, forfeits)
            for i, sides in enumerate(current)
        ]
        rounds.append(tuple(played))
        current = [
            (played[2 * m].winner, played[2 * m + 1].winner) for m in range(len(played) // 2)
        ]
        rnd += 1
    if rounds:
        champion = rounds[-1][0].winner
    else:  # one entrant: champion without a game
        champion = 0
    return Bracket(entrants, rules, tuple(rounds), champion, tuple(wanted))


def _entrant(seed: int, entrants: int) -> int | None:
    return seed if seed < entrants else None


def _match(
    rnd: int,
    index: int,
    sides: tuple[int | None, int | None],
    rules: Rules,
    results: Mapping[GameKey, int | None],
    wanted: list[GameSpec],
    forfeits: frozenset[int] = frozenset(),
) -> Match:
    a, b = sides
    if a is None or b is None or not {a, b} & forfeits:
        return _played(rnd, index, sides, rules, results, wanted)
    m = _played(rnd, index, sides, rules, results, [])
    if m.winner is not None:  # decided by its games before the disqualification: it stands
        return m
    if a in forfeits and b in forfeits:
        winner = min(a, b)
    else:
        winner = b if a in forfeits else a
    return Match(rnd, index, sides, False, m.points, m.pairs_played, winner, "forfeit")


def _played(
    rnd: int,
    index: int,
    sides: tuple[int | None, int | None],
    rules: Rules,
    results: Mapping[GameKey, int | None],
    wanted: list[GameSpec],
) -> Match:
    """A match as its recorded games leave it (its unrecorded games wanted)."""
    a, b = sides
    if rnd == 1 and (a is None) != (b is None):
        return Match(rnd, index, sides, bye=True, winner=a if b is None else b, decided_by="bye")
    if a is None or b is None:
        return Match(rnd, index, sides)  # waits for an earlier round
    points = [0.0, 0.0]
    complete = 0
    missing: list[GameSpec] = []
    for pair in range(rules.pairs):
        got = _pair(match_games(rnd, index, pair, (a, b)), results, missing)
        if got is not None:
            complete += 1
            points[0] += got[0]
            points[1] += got[1]
    if missing:  # the regular pairs are played before any tie-break
        wanted.extend(missing)
        return Match(rnd, index, sides, points=(points[0], points[1]), pairs_played=complete)
    pair = rules.pairs
    while points[0] == points[1] and pair < rules.pairs + rules.extra_pairs:
        got = _pair(match_games(rnd, index, pair, (a, b)), results, missing)
        if got is None:
            wanted.extend(missing)
            return Match(rnd, index, sides, points=(points[0], points[1]), pairs_played=complete)
        complete += 1
        points[0] += got[0]
        points[1] += got[1]
        pair += 1
    if points[0] != points[1]:
        winner, how = (a if points[0] > points[1] else b), "points"
    else:
        winner, how = min(a, b), "seed"
    return Match(rnd, index, sides, False, (points[0], points[1]), complete, winner, how)


def _pair(
    games: list[GameSpec], results: Mapping[GameKey, int | None], missing: list[GameSpec]
) -> tuple[float, float] | None:
    """The sides' points over one game pair, or None (its unrecorded games go to `missing`)."""
    a, b = games[0].seats
    points = [0.0, 0.0]
    done = True
    for g in games:
        if g.key not in results:
            missing.append(g)
            done = False
            continue
        w = results[g.key]
        if w is None:
            points[0] += 0.5
            points[1] += 0.5
        elif w == a:
            points[0] += 1.0
        elif w == b:
            points[1] += 1.0
        else:  # a winner who does not sit in this game: not this bracket's result
            missing.append(g)
            done = False
    return (points[0], points[1]) if done else None
