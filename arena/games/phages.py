"""Quadraphages and its hex twin Hexaphage: one engine, two boards.

Each player owns two stones. A turn is (a) every own stone moves exactly the number the opponent
announced last, (b) the player announces a new number, (c) every own stone moves exactly that
number; the very first turn of the game is (b) and (c) only. A stone leaving a cell marks it with
its colour, and marked or occupied cells can never be landed on again, so the board fills up
until all four stones are stuck; the player with more marked cells wins.

One action per token, as in the seed's sample games: `a8a5` moves a stone, `3` announces a number
and `----` stands for a stone that has no legal landing at its point in the chosen order. So
every part has exactly one action per stone: a turn is 5 actions (3 on the very first turn),
which keeps `actions_remaining` exact and lets a failed attempt be named in the record, which the
end rule (four consecutive failed attempts covering all four stones) is defined on.

The seed's sample games contain typos, so besides the strict engine this module offers
`replay`, which can also replay a sample leniently: each listed move then simply takes the stone
from its first cell to its second and marks the first (RULES.md lists the known defects).

Internally cells are ints; `_board[c]` is 0 (empty), 1 + seat (a stone) or 3 + seat (a mark).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar

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
from arena.games.geometry import Grid, hex_grid, square_grid

COLOURS = ("X", "O")
PASS = "----"
EMPTY = 0
PHASES = ("a", "b", "c")
_PHASE_A, _PHASE_B, _PHASE_C = 0, 1, 2
_MOVE_RE = re.compile(r"^([a-z]+)(\d+)([a-z]+)(\d+)$")
_SAMPLE_TOKEN_RE = re.compile(r"^(?:[a-z]+\d+[a-z]+\d+|\d+|----|resign)$")


@dataclass(frozen=True, eq=False)
class _Layout:
    """Per-variant tables, built once, so the hot paths only index lists."""

    grid: Grid
    max_number: int
    start: tuple[tuple[int, int], tuple[int, int]]
    # rays[cell] = one tuple per direction: the cells from `cell` (exclusive) to the edge
    rays: tuple[tuple[tuple[int, ...], ...], ...]
    # line[f * n + t] = direction * 64 + distance when t lies on a straight line from f, else -1
    line: tuple[int, ...]
    move_names: tuple[tuple[str, ...], ...]  # move_names[f][t] = "a8a5"
    parse: dict[str, tuple[int, int]] = field(repr=False)  # "a8a5" -> (f, t), every cell pair


def landings(
    layout: Any, board: list[int], opponent: Iterable[int], cell: int, n: int
) -> list[int]:
    """Every legal landing of the stone on `cell` moving exactly n cells, given the opponent's
    two stones; shared with the strong bot's policy, which searches on raw boards."""
    line = layout.line
    size = len(board)
    o0, o1 = opponent
    b0 = line[cell * size + o0]
    b1 = line[cell * size + o1]
    out = []
    for d, ray in enumerate(layout.rays[cell]):
        if len(ray) < n:
            continue
        t = ray[n - 1]
        if board[t]:
            continue
        # an opponent stone strictly between start and landing blocks (distance < n)
        if b0 >= 0 and b0 >> 6 == d and (b0 & 63) < n:
            continue
        if b1 >= 0 and b1 >> 6 == d and (b1 & 63) < n:
            continue
        out.append(t)
    return out


def _make_layout(grid: Grid, max_number: int, start: tuple[tuple[str, str], ...]) -> _Layout:
    n = grid.n_cells
    ndir = len(grid.directions)
    rays = tuple(tuple(tuple(grid.ray(c, d)) for d in range(ndir)) for c in range(n))
    line = [-1] * (n * n)
    for f in range(n):
        for d in range(ndir):
            for k, t in enumerate(rays[f][d]):
                line[f * n + t] = d * 64 + k + 1
    names = grid.names
    move_names = tuple(tuple(names[f] + names[t] for t in range(n)) for f in range(n))
    parse = {move_names[f][t]: (f, t) for f in range(n) for t in range(n) if f != t}
    return _Layout(
        grid=grid,
        max_number=max_number,
        start=(
            (grid.index[start[0][0]], grid.index[start[0][1]]),
            (grid.index[start[1][0]], grid.index[start[1][1]]),
        ),
        rays=rays,
        line=tuple(line),
        move_names=move_names,
        parse=parse,
    )


