"""Stripes! (Marino Carpignano, 2016): colour one-cell-wide stripes that touch only at corners.

The Italian seed's clauses a)-g) and the decisions of RULES.md, in short: the centre cell is the
origin and is never coloured; a stripe is a straight run of uncoloured cells; a player's first
stripe is 1x2 and touches the origin at a corner only; every later stripe touches the origin or
an own stripe at a corner only (diagonal adjacency), never shares an edge with an own stripe, and
is exactly one cell longer or shorter than EACH own stripe it touches diagonally. The first
player who cannot colour a stripe loses; the winner then keeps colouring until stuck too.

Why the data layout: a later stripe can only lie on a row or column that holds an *anchor*, a
free cell touching an own stripe (or the origin) at a corner, so legal-move generation scans only
those lines and, within a line, only runs of cells the player may colour at all (uncoloured, not
the origin, not edge-adjacent to an own stripe). `blocked[seat]` (edge-adjacent to an own stripe)
is kept incrementally; which own stripes a cell touches diagonally is four lookups of `stripe_at`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from arena.games.base import (
    MAX_TURNS,
    Game,
    OptionSpec,
    Result,
    State,
    parse_int,
    result_from_dict,
    result_to_dict,
)
from arena.games.errors import GameError, GameOver, IllegalAction
from arena.games.geometry import CELL_NAME, Grid, square_grid

_CONTENT = ("red", "blue")
_GLYPH = ("R", "B")
_FILL = ("#d62728", "#1f77b4")
ORIGIN = 3  # owner code of the origin cell (seats colour with seat + 1)
#: the largest board side: columns run a..z then aa..ay (docs/games/stripes.md)
MAX_SIZE = 51


class _Geometry:
    """Per-board-size tables shared by every state: corner neighbours, lines, the origin."""

    def __init__(self, grid: Grid) -> None:
        n = grid.size
        self.grid = grid
        self.n = n
        self.origin = grid.at[(n // 2, n // 2)]
        at = grid.at
        # the four cells sharing only a corner with each cell
        self.diag: tuple[tuple[int, ...], ...] = tuple(
            tuple(
                at[(c + dc, r + dr)]
                for dc, dr in ((-1, -1), (1, -1), (-1, 1), (1, 1))
                if 0 <= c + dc < n and 0 <= r + dr < n
            )
            for c, r in zip(grid.cols, grid.rows, strict=True)
        )
        self.orth = grid.neighbours
        self.origin_diag = frozenset(self.diag[self.origin])
        self.origin_orth = frozenset(self.orth[self.origin])
        self.rows = tuple(tuple(at[(c, r)] for c in range(n)) for r in range(n))
        self.cols = tuple(tuple(at[(c, r)] for r in range(n)) for c in range(n))
        # the eight possible first stripes: a corner cell of the origin and one cell outward
        oc, orow = n // 2, n // 2
        firsts = []
        for dc, dr in ((-1, -1), (1, -1), (-1, 1), (1, 1)):
            corner = (oc + dc, orow + dr)
            for ext in ((oc + 2 * dc, orow + dr), (oc + dc, orow + 2 * dr)):
                cells = tuple(sorted((at[corner], at[ext])))
                firsts.append(cells)
        self.firsts = tuple(sorted(firsts))

    def stripe_name(self, cells: tuple[int, ...]) -> str:
        names = self.grid.names
        if len(cells) == 1:
            return names[cells[0]]
        return f"{names[cells[0]]}-{names[cells[-1]]}"


_GEOMETRY: dict[int, _Geometry] = {}


def _geometry(size: int) -> _Geometry:
    geo = _GEOMETRY.get(size)
    if geo is None:
        geo = _GEOMETRY[size] = _Geometry(square_grid(size))
    return geo


class Stripes(Game):
    """Stripes! on an odd square board of side >= 13, the centre cell being the origin."""

    name = "stripes"
    title = "Stripes!"
    colours = ("red", "blue")
    option_specs = (
        OptionSpec(
            "size",
            13,
            f"board side: an odd number from 13 to {MAX_SIZE}",
            parse_int(13, MAX_SIZE, odd=True),
        ),
        OptionSpec(
            "max_turns",
            400,
            "turn limit (stripes coloured); then more cells wins unless a player is already stuck",
            parse_int(1, MAX_TURNS),
        ),
    )
    small_options = ({"max_turns": 80},)

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.geo = _geometry(self.options["size"])
        self.grid = self.geo.grid

    def new_initial_state(self) -> StripesState:
        return StripesState(self)

    def state_from_description(self, description: Mapping[str, Any]) -> StripesState:
        d = description
        if d.get("game") != self.name:
            raise GameError(f"not a {self.name} description: game is {d.get('game')!r}")
        st = StripesState(self)
        for seat in (0, 1):
            for text in d["stripes"][seat]:
                cells = st._parse(text, text)
                if cells is None:
                    raise GameError(f"bad stripe {text!r} in description")
                st._colour(cells, seat)
        loser = d.get("loser")
        st._loser = None if loser is None else int(loser)
        result = result_from_dict(d.get("result"))
        st._result = result
        turn = int(d["turn"])
        st._turns_played = turn if result is not None else turn - 1
        if d["to_move"] is not None:
            st._to_move = int(d["to_move"])
        return st


class StripesState(State):
    """A position: who owns each cell, every stripe, who is stuck, whose turn."""

    __slots__ = (
        "_blocked",
        "_counts",
        "_loser",
        "_owner",
        "_result",
        "_stripe_at",
        "_stripes",
        "_to_move",
        "_turns_played",
        "game",
        "geo",
    )

    def __init__(self, game: Stripes, _blank: bool = False) -> None:
        self.game = game
        self.geo = game.geo
        if _blank:
            return
        n = self.geo.grid.n_cells
        self._owner = bytearray(n)  # 0 free, seat + 1 coloured, ORIGIN
        self._owner[self.geo.origin] = ORIGIN
        self._stripe_at = [-1] * n  # index into the owner's stripe list
        # per seat: 1 where a cell shares an edge with one of that seat's stripes
        self._blocked = (bytearray(n), bytearray(n))
        self._stripes: tuple[list[tuple[int, ...]], list[tuple[int, ...]]] = ([], [])
        self._counts = [0, 0]
        self._loser: int | None = None  # the first player found unable to colour a stripe
        self._to_move = 0
        self._turns_played = 0
        self._result: Result | None = None

    # --- board updates -----------------------------------------------------------------
    def _colour(self, cells: tuple[int, ...], seat: int) -> None:
        owner = self._owner
        stripe_at = self._stripe_at
        blocked = self._blocked[seat]
        orth = self.geo.orth
        idx = len(self._stripes[seat])
        self._stripes[seat].append(cells)
        for c in cells:
            owner[c] = seat + 1
            stripe_at[c] = idx
            for m in orth[c]:
                blocked[m] = 1
        self._counts[seat] += len(cells)

    # --- turn bookkeeping --------------------------------------------------------------
    def current_player(self) -> int | None:
        return None if self._result is not None else self._to_move

    def turn_number(self) -> int:
        return self._turns_played + (0 if self._result is not None else 1)

    def actions_remaining(self) -> int:
        return 0 if self._result is not None else 1

    def turn_actions(self) -> list[str]:
        return []

    # --- move generation ---------------------------------------------------------------
    def _iter_legal(self, seat: int) -> Iterator[tuple[int, ...]]:
        """Every legal stripe of `seat` as a cell tuple, lowest cell first, in a fixed order:
        horizontal runs row by row, then vertical ones (length >= 2) column by column."""
        geo = self.geo
        owner = self._owner
        mine = self._stripes[seat]
        if not mine:
            for cells in geo.firsts:
                if owner[cells[0]] == 0 and owner[cells[1]] == 0:
                    yield cells
            return
        blocked = self._blocked[seat]
        diag = geo.diag
        mark = seat + 1
        # anchors: free cells touching an own stripe (or the origin) at a corner only
        anchors = set()
        for cells in mine:
            for c in cells:
                for d in diag[c]:
                    if owner[d] == 0 and not blocked[d]:
                        anchors.add(d)
        for d in geo.origin_diag:
            if owner[d] == 0 and not blocked[d]:
                anchors.add(d)
        if not anchors:
            return
        grid = geo.grid
        rows = sorted({grid.rows[a] for a in anchors})
        cols = sorted({grid.cols[a] for a in anchors})
        stripe_at = self._stripe_at
        lengths = [len(s) for s in mine]
        origin_diag = geo.origin_diag
        origin_orth = geo.origin_orth
        for horizontal, lines in (
            (True, [geo.rows[r] for r in rows]),
            (False, [geo.cols[c] for c in cols]),
        ):
            min_len = 1 if horizontal else 2
            for line in lines:
                n = len(line)
                i = 0
                while i < n:
                    # a maximal run of cells this player may colour
                    if owner[line[i]] != 0 or blocked[line[i]]:
                        i += 1
                        continue
                    j = i
                    while j < n and owner[line[j]] == 0 and not blocked[line[j]]:
                        j += 1
                    run = line[i:j]
                    i = j
                    last_anchor = -1
                    for k, c in enumerate(run):
                        if c in anchors:
                            last_anchor = k
                    if last_anchor < 0:
                        continue
                    # per cell: own stripes touched at a corner
                    touch = [{stripe_at[d] for d in diag[c] if owner[d] == mark} for c in run]
                    for a in range(last_anchor + 1):
                        seen: set[int] = set()
                        lens: set[int] = set()  # distinct lengths of the touched stripes
                        lo = 0  # the shortest of them
                        od = oo = False
                        for b in range(a, len(run)):
                            c = run[b]
                            for t in touch[b]:
                                if t not in seen:
                                    seen.add(t)
                                    ln = lengths[t]
                                    if not lens or ln < lo:
                                        lo = ln
                                    lens.add(ln)
                            if c in origin_diag:
                                od = True
                            elif c in origin_orth:
                                oo = True
                            size = b - a + 1
                            if seen:
                                if size > lo + 1:
                                    break  # longer only breaks rule e) harder
                                # rule e): every touched length is size - 1 or size + 1
                                if size >= min_len and (
                                    (len(lens) == 1 and (size == lo + 1 or size == lo - 1))
                                    or (len(lens) == 2 and size == lo + 1 and lo + 2 in lens)
                                ):
                                    yield tuple(run[a : b + 1])
                            elif od and not oo:
                                if size >= min_len:
                                    yield tuple(run[a : b + 1])
                            elif b >= last_anchor:
                                break  # no anchor left to make this stripe touch anything

    def _has_legal(self, seat: int) -> bool:
        return next(self._iter_legal(seat), None) is not None

    def stripe_count(self, seat: int) -> int:
        """How many stripes `seat` could colour now, whoever is to move (policies use it as
        mobility; the rules only ever ask for the player to move)."""
        return sum(1 for _ in self._iter_legal(seat))

    def legal_stripes(self, seat: int) -> list[tuple[int, ...]]:
        """The stripes `seat` could colour now as cell-index tuples (lowest first), whoever is
        to move: the same set as `legal_actions` for the player to move, without the names."""
        return list(self._iter_legal(seat))

    def legal_actions(self) -> list[str]:
        if self._result is not None:
            return []
        name = self.geo.stripe_name
        return [name(cells) for cells in self._iter_legal(self._to_move)]

    # --- parsing and validation --------------------------------------------------------
    def _parse(self, action: str, text: str) -> tuple[int, ...] | None:
        """Cells of a stripe in notation, lowest first; IllegalAction for what is not one."""
        grid = self.geo.grid
        parts = text.split("-")
        if len(parts) not in (1, 2) or not all(parts):
            raise IllegalAction(
                action, f"cannot parse {action!r} as a stripe (expected c4-c7, c4-f4 or d5)"
            )
        cells = []
        for p in parts:
            c = grid.index.get(p)
            if c is None:
                if CELL_NAME.match(p):
                    n = grid.size
                    raise IllegalAction(action, f"{p} is not on the {n}x{n} board")
                raise IllegalAction(action, f"cannot parse {p!r} as a cell")
            cells.append(c)
        if len(cells) == 1 or cells[0] == cells[1]:
            return (cells[0],)
        a, b = sorted(cells)
        ca, ra, cb, rb = grid.cols[a], grid.rows[a], grid.cols[b], grid.rows[b]
        at = grid.at
        if ra == rb:
            return tuple(at[(c, ra)] for c in range(ca, cb + 1))
        if ca == cb:
            return tuple(at[(ca, r)] for r in range(ra, rb + 1))
        raise IllegalAction(action, f"{text} is not a straight horizontal or vertical stripe")

    def _check(self, action: str, cells: tuple[int, ...], seat: int) -> None:
        """Raise IllegalAction naming the first clause the stripe breaks."""
        geo = self.geo
        names = geo.grid.names
        owner = self._owner
        label = f"stripe {geo.stripe_name(cells)}"
        for c in cells:
            if owner[c] == ORIGIN:
                raise IllegalAction(action, f"{names[c]} is the origin")
            if owner[c] != 0:
                raise IllegalAction(action, f"{names[c]} is already coloured")
        mark = seat + 1
        mine = self._stripes[seat]
        stripe_at = self._stripe_at
        for c in cells:
            for m in geo.orth[c]:
                if owner[m] == mark:
                    other = geo.stripe_name(mine[stripe_at[m]])
                    raise IllegalAction(
                        action, f"{label} is orthogonally adjacent to your stripe {other}"
                    )
        origin_name = names[geo.origin]
        at_origin = any(c in geo.origin_diag for c in cells) and not any(
            c in geo.origin_orth for c in cells
        )
        if not mine:
            if len(cells) != 2:
                raise IllegalAction(
                    action,
                    f"your first stripe must be 1x2 (2 cells) but {label} has {len(cells)}",
                )
            if not at_origin:
                raise IllegalAction(
                    action,
                    f"your first stripe must be diagonally adjacent to the origin {origin_name}",
                )
            return
        touched = sorted({stripe_at[d] for c in cells for d in geo.diag[c] if owner[d] == mark})
        if not touched and not at_origin:
            raise IllegalAction(
                action,
                f"{label} is not diagonally adjacent to the origin {origin_name} "
                "or to one of your stripes",
            )
        size = len(cells)
        for t in touched:
            ln = len(mine[t])
            if abs(size - ln) != 1:
                need = f"{ln - 1} or {ln + 1}" if ln > 1 else "2"
                raise IllegalAction(
                    action,
                    f"{label} has length {size} but your diagonally adjacent stripe "
                    f"{geo.stripe_name(mine[t])} has length {ln} (needs {need})",
                )

    def apply(self, action: str) -> None:
        if self._result is not None:
            raise GameOver(action)
        text = action.strip().lower() if isinstance(action, str) else ""
        cells = self._parse(action, text)
        assert cells is not None
        self.apply_stripe(cells, action)

    def apply_stripe(self, cells: tuple[int, ...], action: str | None = None) -> None:
        """`apply` for a stripe given as cell indices (as `legal_stripes` lists them): the same
        validation, without the notation round trip, for policies that search."""
        if self._result is not None:
            raise GameOver(action or self.geo.stripe_name(cells))
        seat = self._to_move
        self._check(action or self.geo.stripe_name(cells), cells, seat)
        self._colour(cells, seat)
        self._turns_played += 1
        self._advance(seat)

    def solo_copy(self, seat: int) -> StripesState:
        """A copy in which `seat` is to move and the other player counts as stuck, so `seat`
        keeps every turn: policies use it to count how many stripes a player could still
        colour alone. Not a position of the real game."""
        st = self.clone()
        st._result = None
        st._to_move = seat
        st._loser = 1 - seat
        st._turns_played = 0
        return st

    def _advance(self, seat: int) -> None:
        """Pass the turn on; the first player without a stripe loses, the winner plays on."""
        other = 1 - seat
        if self._loser is None:
            if self._has_legal(other):
                self._to_move = other
                self._check_limit()
                return
            self._loser = other
        # here the loser is `other` (a stuck loser never moves again), so `seat` plays on
        if self._has_legal(seat):
            self._to_move = seat
            self._check_limit()
            return
        col = self.game.colours
        self._result = Result(
            seat,
            "stuck",
            self.scores(),
            f"{col[other]} could not colour a stripe and lost; {col[seat]} coloured on until "
            f"stuck too ({self._counts[0]}-{self._counts[1]} cells)",
        )

    def _check_limit(self) -> None:
        if self._turns_played < self.game.options["max_turns"]:
            return
        s = self.scores()
        col = self.game.colours
        if self._loser is not None:
            w = 1 - self._loser
            why = f"{col[self._loser]} was already stuck and had lost"
        elif s[0] != s[1]:
            w = 0 if s[0] > s[1] else 1
            why = f"{col[w]} coloured more cells"
        else:
            w = None
            why = "equal cells, a draw"
        self._result = Result(w, "max_turns", s, f"turn limit reached; {why}")

    # --- the end -----------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._result is not None

    def result(self) -> Result | None:
        return self._result

    def scores(self) -> tuple[int, int]:
        return (self._counts[0], self._counts[1])

    def _set_result(self, result: Result) -> None:
        self._result = result

    def stripes(self, seat: int) -> list[str]:
        """A seat's stripes in notation, in the order coloured."""
        return [self.geo.stripe_name(c) for c in self._stripes[seat]]

    def loser(self) -> int | None:
        """The seat that got stuck first and lost (the winner may still be playing on)."""
        return self._loser

    # --- views -------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        names = self.geo.grid.names
        return {
            "game": self.game.name,
            "options": dict(self.game.options),
            "turn": self.turn_number(),
            "to_move": self.current_player(),
            "actions_remaining": self.actions_remaining(),
            "turn_actions": [],
            "scores": list(self.scores()),
            "board": {"kind": "square", "size": self.geo.n, "cells": list(names)},
            "cells": {names[c]: _CONTENT[v - 1] for c, v in enumerate(self._owner) if v in (1, 2)},
            "result": result_to_dict(self._result),
            "origin": names[self.geo.origin],
            "stripes": [self.stripes(0), self.stripes(1)],
            "loser": self._loser,
        }

    def render_text(self) -> str:
        owner = self._owner
        glyph = (".", *_GLYPH, "+")
        lines = [self.geo.grid.render(lambda c: glyph[owner[c]])]
        s = self.scores()
        lines.append(
            f"red (R) {s[0]} cells in {len(self._stripes[0])} stripes   "
            f"blue (B) {s[1]} cells in {len(self._stripes[1])} stripes   origin + "
            f"{self.geo.grid.names[self.geo.origin]}"
        )
        if self._result is not None:
            lines.append(f"game over: {self._result.detail}")
        else:
            extra = ""
            other = 1 - self._to_move
            if self._loser == other:
                extra = f" ({self.game.colours[other]} is stuck and has lost)"
            lines.append(
                f"turn {self.turn_number()}: {self.game.colours[self._to_move]} to move{extra}"
            )
        return "\n".join(lines)

    def render_svg(self) -> str:
        owner = self._owner
        fills = (None, *_FILL, "#000000")
        s = self.scores()
        return self.geo.grid.svg(
            lambda c: fills[owner[c]], title=f"Stripes!: red {s[0]}, blue {s[1]}"
        )

    def key(self) -> Any:
        return (bytes(self._owner), self.current_player(), self._loser)

    def clone(self) -> StripesState:
        st = StripesState(self.game, _blank=True)
        st._owner = self._owner[:]
        st._stripe_at = self._stripe_at[:]
        st._blocked = (self._blocked[0][:], self._blocked[1][:])
        st._stripes = (self._stripes[0][:], self._stripes[1][:])
        st._counts = self._counts[:]
        st._loser = self._loser
        st._to_move = self._to_move
        st._turns_played = self._turns_played
        st._result = self._result
        return st
