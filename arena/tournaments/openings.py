"""Openings as text: one line per opening, turns separated by `;`, actions by spaces or commas.

    e5 ; -e5 c3 ; g7,-c3

No action of any game's notation contains a space, a comma or a semicolon (docs/games/), so the
syntax is unambiguous for every variant. Every turn but the last is complete; the last may be
partial, so that the bots start in the middle of a turn (`e5 ; -e5`: Papagra's second turn
takes two actions), and ends with `...` (TURN_GOES_ON, never an action) where the turn could end
but goes on with its optional actions. The referee plays them (arena/referee/match.py,
`play_opening`), and the record keeps them as written. The same text is what
`arena match --opening` takes and what `arena tournament record --command` prints, so a
tournament game's position can be replayed with a new build of a bot.

An openings file holds one opening per line for one game; blank lines and lines starting with
`#` are skipped. Every opening is played through the rules engine when the file is loaded, so
a typo fails at once with its line number instead of voiding games later. A tournament plays
the file's openings in order (or in an order shuffled by a seed), one per game pair, both
seats, starting over when they run out.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

Opening = tuple[tuple[str, ...], ...]
ORDERS: tuple[str, ...] = ("sequential", "random")


class OpeningError(ArenaError):
    """An opening that cannot be parsed or played."""


def parse_opening(text: str) -> Opening:
    """`"e5 ; -e5 c3"` -> (("e5",), ("-e5", "c3")). An empty text is the empty opening."""
    if not text.strip():
        return ()
    turns = []
    for n, part in enumerate(text.split(";"), 1):
        actions = tuple(a for a in part.replace(",", " ").split() if a)
        if not actions:
            raise OpeningError(f"opening {text!r}: turn {n} is empty")
        turns.append(actions)
    return tuple(turns)


def format_opening(opening: Sequence[Sequence[str]]) -> str:
    return " ; ".join(" ".join(turn) for turn in opening)


def check_opening(game: str, options: Mapping[str, Any], opening: Opening) -> None:
    """Play the opening with the rules engine as the referee will (arena/referee/match.py)."""
    from arena.games import make_game
    from arena.referee.match import play_opening

    try:
        play_opening(make_game(game, dict(options)).new_initial_state(), opening)
    except ArenaError as e:
        raise OpeningError(str(e)) from None


def load_openings(path: Path, game: str, options: Mapping[str, Any]) -> tuple[Opening, ...]:
    """Every opening of a file, checked against the game; errors name the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise OpeningError(f"{path}: cannot read the openings file: {e.strerror}") from None
    except UnicodeDecodeError:
        raise OpeningError(f"{path}: not a UTF-8 text file") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            opening = parse_opening(line)
            check_opening(game, options, opening)
        except OpeningError as e:
            raise OpeningError(f"{path}:{n}: {e}") from None
        out.append(opening)
    if not out:
        raise OpeningError(f"{path}: no openings in the file")
    return tuple(out)


def digest(openings: Sequence[Opening]) -> str:
    """Identifies a list of openings (a changed file changes the tournament)."""
    return hashlib.sha256("\n".join(format_opening(o) for o in openings).encode()).hexdigest()[:16]


def pick(openings: Sequence[Opening], order: str, seed: int, label: str, index: int) -> Opening:
    """The opening of the `index`-th game pair of game `label` (counted over all rounds).

    Sequential: the file's order, starting over at the end. Random: each pass over the file
    in an order shuffled from (seed, label, pass), so every opening is used once per pass.
    """
    n = len(openings)
    cycle, pos = divmod(index, n)
    if order == "sequential":
        return openings[pos]
    perm = list(range(n))
    random.Random(f"{seed}/openings/{label}/{cycle}").shuffle(perm)
    return openings[perm[pos]]