@cache
def _layout(name: str) -> _Layout:
    if name == "quadraphages":
        return _make_layout(square_grid(9), 8, (("i3", "a7"), ("c1", "g9")))
    if name == "hexaphage":
        return _make_layout(hex_grid(4), 6, (("d3", "j5"), ("g2", "g6")))
    raise GameError(f"no board layout for {name!r}")


class PhageGame(Game):
    """Shared rules of both variants; subclasses only name the board and the number range."""

    colours: ClassVar[tuple[str, str]] = COLOURS
    option_specs: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "max_turns",
            200,
            "turn limit, both players' turns counted; at the limit more marked cells wins",
            parse_int(lo=1, hi=MAX_TURNS),
        ),
    )
    small_options: ClassVar[tuple[dict[str, Any], ...]] = ({"max_turns": 60},)

    @property
    def layout(self) -> _Layout:
        return _layout(self.name)

    def new_initial_state(self) -> PhageState:
        return PhageState(self)

    def state_from_description(self, description: Mapping[str, Any]) -> PhageState:
        try:
            return PhageState._from_description(self, description)
        except KeyError as e:
            raise GameError(
                f"{self.name}: bad position description: missing key or unknown cell {e}"
            ) from None
        except (TypeError, ValueError, IndexError) as e:
            raise GameError(f"{self.name}: bad position description: {e}") from None


class Quadraphages(PhageGame):
    """9x9 square board, numbers 1..8, rook-wise moves."""

    name: ClassVar[str] = "quadraphages"
    title: ClassVar[str] = "Quadraphages"


class Hexaphage(PhageGame):
    """Hex-hex board of side 4 (37 cells), numbers 1..6, six directions."""

    name: ClassVar[str] = "hexaphage"
    title: ClassVar[str] = "Hexaphage"


