"""Wrigglers Squared (Dale W. Walton, 2022): grow two long unbranched chains, score their product.

The seed is the Ludii portal page; RULES.md fixes what it leaves open. A turn is one action: add a
stone next to at most two own stones, remove an own stone that has three or more own neighbours,
or pass. By default a pass is only legal when neither is available ("otherwise he passes"); the
`ludii_rules` option follows the designer's Ludii file instead: pass at any time, but no player
removes on two of their turns in a row.

The engine keeps, per colour, how many own stones touch each point. That single array answers
both legality questions in O(1), so `apply` never scans the board except to verify a pass.
The referee asks for the position (with both colours' chains) and often the legal list every
turn, and a scan of a 19x19 board in Python was most of its time per turn, so each stone added
or lifted also updates, around that point only:

- per colour, which points are legal adds and removals (bytearrays of flags), and the legal
  adds as a list in board order, which `legal_actions` copies;
- the described cells (point -> colour), a dict that describe() copies;
- per colour, its groups as a union-find forest with each group's size and whether any stone
  of it touches three own stones (a branch): an add merges the groups it touches, a lift (rarer)
  refills the pieces of its group from the lifted point's neighbours; and the sizes of the
  groups that are chains, kept sorted. `chain_sizes`, the plain flood fill, stays as the
  definition the tests compare the forest with.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping
from functools import cache
from itertools import compress
from typing import Any

from arena.games.base import (
    MAX_TURNS,
    Game,
    OptionSpec,
    Result,
    State,
    parse_bool,
    parse_choice,
    parse_int,
    result_from_dict,
    result_to_dict,
)
from arena.games.errors import GameError, GameOver, IllegalAction
from arena.games.geometry import CELL_NAME, Grid, square_grid

# cell content in describe() and glyph in render_text(), by seat
_CONTENT = ("dark", "light")
_GLYPH = ("x", "o")
_FILL = ("#222222", "#f8f8f8")


def chain_sizes(board: list[int], own: list[int], seat: int, grid: Grid) -> list[int]:
    """Sizes of `seat`'s scoring chains, largest first.

    A chain is a maximal orthogonally connected group of own stones in which no stone touches more
    than two own stones; a group with an overcrowded stone is a branch, not a chain, and scores
    nothing (it is skipped, not split into pieces).
    """
    mark = seat + 1
    seen = bytearray(len(board))
    nbrs = grid.neighbours
    sizes = []
    for start, v in enumerate(board):
        if v != mark or seen[start]:
            continue
        seen[start] = 1
        stack = [start]
        size = 0
        ok = True
        while stack:
            c = stack.pop()
            size += 1
            if own[c] > 2:
                ok = False
            for n in nbrs[c]:
                if board[n] == mark and not seen[n]:
                    seen[n] = 1
                    stack.append(n)
        if ok:
            sizes.append(size)
    sizes.sort(reverse=True)
    return sizes


def score_of(sizes: list[int]) -> int:
    """Product of the two largest chains; a single chain (or none) scores 0."""
    return sizes[0] * sizes[1] if len(sizes) >= 2 else 0


class Wrigglers(Game):
    """Wrigglers Squared on a 9x9, 13x13 or 19x19 square grid of points."""

    name = "wrigglers"
    title = "Wrigglers Squared"
    colours = ("dark", "light")
    option_specs = (
        OptionSpec("size", 9, "board side: 9, 13 or 19 points", parse_choice(9, 13, 19)),
        OptionSpec(
            "ludii_rules",
            False,
            "true: pass at any time, but no two removals in a row by one player (Ludii file)",
            parse_bool,
        ),
        OptionSpec(
            "max_turns",
            400,
            "turn limit; then the higher score wins, equal is a draw",
            parse_int(1, MAX_TURNS),
        ),
    )
    small_options = ({"max_turns": 60}, {"max_turns": 60, "ludii_rules": True})

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        self.grid = square_grid(self.options["size"])
        #: the removal of each point, as legal_actions() spells it
        self.removals = _removals(self.options["size"])
        #: 0 .. n_cells - 1, copied by every new state (faster than a new range's list)
        self.cell_indices = tuple(range(self.grid.n_cells))

    def new_initial_state(self) -> WrigglersState:
        return WrigglersState(self)

    def state_from_description(self, description: Mapping[str, Any]) -> WrigglersState:
        d = description
        if d.get("game") != self.name:
            raise GameError(f"not a {self.name} description: game is {d.get('game')!r}")
        st = WrigglersState(self)
        index = self.grid.index
        for name, content in d["cells"].items():
            if name not in index or content not in _CONTENT:
                raise GameError(f"bad cell entry {name!r}: {content!r}")
            st._place(index[name], _CONTENT.index(content))
        result = result_from_dict(d.get("result"))
        st._result = result
        st._last_action = d.get("last_action")
        st._removed_last = [bool(x) for x in d.get("removed_last_turn", [False, False])]
        turn = int(d["turn"])
        st._turns_played = turn if result is not None else turn - 1
        st._to_move = 0 if d["to_move"] is None else int(d["to_move"])
        if result is not None and d.get("last_mover") is not None:
            # a finished game keeps its last mover in `_to_move` (key() and the tie rule)
            st._to_move = int(d["last_mover"])
        return st


@cache
def _removals(size: int) -> tuple[str, ...]:
    """The removal of each point of a size x size board, made once per size (the referee makes
    a game for every game it plays, and for short games this was a measured part of each)."""
    return tuple("-" + name for name in square_grid(size).names)


class WrigglersState(State):
    """A position: stones, per-colour neighbour counts, whose turn, and the pass history."""

    __slots__ = (
        "_add_cells",
        "_add_names",
        "_addable",
        "_board",
        "_cells",
        "_groups",
        "_last_action",
        "_nb",
        "_parent",
        "_removable",
        "_removed_last",
        "_result",
        "_sizes",
        "_to_move",
        "_turns_played",
        "game",
        "grid",
    )

    def __init__(self, game: Wrigglers, _blank: bool = False) -> None:
        self.game = game
        self.grid = game.grid
        if _blank:
            return
        n = self.grid.n_cells
        self._board = [0] * n  # 0 empty, seat + 1 for a stone
        self._nb = ([0] * n, [0] * n)  # own-stone neighbour counts per seat
        # per seat: 1 where adding (an empty point touching <= 2 own stones) is legal, and
        # where removing (an own stone touching >= 3 own stones) is, as the rules stand
        self._addable = (bytearray(b"\x01") * n, bytearray(b"\x01") * n)
        # per seat, the points flagged in `_addable`, in board order: their indices, and their
        # names (legal_actions copies these; picking them from the flags cost more per turn)
        cells = game.cell_indices
        self._add_cells = (list(cells), list(cells))
        self._add_names = (list(self.grid.names), list(self.grid.names))
        self._removable = (bytearray(n), bytearray(n))
        #: the stones as describe() lists them (point name -> colour), in the order they were
        #: placed: kept up to date stone by stone, a scan for it cost more than the rest of a turn
        self._cells: dict[str, str] = {}
        # per seat: union-find parents of its stones, and root -> (size, is a branch)
        self._parent = (list(cells), list(cells))
        self._groups: tuple[dict[int, tuple[int, bool]], dict[int, tuple[int, bool]]] = ({}, {})
        self._to_move = 0
        self._turns_played = 0
        self._last_action: str | None = None  # the previous turn's action, for pass-pass
        self._removed_last = [False, False]  # per seat: was their own last turn a removal
        self._result: Result | None = None
        #: per seat, the sizes of its chains (groups that are no branch), smallest first:
        #: updated with the groups, as sorting them all for every describe() cost more
        self._sizes: tuple[list[int], list[int]] = ([], [])

    # --- board updates -----------------------------------------------------------------
    def _place(self, cell: int, seat: int) -> None:
        board = self._board
        board[cell] = seat + 1
        self._cells[self.grid.names[cell]] = _CONTENT[seat]
        nb = self._nb[seat]
        set_addable = self._set_addable
        removable = self._removable[seat]
        set_addable(1 - seat, cell, False)
        set_addable(seat, cell, False)
        removable[cell] = nb[cell] >= 3
        mark = seat + 1
        parent = self._parent[seat]
        parent[cell] = cell
        groups = self._groups[seat]
        sizes = self._sizes[seat]
        size = 1
        branch = nb[cell] > 2
        for n in self.grid.neighbours[cell]:
            k = nb[n] = nb[n] + 1
            v = board[n]
            if v == 0:
                if k == 3:  # it touched two before: no longer addable
                    set_addable(seat, n, False)
            elif v == mark:
                removable[n] = k >= 3
                branch = branch or k > 2
                root = self._find(parent, n)
                if root != cell:
                    g_size, g_branch = groups.pop(root)
                    if not g_branch:
                        sizes.remove(g_size)
                    size += g_size
                    branch = branch or g_branch
                    parent[root] = cell
        groups[cell] = (size, branch)
        if not branch:
            insort(sizes, size)

    def _lift(self, cell: int, seat: int) -> None:
        board = self._board
        parent = self._parent[seat]
        groups = self._groups[seat]
        sizes = self._sizes[seat]
        g_size, g_branch = groups.pop(self._find(parent, cell))
        if not g_branch:
            sizes.remove(g_size)
        board[cell] = 0
        del self._cells[self.grid.names[cell]]
        nb = self._nb[seat]
        set_addable = self._set_addable
        self._removable[seat][cell] = 0
        set_addable(seat, cell, nb[cell] <= 2)
        set_addable(1 - seat, cell, self._nb[1 - seat][cell] <= 2)
        removable = self._removable[seat]
        mark = seat + 1
        for n in self.grid.neighbours[cell]:
            k = nb[n] = nb[n] - 1
            v = board[n]
            if v == 0:
                if k == 2:  # it touched three before: addable again
                    set_addable(seat, n, True)
            elif v == mark:
                removable[n] = k >= 3
        # the lifted stone's group falls apart into the pieces around it: refill each
        seen: set[int] = set()
        for start in self.grid.neighbours[cell]:
            if board[start] == mark and start not in seen:
                groups[start] = size, branch = self._refill(start, seat, seen)
                if not branch:
                    insort(sizes, size)

    def _set_addable(self, seat: int, cell: int, flag: bool) -> None:
        """Flag `cell` as an add `seat` may (or may not) make, and keep the lists in step."""
        addable = self._addable[seat]
        if addable[cell] == flag:
            return
        addable[cell] = flag
        cells = self._add_cells[seat]
        i = bisect_left(cells, cell)
        if flag:
            cells.insert(i, cell)
            self._add_names[seat].insert(i, self.grid.names[cell])
        else:
            del cells[i]
            del self._add_names[seat][i]

    def _refill(self, start: int, seat: int, seen: set[int]) -> tuple[int, bool]:
        """Make `start` the root of its group (a flood fill); the group's size and branch flag."""
        board, nb, parent = self._board, self._nb[seat], self._parent[seat]
        nbrs = self.grid.neighbours
        mark = seat + 1
        seen.add(start)
        stack = [start]
        size = 0
        branch = False
        while stack:
            c = stack.pop()
            parent[c] = start
            size += 1
            branch = branch or nb[c] > 2
            for n in nbrs[c]:
                if board[n] == mark and n not in seen:
                    seen.add(n)
                    stack.append(n)
        return size, branch

    @staticmethod
    def _find(parent: list[int], c: int) -> int:
        while parent[c] != c:
            parent[c] = c = parent[parent[c]]
        return c

    # --- turn bookkeeping --------------------------------------------------------------
    def current_player(self) -> int | None:
        return None if self._result is not None else self._to_move

    def turn_number(self) -> int:
        return self._turns_played + (0 if self._result is not None else 1)

    def actions_remaining(self) -> int:
        return 0 if self._result is not None else 1

    def turn_actions(self) -> list[str]:
        return []

    # --- legality ----------------------------------------------------------------------
    def _can_remove(self, seat: int) -> bool:
        return not (self.game.options["ludii_rules"] and self._removed_last[seat])

    def _has_stone_action(self, seat: int) -> str | None:
        """The first add or remove available to `seat` (for the pass check's message)."""
        adds = self._add_names[seat]
        if adds:
            return adds[0]
        if self._can_remove(seat):
            for name in compress(self.grid.names, self._removable[seat]):
                return "-" + name
        return None

    def legal_actions(self) -> list[str]:
        if self._result is not None:
            return []
        seat = self._to_move
        out = self._add_names[seat][:]
        removable = self._removable[seat]
        if 1 in removable and self._can_remove(seat):  # a search in C, mostly finding none
            out += compress(self.game.removals, removable)
        if self.game.options["ludii_rules"] or not out:
            out.append("pass")
        return out

    def _cell(self, action: str, name: str) -> int:
        c = self.grid.index.get(name)
        if c is None:
            if CELL_NAME.match(name):
                n = self.grid.size
                raise IllegalAction(action, f"{name} is not on the {n}x{n} board")
            raise IllegalAction(
                action, f"cannot parse {action!r} as an action (expected e5, -e5 or pass)"
            )
        return c

    def apply(self, action: str) -> None:
        if self._result is not None:
            raise GameOver(action)
        seat = self._to_move
        a = action.strip().lower() if isinstance(action, str) else ""
        if a == "pass":
            if not self.game.options["ludii_rules"]:
                example = self._has_stone_action(seat)
                if example is not None:
                    raise IllegalAction(
                        action,
                        f"you may only pass when you can neither add nor remove a stone "
                        f"(for example {example} is legal)",
                    )
            self._removed_last[seat] = False
            self._finish_turn("pass")
            return
        if a.startswith("-"):
            cell = self._cell(action, a[1:])
            name = self.grid.names[cell]
            v = self._board[cell]
            if v == 0:
                raise IllegalAction(action, f"cannot remove from {name}: it is empty")
            if v != seat + 1:
                raise IllegalAction(action, f"cannot remove {name}: it is not your stone")
            k = self._nb[seat][cell]
            if k < 3:
                raise IllegalAction(
                    action,
                    f"cannot remove {name}: it touches {k} of your stones "
                    "(removal needs 3 or more)",
                )
            if not self._can_remove(seat):
                raise IllegalAction(
                    action,
                    f"cannot remove {name}: you removed a stone on your previous turn "
                    "and two removals in a row are not allowed",
                )
            self._lift(cell, seat)
            self._removed_last[seat] = True
            self._finish_turn("-" + name)
            return
        cell = self._cell(action, a)
        name = self.grid.names[cell]
        if self._board[cell] != 0:
            raise IllegalAction(action, f"{name} is occupied")
        k = self._nb[seat][cell]
        if k > 2:
            raise IllegalAction(
                action, f"cannot add at {name}: it touches {k} of your stones (at most 2 allowed)"
            )
        self._place(cell, seat)
        self._removed_last[seat] = False
        self._finish_turn(name)

    def _finish_turn(self, action: str) -> None:
        seat = self._to_move
        previous = self._last_action
        self._last_action = action
        self._turns_played += 1
        if action == "pass" and previous == "pass":
            s = self.scores()
            if s[0] != s[1]:
                w = 0 if s[0] > s[1] else 1
                self._result = Result(
                    w, "both_passed", s, f"both passed; {self.game.colours[w]} scores more"
                )
            else:
                self._result = Result(
                    seat,
                    "tie_last_pass",
                    s,
                    f"both passed with equal scores; {self.game.colours[seat]} passed last",
                )
            return
        if self._turns_played >= self.game.options["max_turns"]:
            s = self.scores()
            w = None if s[0] == s[1] else (0 if s[0] > s[1] else 1)
            who = "a draw" if w is None else f"{self.game.colours[w]} scores more"
            self._result = Result(w, "max_turns", s, f"turn limit reached; {who}")
            return
        self._to_move = 1 - seat

    # --- the end -----------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._result is not None

    def result(self) -> Result | None:
        return self._result

    def chains(self, seat: int) -> list[int]:
        """The scoring chain sizes of `seat`, largest first (bots and describe use this)."""
        return self._sizes[seat][::-1]

    def board(self) -> list[int]:
        """The points' contents by cell index (0 empty, seat + 1 a stone): a read-only view
        for fast policies, not a copy; `grid` maps indices to names and neighbours."""
        return self._board

    def neighbour_counts(self, seat: int) -> list[int]:
        """Per point, how many of `seat`'s stones touch it: a read-only view, not a copy."""
        return self._nb[seat]

    def _score(self, seat: int) -> int:
        sizes = self._sizes[seat]  # smallest first
        return sizes[-1] * sizes[-2] if len(sizes) >= 2 else 0

    def scores(self) -> tuple[int, int]:
        return (self._score(0), self._score(1))

    def _set_result(self, result: Result) -> None:
        self._result = result

    # --- views -------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        return {
            "game": self.game.name,
            "options": dict(self.game.options),
            "turn": self.turn_number(),
            "to_move": self.current_player(),
            "actions_remaining": self.actions_remaining(),
            "turn_actions": [],
            "scores": list(self.scores()),
            "board": {"kind": "square", "size": self.grid.size, "cells": list(self.grid.names)},
            "cells": self._cells.copy(),
            "result": result_to_dict(self._result),
            "chains": [self.chains(0), self.chains(1)],
            "last_action": self._last_action,
            "last_mover": self._last_mover(),
            "removed_last_turn": list(self._removed_last),
        }

    def _last_mover(self) -> int | None:
        if self._turns_played == 0:
            return None
        return self._to_move if self._result is not None else 1 - self._to_move

    def render_text(self) -> str:
        board = self._board
        glyph = (".", *_GLYPH)
        text = self.grid.render(lambda c: glyph[board[c]])
        s = self.scores()
        ch = [self.chains(0), self.chains(1)]
        lines = [
            text,
            f"dark (x) score {s[0]} chains {ch[0]}   light (o) score {s[1]} chains {ch[1]}",
        ]
        if self._result is not None:
            lines.append(f"game over: {self._result.detail}")
        else:
            lines.append(f"turn {self.turn_number()}: {self.game.colours[self._to_move]} to move")
        return "\n".join(lines)

    def render_svg(self) -> str:
        board = self._board
        s = self.scores()
        return self.grid.svg(
            lambda c: _FILL[board[c] - 1] if board[c] else None,
            title=f"Wrigglers Squared: dark {s[0]}, light {s[1]}",
        )

    def key(self) -> Any:
        return (
            tuple(self._board),
            self._to_move,
            self._last_action == "pass",
            tuple(self._removed_last),
        )

    def clone(self) -> WrigglersState:
        st = WrigglersState(self.game, _blank=True)
        st._board = self._board[:]
        st._nb = (self._nb[0][:], self._nb[1][:])
        st._addable = (self._addable[0][:], self._addable[1][:])
        st._add_cells = (self._add_cells[0][:], self._add_cells[1][:])
        st._add_names = (self._add_names[0][:], self._add_names[1][:])
        st._removable = (self._removable[0][:], self._removable[1][:])
        st._cells = self._cells.copy()
        st._parent = (self._parent[0][:], self._parent[1][:])
        st._groups = (self._groups[0].copy(), self._groups[1].copy())
        st._to_move = self._to_move
        st._turns_played = self._turns_played
        st._last_action = self._last_action
        st._removed_last = self._removed_last[:]
        st._result = self._result
        st._sizes = (self._sizes[0][:], self._sizes[1][:])
        return st