class PhageState(State):
    """One position; mutable, `clone` copies the few small lists."""

    __slots__ = (
        "L",
        "_announced",
        "_board",
        "_marks",
        "_pending",
        "_phase",
        "_player",
        "_result",
        "_run",
        "_stones",
        "_turn",
        "_turn_actions",
        "game",
    )

    def __init__(self, game: PhageGame, _empty: bool = False) -> None:
        self.game = game
        self.L = game.layout
        if _empty:
            return
        L = self.L
        self._board = [EMPTY] * L.grid.n_cells
        self._stones = [list(L.start[0]), list(L.start[1])]
        for seat in (0, 1):
            for c in self._stones[seat]:
                self._board[c] = 1 + seat
        self._marks = [0, 0]
        self._player = 0
        self._phase = _PHASE_B  # the first turn of the game is (b) and (c) only
        self._pending: list[int] = []
        self._announced: list[int | None] = [None, None]
        self._turn = 1
        self._turn_actions: list[str] = []
        # cells of the stones whose latest consecutive move attempts failed (at most 3 kept:
        # a fourth failure is decided the moment it happens)
        self._run: list[int] = []
        self._result: Result | None = None

    # --- rules helpers ------------------------------------------------------------------
    def _number(self) -> int:
        """The distance stones must move in the current part (a or c)."""
        if self._phase == _PHASE_A:
            return self._announced[1 - self._player]  # type: ignore[return-value]
        return self._announced[self._player]  # type: ignore[return-value]

    def _landings(self, cell: int, n: int, seat: int) -> list[int]:
        """Every legal landing of the stone on `cell` moving exactly n cells."""
        return landings(self.L, self._board, self._stones[1 - seat], cell, n)

    def _can_move(self, cell: int, n: int, seat: int) -> bool:
        return bool(landings(self.L, self._board, self._stones[1 - seat], cell, n))

    def legal_numbers(self) -> list[int]:
        """The numbers the player may announce now: those that let at least one of their stones
        (as they stand at the moment of announcing) move, or every number when none does."""
        seat = self._player
        s0, s1 = self._stones[seat]
        top = self.L.max_number
        good = [
            n
            for n in range(1, top + 1)
            if self._can_move(s0, n, seat) or self._can_move(s1, n, seat)
        ]
        return good or list(range(1, top + 1))

    def _stuck_pending(self) -> int | None:
        """A not-yet-moved stone of this part without a legal landing (the one `----` uses)."""
        n = self._number()
        for c in self._pending:
            if not self._can_move(c, n, self._player):
                return c
        return None

    # --- turn bookkeeping ------------------------------------------------------------------
    def _after_attempt(self) -> None:
        """Advance the phase once every stone of the part has acted."""
        if self._pending or self._result is not None:
            return
        if self._phase == _PHASE_A:
            self._phase = _PHASE_B
            return
        # end of the turn (after part c)
        if self._turn >= self.game.options["max_turns"]:
            self._finish("max_turns", f"the turn limit of {self._turn} turns was reached")
            return
        self._player = 1 - self._player
        self._turn += 1
        self._turn_actions = []
        self._phase = _PHASE_A
        self._pending = list(self._stones[self._player])

    def _fail(self, cell: int) -> None:
        self._pending.remove(cell)
        run = self._run
        run.append(cell)
        if len(run) >= 4 and len(set(run[-4:])) == 4:
            self._finish("blocked", "four consecutive move attempts failed, covering all stones")
        del run[:-3]

    def _finish(self, reason: str, why: str) -> None:
        sx, so = self._marks
        if sx > so:
            winner: int | None = 0
        elif so > sx:
            winner = 1
        else:
            winner = None
        outcome = "draw" if winner is None else f"{COLOURS[winner]} wins"
        self._result = Result(
            winner, reason, (sx, so), f"{why}; X has {sx} marked cells, O {so}: {outcome}"
        )

    def _move(self, f: int, t: int) -> None:
        seat = self._player
        board = self._board
        board[f] = 3 + seat
        board[t] = 1 + seat
        stones = self._stones[seat]
        stones[stones.index(f)] = t
        self._pending.remove(f)
        self._marks[seat] += 1
        self._run.clear()

    # --- State interface -------------------------------------------------------------------
    def current_player(self) -> int | None:
        return None if self._result is not None else self._player

    def turn_number(self) -> int:
        return self._turn

    def actions_remaining(self) -> int:
        if self._result is not None:
            return 0
        if self._phase == _PHASE_A:
            return len(self._pending) + 3
        if self._phase == _PHASE_B:
            return 3
        return len(self._pending)

    def turn_actions(self) -> list[str]:
        return list(self._turn_actions)

    def phase(self) -> str | None:
        """'a', 'b' or 'c' for the part of the turn being played, None once the game is over."""
        return None if self._result is not None else PHASES[self._phase]

    def legal_actions(self) -> list[str]:
        if self._result is not None:
            return []
        if self._phase == _PHASE_B:
            return [str(n) for n in self.legal_numbers()]
        n = self._number()
        seat = self._player
        names = self.L.move_names
        out = []
        stuck = False
        for c in self._pending:
            lands = self._landings(c, n, seat)
            if not lands:
                stuck = True
            row = names[c]
            out.extend(row[t] for t in lands)
        if stuck:
            out.append(PASS)
        return out

    def apply(self, action: str) -> None:
        if self._result is not None:
            raise GameOver(action)
        if not isinstance(action, str):
            raise IllegalAction(str(action), f"an action must be a string, got {action!r}")
        if self._phase == _PHASE_B:
            self._announce(action)
            return
        if action == PASS:
            c = self._stuck_pending()
            if c is None:
                self._reject_pass(action)
            self._turn_actions.append(action)
            self._fail(c)  # type: ignore[arg-type]
            self._after_attempt()
            return
        ft = self.L.parse.get(action)
        if ft is None:
            self._reject_move(action, None)
        f, t = ft  # type: ignore[misc]
        if f not in self._pending or t not in self._landings(f, self._number(), self._player):
            self._reject_move(action, ft)
        self._turn_actions.append(action)
        self._move(f, t)
        self._after_attempt()

    def _announce(self, action: str) -> None:
        top = self.L.max_number
        names = self.L.grid.names
        what = "announce a number" if self._turn > 1 else "open the game by announcing a number"
        if not (action.isascii() and action.isdigit()) or not 1 <= int(action) <= top:
            raise IllegalAction(action, f"now {what} from 1 to {top}, got {action!r}")
        n = int(action)
        legal = self.legal_numbers()
        if n not in legal:
            stones = " and ".join(names[c] for c in self._stones[self._player])
            raise IllegalAction(
                action,
                f"{n} lets neither of your stones ({stones}) move, but "
                f"{', '.join(map(str, legal))} would; announce one of those",
            )
        self._turn_actions.append(str(n))
        self._announced[self._player] = n
        self._phase = _PHASE_C
        self._pending = list(self._stones[self._player])

    def _part_words(self) -> str:
        n = self._number()
        if self._phase == _PHASE_A:
            who = COLOURS[1 - self._player]
            return f"in part (a) your stones move {n}, the number {who} announced"
        return f"in part (c) your stones move {n}, the number you announced"

    def _reject_pass(self, action: str) -> None:
        names = self.L.grid.names
        n = self._number()
        free = ", ".join(
            f"{names[c]} (e.g. {self.L.move_names[c][self._landings(c, n, self._player)[0]]})"
            for c in self._pending
        )
        raise IllegalAction(
            action,
            f"'----' is only for a stone that cannot move, but every stone still to move can: "
            f"{free}; {self._part_words()}",
        )

    def _reject_move(self, action: str, ft: tuple[int, int] | None) -> None:
        L = self.L
        names = L.grid.names
        seat = self._player
        n = self._number()
        if ft is None:
            if action.isdigit():
                raise IllegalAction(
                    action, f"you cannot announce a number now: {self._part_words()}"
                )
            m = _MOVE_RE.match(action)
            if not m:
                raise IllegalAction(
                    action,
                    f"cannot parse {action!r} as a move like "
                    f"'{L.move_names[self._stones[seat][0]][0]}' or as '----'",
                )
            for cell in (m.group(1) + m.group(2), m.group(3) + m.group(4)):
                if cell not in L.grid.index:
                    raise IllegalAction(action, f"{cell} is not a cell of this board")
            raise IllegalAction(action, f"{action} does not move the stone anywhere")
        f, t = ft
        if self._board[f] != 1 + seat:
            what = {
                EMPTY: "is empty",
                2 - seat: f"holds {COLOURS[1 - seat]}'s stone",
                3: "is marked by X",
                4: "is marked by O",
            }[self._board[f]]
            raise IllegalAction(action, f"no stone of yours on {names[f]}: {names[f]} {what}")
        if f not in self._pending:
            raise IllegalAction(action, f"your stone on {names[f]} has already moved in this part")
        code = L.line[f * len(self._board) + t]
        if code < 0:
            raise IllegalAction(
                action, f"{names[f]} and {names[t]} are not on one straight line of the board"
            )
        dist = code & 63
        if dist != n:
            raise IllegalAction(
                action,
                f"{action} travels {dist} cell{'s' if dist != 1 else ''}, but {self._part_words()}",
            )
        ray = L.rays[f][code >> 6]
        for c in ray[: n - 1]:
            if self._board[c] == 2 - seat:
                raise IllegalAction(
                    action, f"{action} passes over {COLOURS[1 - seat]}'s stone on {names[c]}"
                )
        content = self._board[t]
        what = {
            1: "occupied by X's stone",
            2: "occupied by O's stone",
            3: "marked by X",
            4: "marked by O",
        }
        raise IllegalAction(action, f"{action} cannot land on {names[t]}: it is {what[content]}")

    # --- the end ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._result is not None

    def result(self) -> Result | None:
        return self._result

    def scores(self) -> tuple[int, int]:
        return (self._marks[0], self._marks[1])

    def _set_result(self, result: Result) -> None:
        self._result = result

    # --- views -------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        L = self.L
        names = L.grid.names
        glyphs = ("", "X", "O", "x", "o")
        board = self._board
        over = self._result is not None
        return {
            "game": self.game.name,
            "options": dict(self.game.options),
            "turn": self._turn,
            "to_move": self.current_player(),
            "actions_remaining": self.actions_remaining(),
            "turn_actions": list(self._turn_actions),
            "scores": list(self.scores()),
            "board": {"kind": L.grid.kind, "size": L.grid.size, "cells": list(names)},
            "cells": {names[c]: glyphs[v] for c, v in enumerate(board) if v},
            "result": result_to_dict(self._result),
            "stones": {COLOURS[s]: [names[c] for c in self._stones[s]] for s in (0, 1)},
            "marks": {
                COLOURS[s]: [names[c] for c, v in enumerate(board) if v == 3 + s] for s in (0, 1)
            },
            "max_number": L.max_number,
            "phase": None if over else PHASES[self._phase],
            "number": None if over or self._phase == _PHASE_B else self._number(),
            "announced": {COLOURS[s]: self._announced[s] for s in (0, 1)},
            "pending": [names[c] for c in self._pending],
            "failures": [names[c] for c in self._run],
            "player": COLOURS[self._player],
        }

    @classmethod
    def _from_description(cls, game: PhageGame, d: Mapping[str, Any]) -> PhageState:
        if d["game"] != game.name:
            raise ValueError(f"description is of game {d['game']!r}")
        s = cls(game, _empty=True)
        idx = s.L.grid.index
        s._board = [EMPTY] * s.L.grid.n_cells
        code = {"X": 1, "O": 2, "x": 3, "o": 4}
        for name, v in d["cells"].items():
            s._board[idx[name]] = code[v]
        s._stones = [[idx[c] for c in d["stones"][COLOURS[seat]]] for seat in (0, 1)]
        for seat in (0, 1):
            if len(s._stones[seat]) != 2 or any(s._board[c] != 1 + seat for c in s._stones[seat]):
                raise ValueError(f"stones of {COLOURS[seat]} disagree with cells")
        s._marks = [s._board.count(3), s._board.count(4)]
        s._player = COLOURS.index(d["player"])
        s._phase = PHASES.index(d["phase"]) if d["phase"] is not None else _PHASE_A
        s._pending = [idx[c] for c in d["pending"]]
        s._announced = [d["announced"]["X"], d["announced"]["O"]]
        s._turn = int(d["turn"])
        s._turn_actions = [str(a) for a in d["turn_actions"]]
        s._run = [idx[c] for c in d["failures"]]
        s._result = result_from_dict(d["result"])
        if d["phase"] is None and s._result is None:
            raise ValueError("phase is None but the game has no result")
        return s

    def render_text(self) -> str:
        L = self.L
        names = L.grid.names
        glyphs = (".", "X", "O", "x", "o")
        board = self._board
        text = L.grid.render(lambda c: glyphs[board[c]])
        sx, so = self._marks
        lines = [text, f"marked cells: X {sx}, O {so}"]
        ann = ", ".join(
            f"{COLOURS[s]} announced {self._announced[s]}"
            for s in (0, 1)
            if self._announced[s] is not None
        )
        if ann:
            lines.append(ann)
        if self._result is not None:
            lines.append(f"game over ({self._result.reason}): {self._result.detail}")
        else:
            who = COLOURS[self._player]
            if self._phase == _PHASE_B:
                lines.append(f"turn {self._turn}: {who} to announce a number (part b)")
            else:
                part = PHASES[self._phase]
                todo = ", ".join(names[c] for c in self._pending)
                lines.append(
                    f"turn {self._turn}: {who} to move {self._number()} (part {part}); "
                    f"stones still to move: {todo}"
                )
        return "\n".join(lines)

    def render_svg(self) -> str:
        board = self._board
        fills = (None, "#222222", "#f8f8f8", "#9db4d8", "#e3b27a")
        texts = ("", "X", "O", "x", "o")
        status = self.render_text().splitlines()[-1]
        return self.L.grid.svg(
            lambda c: fills[board[c]],
            lambda c: texts[board[c]] if board[c] >= 3 else "",
            title=f"{self.game.title}: {status}",
        )

    def key(self) -> Any:
        # a finished game has no phase (a rebuilt one must compare equal)
        return (
            bytes(self._board),
            self._player,
            self._phase if self._result is None else -1,
            tuple(self._pending),
            tuple(self._announced),
            tuple(self._run),
            self._result is not None,
        )

    def clone(self) -> PhageState:
        s = PhageState(self.game, _empty=True)
        s._board = self._board[:]
        s._stones = [self._stones[0][:], self._stones[1][:]]
        s._marks = self._marks[:]
        s._player = self._player
        s._phase = self._phase
        s._pending = self._pending[:]
        s._announced = self._announced[:]
        s._turn = self._turn
        s._turn_actions = self._turn_actions[:]
        s._run = self._run[:]
        s._result = self._result
        return s

    # --- lenient replay of the seed's sample games ------------------------------------------
    def _force(self, action: str) -> None:
        """Play an action whatever the rules say, keeping the turn structure: a move takes the
        mover's stone from its first cell (or, if none stands there, the next stone still to
        move) to its second and marks the first; numbers and `----` are taken as given."""
        if self._result is not None:
            raise GameOver(action)
        if self._phase == _PHASE_B:
            if not (action.isascii() and action.isdigit()):
                raise IllegalAction(action, f"expected a number, got {action!r}")
            self._turn_actions.append(action)
            self._announced[self._player] = int(action)
            self._phase = _PHASE_C
            self._pending = list(self._stones[self._player])
            return
        if action == PASS:
            c = self._stuck_pending()
            self._turn_actions.append(action)
            self._fail(self._pending[0] if c is None else c)
            self._after_attempt()
            return
        ft = self.L.parse.get(action)
        if ft is None:
            raise IllegalAction(action, f"cannot parse {action!r} as a move")
        f, t = ft
        seat = self._player
        board = self._board
        stones = self._stones[seat]
        src = f if f in self._pending else self._pending[0]
        for cell in (f, t):  # whatever stood or was marked there gives way
            if board[cell] in (3, 4):
                self._marks[board[cell] - 3] -= 1
        board[src] = EMPTY
        board[f] = 3 + seat
        self._marks[seat] += 1
        board[t] = 1 + seat
        stones[stones.index(src)] = t
        self._pending.remove(src)
        self._run.clear()
        self._turn_actions.append(action)
        self._after_attempt()


@dataclass
class Rejection:
    """One action of a replayed game that the strict rules refuse."""

    index: int  # position in the replayed action list
    turn: int
    player: str  # "X" or "O"
    action: str
    message: str


@dataclass
class Replay:
    state: PhageState
    rejections: list[Rejection]


def sample_actions(text: str) -> list[str]:
    """The actions of a sample game written in the seed's table style, in playing order.

    The seed writes one line per move pair (`2.  a8a5  i2i5  3  a5a2  i5i8    f2f5 ...`), with
    `....` for parts that did not happen and words like `and wins 40-39`; reading the tokens left
    to right and keeping only actions (moves, numbers, `----`, `resign`) gives the game in order.
    """
    out = []
    for line in text.splitlines():
        out.extend(tok for tok in line.split() if _SAMPLE_TOKEN_RE.match(tok))
    return out


def replay(game: PhageGame, actions: Iterable[str], lenient: bool = False) -> Replay:
    """Replay a game from the start.

    Strict (`lenient=False`): every action goes through `apply`; the first illegal one raises
    IllegalAction. Lenient: an action `apply` refuses is recorded as a Rejection and then forced
    (see `PhageState._force`), so later actions are again checked strictly against the position
    the sample describes. `resign` makes the player to move resign.
    """
    state = game.new_initial_state()
    rejections: list[Rejection] = []
    for i, action in enumerate(actions):
        if action == "resign":
            state.resign(state._player)
            continue
        try:
            state.apply(action)
        except IllegalAction as e:
            if not lenient or isinstance(e, GameOver):
                raise
            rejections.append(Rejection(i, state._turn, COLOURS[state._player], action, e.message))
            state._force(action)
    return Replay(state, rejections)
