"""Papagra (Nick Bentley, 2006): build a group of stones whose shape matches an empty region.

RULES.md fixes what the seed leaves open: hex-hex board of side 5 by default (square boards as an
option), maximal groups only, every maximal empty region counts as enclosed, matching is
translation plus rotation but never a mirror image, and the marks move after every single action
for the matched groups that action *created*.

Why the engine looks the way it does: the matched-group question has to be answered after every
action, and a naive answer (flood-fill the whole board, canonicalise every shape, compare) costs
milliseconds in Python. Instead the position is kept as bitboards in an axial-coordinate layout
(one padding column per row, so a translation of a shape is a plain bit shift), plus the current
groups per colour and the current empty regions as component masks. An action touches exactly
one group and one region (merging or splitting them), so only those are recomputed; a group
elsewhere can only become newly matched when a region shape appears that did not exist before,
which is checked only for the few new regions. Canonical shape forms are computed only when a
group and a region have the same size and are memoised per translation class in the Game object.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
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
from arena.games.geometry import CELL_NAME, Grid, hex_grid, square_grid

_BOARD_RE = re.compile(r"^\s*(hex|square)\s*(\d+)\s*$", re.IGNORECASE)
# cell content in describe() and glyph in render_text(), by seat (board value = seat + 1)
_CONTENT = ("P", "B")
_FILL = ("#f49ac1", "#222222")
# board bytes -> arrangement string (describe's `history`)
_ARRANGEMENT = bytes.maketrans(b"\x00\x01\x02", b".PB")
_UNARRANGEMENT = bytes.maketrans(b".PB", b"\x00\x01\x02")
# a memo of shape forms that grows past this is dropped and rebuilt (bounded memory)
_SHAPE_CACHE_LIMIT = 300_000
#: `extra_removals` above the number of cells of the largest board means nothing more
MAX_EXTRA_REMOVALS = 1000

HEX_SIDES = (3, 15)
SQUARE_SIDES = (2, 26)


def parse_board(value: Any) -> str:
    """`hex N` (3 <= N <= 15) or `square N` (2 <= N <= 26), normalised to lower case."""
    m = _BOARD_RE.match(str(value))
    if not m:
        raise ValueError(f"expected 'hex N' or 'square N', got {value!r}")
    kind, n = m.group(1).lower(), int(m.group(2))
    lo, hi = HEX_SIDES if kind == "hex" else SQUARE_SIDES
    if not lo <= n <= hi:
        raise ValueError(f"{kind} boards need a side from {lo} to {hi}, got {n}")
    return f"{kind} {n}"


@dataclass(frozen=True, eq=False)
class Layout:
    """The board as bit positions: bit = r * stride + q in axial lattice coordinates.

    Each row has one unused padding bit, so a neighbour shift never wraps onto a board cell and a
    shape's translation class is its mask shifted down to its lowest bit.
    """

    grid: Grid
    stride: int
    full: int  # every board cell
    bit: tuple[int, ...]  # cell index -> 1 << position
    cell_of_bit: dict[int, int]  # 1 << position -> cell index
    nbmask: tuple[int, ...]  # cell index -> mask of its neighbours
    arcs: tuple[frozenset[int], ...]  # cell index -> neighbour subsets that form one arc
    shifts: tuple[int, ...]  # positive neighbour shifts (the negatives are implied)
    rotations: int
    names: tuple[str, ...]
    minus_names: tuple[str, ...]

    def fill(self, seed: int, allowed: int, targets: int = 0) -> int:
        """The component of `allowed` containing `seed`; stops early once `targets` are all
        reached (the caller then knows the whole set is one component)."""
        f = seed
        if len(self.shifts) == 3:
            a, b, c = self.shifts
            while True:
                g = (f | f << a | f >> a | f << b | f >> b | f << c | f >> c) & allowed
                if g == f or (targets and not targets & ~g):
                    return g
                f = g
        a, b = self.shifts
        while True:
            g = (f | f << a | f >> a | f << b | f >> b) & allowed
            if g == f or (targets and not targets & ~g):
                return g
            f = g

    def components(self, mask: int) -> list[int]:
        out = []
        while mask:
            comp = self.fill(mask & -mask, mask)
            out.append(comp)
            mask ^= comp
        return out

    def split(self, rest: int, cell: int) -> list[int]:
        """Components of `rest`, a connected set minus `cell` (each piece touches `cell`)."""
        if not rest:
            return []
        nbs = rest & self.nbmask[cell]
        if not nbs & (nbs - 1) or nbs in self.arcs[cell]:
            return [rest]
        first = self.fill(nbs & -nbs, rest, nbs)
        if not nbs & ~first:
            return [rest]
        out = [first]
        rest ^= first
        nbs &= rest
        while rest:
            comp = self.fill(nbs & -nbs, rest)
            out.append(comp)
            rest ^= comp
            nbs &= rest
        return out

    def cells_of(self, mask: int) -> list[int]:
        """Cell indices of a mask, in board order."""
        out = []
        cob = self.cell_of_bit
        while mask:
            low = mask & -mask
            out.append(cob[low])
            mask ^= low
        return out


@functools.cache
def _make_layout(grid: Grid) -> Layout:
    """The bit layout of a board; grids are cached per size, so is this (immutable, and
    tens of milliseconds to compute: a per-game cost in a tournament otherwise)."""
    qs = [q for q, _ in grid.lattice]
    rs = [r for _, r in grid.lattice]
    q0, r0 = min(qs), min(rs)
    stride = max(qs) - q0 + 2
    pos = [(r - r0) * stride + (q - q0) for q, r in grid.lattice]
    assert pos == sorted(pos), "bit order must be board order"
    bit = tuple(1 << p for p in pos)
    nbmask = tuple(sum(bit[n] for n in grid.neighbours[c]) for c in range(grid.n_cells))
    if grid.kind == "hex":
        shifts: tuple[int, ...] = (1, stride, stride - 1)
    else:
        shifts = (1, stride)
    for c in range(grid.n_cells):
        for n in grid.neighbours[c]:
            assert abs(pos[n] - pos[c]) in shifts
    arcs = []
    ndir = len(grid.directions)
    for c in range(grid.n_cells):
        ring = [grid.steps[d][c] for d in range(ndir)]
        ok = set()
        if grid.kind == "hex":  # consecutive directions are neighbours of each other
            for start in range(ndir):
                for length in range(1, ndir + 1):
                    sel = [ring[(start + i) % ndir] for i in range(length)]
                    if all(s >= 0 for s in sel):
                        ok.add(sum(bit[s] for s in sel))
        arcs.append(frozenset(ok))
    names = grid.names
    return Layout(
        grid=grid,
        stride=stride,
        full=sum(bit),
        bit=bit,
        cell_of_bit={b: c for c, b in enumerate(bit)},
        nbmask=nbmask,
        arcs=tuple(arcs),
        shifts=shifts,
        rotations=grid.n_rotations,
        names=names,
        minus_names=tuple("-" + n for n in names),
    )


class Papagra(Game):
    """Papagra on a hex-hex board (default side 5) or a square board."""

    name = "papagra"
    title = "Papagra"
    colours = ("pink", "black")
    option_specs = (
        OptionSpec("board", "hex 5", "'hex N' (N 3..15) or 'square N' (N 2..26)", parse_board),
        OptionSpec(
            "extra_removals",
            0,
            "x > 0 adds an optional third action removing 1..x own stones",
            parse_int(0, MAX_EXTRA_REMOVALS),
        ),
        OptionSpec(
            "max_turns",
            400,
            "turn limit; the leader wins there, else a draw",
            parse_int(1, MAX_TURNS),
        ),
    )
    small_options = ({"board": "hex 3", "max_turns": 40}, {"board": "square 4", "max_turns": 40})

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        kind, n = self.options["board"].split()
        self.grid = hex_grid(int(n)) if kind == "hex" else square_grid(int(n))
        self.layout = _make_layout(self.grid)
        self.extra = int(self.options["extra_removals"])
        self.max_turns = int(self.options["max_turns"])
        # translation class (mask shifted to its lowest bit) -> canonical rotation form; a memo
        # only, so sharing it between all states of this game is safe
        self._shapes: dict[int, int] = {}

    def shape(self, mask: int) -> int:
        """Canonical form of a cell set: equal for two sets exactly when translation plus
        rotation (never a mirror) maps one onto the other."""
        norm = mask >> ((mask & -mask).bit_length() - 1)
        s = self._shapes.get(norm)
        if s is None:
            s = self._compute_shape(mask)
        return s

    def _compute_shape(self, mask: int) -> int:
        lay = self.layout
        stride = lay.stride
        pts = []
        m = mask
        while m:
            low = m & -m
            p = low.bit_length() - 1
            pts.append((p % stride, p // stride))
            m ^= low
        square = lay.grid.kind == "square"
        forms = []
        for _ in range(lay.rotations):
            mq = min(q for q, _ in pts)
            mr = min(r for _, r in pts)
            f = 0
            for q, r in pts:
                f |= 1 << ((r - mr) * stride + q - mq)
            forms.append(f >> ((f & -f).bit_length() - 1))
            pts = [(-r, q) if square else (-r, q + r) for q, r in pts]
        canon = min(forms)
        if len(self._shapes) > _SHAPE_CACHE_LIMIT:
            self._shapes.clear()
        for f in forms:
            self._shapes[f] = canon
        return canon

    def new_initial_state(self) -> PapagraState:
        return PapagraState(self)

    def state_from_description(self, description: Mapping[str, Any]) -> PapagraState:
        d = description
        try:
            lay = self.layout
            board = bytearray(lay.grid.n_cells)
            for name, content in d["cells"].items():
                board[lay.grid.index[name]] = _CONTENT.index(content) + 1
            s = PapagraState(self)
            s._set_board(board)
            s._marks = [m or 0 for m in d["marks"]]
            s._turn = int(d["turn"])
            s._to_move = 0 if d["to_move"] is None else int(d["to_move"])
            s._acts = list(d["turn_actions"])
            s._hist = {bytes(a, "ascii").translate(_UNARRANGEMENT): int(n) for a, n in d["history"]}
            s._result = result_from_dict(d["result"])
            if s._result is None and d["to_move"] is None:
                raise GameError("papagra: description has no player to move but no result")
        except (KeyError, ValueError, TypeError, IndexError) as e:
            raise GameError(f"papagra: malformed description ({e!r})") from None
        return s


class PapagraState(State):
    """One Papagra position; `apply` updates groups, regions and marks incrementally."""

    __slots__ = (
        "_acts",
        "_board",
        "_groups",
        "_hist",
        "_hist_shared",
        "_lay",
        "_legal",
        "_marks",
        "_regions",
        "_result",
        "_stones",
        "_to_move",
        "_turn",
        "game",
    )

    def __init__(self, game: Papagra) -> None:
        self.game: Papagra = game
        self._lay = game.layout
        self._board = bytearray(self._lay.grid.n_cells)  # 0 empty, 1 pink, 2 black
        self._stones = [0, 0]
        self._regions: dict[int, int] = {self._lay.full: self._lay.grid.n_cells}
        self._groups: list[dict[int, int]] = [{}, {}]  # mask -> size, per seat
        self._marks = [0, 0]  # 0 = no mark yet
        self._turn = 1
        self._to_move = 0
        self._acts: list[str] = []
        # end-of-turn arrangement (board bytes) -> occurrences; shared between clones until
        # one of them writes (copy on write keeps clone() cheap)
        self._hist: dict[bytes, int] = {}
        self._hist_shared = False
        self._result: Result | None = None
        self._legal: list[str] | None = None

    def _set_board(self, board: bytearray) -> None:
        """Rebuild every derived structure from scratch (descriptions, multi-stone removals)."""
        lay = self._lay
        self._board = board
        stones = [0, 0]
        for c, v in enumerate(board):
            if v:
                stones[v - 1] |= lay.bit[c]
        self._stones = stones
        self._groups = [{m: m.bit_count() for m in lay.components(s)} for s in stones]
        empty = lay.full & ~(stones[0] | stones[1])
        self._regions = {m: m.bit_count() for m in lay.components(empty)}
        self._legal = None

    # --- turn structure ----------------------------------------------------------------------
    def current_player(self) -> int | None:
        return None if self._result is not None else self._to_move

    def turn_number(self) -> int:
        return self._turn

    def _mandatory(self) -> int:
        return 1 if self._turn == 1 else 2

    def actions_remaining(self) -> int:
        if self._result is not None:
            return 0
        left = self._mandatory() - len(self._acts)
        if self._turn > 1 and self.game.extra:
            left += 1
        return left

    def can_end_turn(self) -> bool:
        return self._result is None and self._turn > 1 and len(self._acts) == 2

    def end_turn(self) -> None:
        if self._result is not None:
            raise GameOver("end_turn")
        if not self.can_end_turn():
            raise IllegalAction(
                "end_turn",
                f"the turn still needs {self._mandatory() - len(self._acts)} more action(s)",
            )
        self._finish_turn()

    def turn_actions(self) -> list[str]:
        return list(self._acts)

    def legal_actions(self) -> list[str]:
        if self._result is not None:
            return []
        if self._legal is None:
            self._legal = self._compute_legal()
        return list(self._legal)

    def _compute_legal(self) -> list[str]:
        lay = self._lay
        me = self._to_move + 1
        board = self._board
        if len(self._acts) == 2:
            own = [n for n, v in zip(lay.names, board, strict=True) if v == me]
            out = []
            for k in range(1, min(self.game.extra, len(own)) + 1):
                out.extend("-" + "-".join(combo) for combo in itertools.combinations(own, k))
            return out
        adds = [n for n, v in zip(lay.names, board, strict=True) if not v]
        adds.extend(n for n, v in zip(lay.minus_names, board, strict=True) if v == me)
        return adds

    # --- applying actions --------------------------------------------------------------------
    def _cell(self, action: str, name: str) -> int:
        c = self._lay.grid.index.get(name)
        if c is None:
            if CELL_NAME.match(name):
                raise IllegalAction(action, f"{name} is not a cell of this board")
            raise IllegalAction(action, f"cannot parse {name!r} as a cell")
        return c

    def apply(self, action: str) -> None:
        if self._result is not None:
            raise GameOver(action)
        if not isinstance(action, str):
            raise IllegalAction(repr(action), f"an action is a string like 'e5', got {action!r}")
        seat = self._to_move
        me = seat + 1
        if len(self._acts) == 2:
            self._apply_extra(action, seat)
            return
        if action[:1] == "-":
            name = action[1:]
            c = self._lay.grid.index.get(name)
            if c is None:
                if "-" in name and self._turn > 1 and self.game.extra:
                    raise IllegalAction(
                        action,
                        f"{action!r} removes several stones; only the optional third action "
                        "may do that",
                    )
                c = self._cell(action, name)
            v = self._board[c]
            if v != me:
                if self._turn == 1:
                    raise IllegalAction(action, "the opening turn is a single placement")
                if not v:
                    raise IllegalAction(action, f"{name} is empty; there is nothing to remove")
                raise IllegalAction(
                    action,
                    f"{name} holds a {self.game.colours[v - 1]} stone; you may only remove "
                    f"your own ({self.game.colours[seat]}) stones",
                )
            created = self._remove(seat, c)
        else:
            c = self._lay.grid.index.get(action)
            if c is None:
                c = self._cell(action, action)
            v = self._board[c]
            if v:
                raise IllegalAction(
                    action, f"{action} is occupied by a {self.game.colours[v - 1]} stone"
                )
            created = self._add(seat, c)
        self._acts.append(action)
        self._legal = None
        if created is not None:
            self._move_marks(seat, created)
        done = len(self._acts)
        if done == self._mandatory() and not (
            self._turn > 1 and self.game.extra and self._stones[seat]
        ):
            self._finish_turn()

    def _apply_extra(self, action: str, seat: int) -> None:
        extra = self.game.extra
        if not action.startswith("-"):
            raise IllegalAction(
                action,
                "the two actions of this turn are done; only the optional removal of 1 to "
                f"{extra} of your stones remains (like '-e5'), or end the turn",
            )
        names = action[1:].split("-")
        cells = [self._cell(action, n) for n in names]
        if len(set(cells)) != len(cells):
            raise IllegalAction(action, f"{action!r} names a stone twice")
        if len(cells) > extra:
            raise IllegalAction(
                action, f"{action!r} removes {len(cells)} stones; at most {extra} allowed"
            )
        me = seat + 1
        for n, c in zip(names, cells, strict=True):
            if self._board[c] != me:
                raise IllegalAction(
                    action, f"{n} holds no {self.game.colours[seat]} stone to remove"
                )
        before = self._matched()
        board = bytearray(self._board)
        for c in cells:
            board[c] = 0
        self._set_board(board)
        after = self._matched()
        created: tuple[list[int], list[int]] = ([], [])
        for colour, mask in after - before:
            created[colour].append(mask.bit_count())
        self._acts.append(action)
        self._move_marks(seat, created)
        self._finish_turn()

    def _add(self, seat: int, c: int) -> tuple[list[int], list[int]] | None:
        """Place a stone; returns the sizes of matched groups created, per colour (None: none)."""
        lay = self._lay
        bit = lay.bit[c]
        nb = lay.nbmask[c]
        regions = self._regions
        for big in regions:
            if big & bit:
                break
        del regions[big]
        pieces = lay.split(big ^ bit, c)
        for p in pieces:
            regions[p] = p.bit_count()
        grp = self._groups[seat]
        new = bit
        if self._stones[seat] & nb:
            for m in [m for m in grp if m & nb]:
                del grp[m]
                new |= m
        grp[new] = size = new.bit_count()
        self._stones[seat] |= bit
        self._board[c] = seat + 1
        return self._created(seat, [new], size, pieces)

    def _remove(self, seat: int, c: int) -> tuple[list[int], list[int]] | None:
        lay = self._lay
        bit = lay.bit[c]
        nb = lay.nbmask[c]
        grp = self._groups[seat]
        for old in grp:
            if old & bit:
                break
        del grp[old]
        pieces = lay.split(old ^ bit, c)
        for p in pieces:
            grp[p] = p.bit_count()
        regions = self._regions
        new = bit
        if nb & ~(self._stones[0] | self._stones[1]):
            for m in [m for m in regions if m & nb]:
                del regions[m]
                new |= m
        regions[new] = new.bit_count()
        self._stones[seat] ^= bit
        self._board[c] = 0
        return self._created(seat, pieces, 0, [new])

    def _created(
        self, seat: int, new_groups: list[int], size_hint: int, new_regions: list[int]
    ) -> tuple[list[int], list[int]] | None:
        """Matched groups created by the action that produced `new_groups` (of `seat`) and
        `new_regions`: new groups that match any region now, plus untouched groups whose shape
        is the shape of a new region that no other region had before.

        Regions the action destroyed never share a size with the new ones (a placement splits a
        region into smaller ones, a removal merges regions into a bigger one), so "no other
        region had it before" reduces to "no untouched region has it"."""
        regions = self._regions
        shape = self.game.shape
        out: tuple[list[int], list[int]] | None = None
        for g in new_groups:
            k = size_hint or g.bit_count()
            for r, kr in regions.items():
                if kr == k and (k <= 2 or shape(r) == shape(g)):
                    out = out or ([], [])
                    out[seat].append(k)
                    break
        groups = self._groups
        for nr in new_regions:
            k = regions[nr]
            same0 = [g for g, kg in groups[0].items() if kg == k]
            same1 = [g for g, kg in groups[1].items() if kg == k]
            if not same0 and not same1:
                continue
            if k <= 2:
                if any(kr == k for r, kr in regions.items() if r not in new_regions):
                    continue
                out = out or ([], [])
                if same0:
                    out[0].append(k)
                if same1:
                    out[1].append(k)
                continue
            s = shape(nr)
            if any(kr == k and shape(r) == s for r, kr in regions.items() if r not in new_regions):
                continue
            for colour, same in ((0, same0), (1, same1)):
                if any(shape(g) == s for g in same):
                    out = out or ([], [])
                    out[colour].append(k)
        return out

    def _matched(self) -> set[tuple[int, int]]:
        """Every matched group as (colour, mask), computed from scratch (slow path, tests)."""
        shape = self.game.shape
        region_shapes = {(k, k if k <= 2 else shape(r)) for r, k in self._regions.items()}
        out = set()
        for colour in (0, 1):
            for g, k in self._groups[colour].items():
                if (k, k if k <= 2 else shape(g)) in region_shapes:
                    out.add((colour, g))
        return out

    def repetition_count(self) -> int:
        """How often the current arrangement has stood at the end of a turn so far (the third
        time ends the game); bots use it to steer towards or away from repetition."""
        return self._hist.get(bytes(self._board), 0)

    def matched_groups(self) -> list[tuple[int, list[str]]]:
        """The matched groups on the board now, as (seat, cell names in board order); for
        renderers, bots and tests (the marks depend on when groups were *created*, not on this)."""
        lay = self._lay
        out = [(colour, [lay.names[c] for c in lay.cells_of(g)]) for colour, g in self._matched()]
        return sorted(out)

    def _move_marks(self, seat: int, created: tuple[list[int], list[int]]) -> None:
        """RULES.md marks: up only, never onto the opponent's number; sizes created in both
        colours by this one action are the mover's alone; the mover's mark moves first."""
        marks = self._marks
        other = 1 - seat
        mine, theirs = created[seat], created[other]
        if mine:
            allowed = [k for k in mine if k > marks[seat] and k != marks[other]]
            if allowed:
                marks[seat] = max(allowed)
        if theirs:
            both = set(mine)
            allowed = [k for k in theirs if k > marks[other] and k != marks[seat] and k not in both]
            if allowed:
                marks[other] = max(allowed)

    def _finish_turn(self) -> None:
        """End the turn: repetition count, then the end conditions in RULES.md order."""
        key = bytes(self._board)
        if self._hist_shared:
            self._hist = dict(self._hist)
            self._hist_shared = False
        count = self._hist.get(key, 0) + 1
        self._hist[key] = count
        self._legal = None
        leader = self.leader()
        lay = self._lay
        if leader is not None and self._stones[leader] == lay.full:
            self._end(
                leader,
                "board_full",
                f"every cell holds a {self.game.colours[leader]} stone",
            )
            return
        if count >= 3:
            self._end(leader, "repetition", "the same arrangement occurred for the third time")
            return
        if self._turn >= self.game.max_turns:
            self._end(leader, "max_turns", f"the turn limit of {self.game.max_turns} was reached")
            return
        self._turn += 1
        self._to_move = 1 - self._to_move
        self._acts = []
        if self._stones[self._to_move] == 0 and (self._stones[0] | self._stones[1]) == lay.full:
            self._end(
                leader,
                "no_moves",
                f"{self.game.colours[self._to_move]} has no stone to remove and no empty cell",
            )

    def _end(self, winner: int | None, reason: str, why: str) -> None:
        if winner is None:
            detail = f"{why}; nobody leads, so the game is drawn"
        else:
            detail = f"{why}; {self.game.colours[winner]} leads and wins"
        self._result = Result(winner, reason, self.scores(), detail)
        self._legal = None

    # --- the end -----------------------------------------------------------------------------
    def leader(self) -> int | None:
        """The seat whose mark is on the larger number; None while neither has a mark (the
        marks can never share a number)."""
        a, b = self._marks
        if a == b:
            return None
        return 0 if a > b else 1

    def marks(self) -> tuple[int | None, int | None]:
        return (self._marks[0] or None, self._marks[1] or None)

    def is_terminal(self) -> bool:
        return self._result is not None

    def result(self) -> Result | None:
        return self._result

    def scores(self) -> tuple[int, int]:
        return (self._marks[0], self._marks[1])

    def _set_result(self, result: Result) -> None:
        self._result = result
        self._legal = None

    # --- views -------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        lay = self._lay
        grid = lay.grid
        names = lay.names
        return {
            "game": self.game.name,
            "options": dict(self.game.options),
            "turn": self._turn,
            "to_move": self.current_player(),
            "actions_remaining": self.actions_remaining(),
            "turn_actions": list(self._acts),
            "can_end_turn": self.can_end_turn(),
            "scores": list(self.scores()),
            "board": {"kind": grid.kind, "size": grid.size, "cells": list(names)},
            "cells": {names[c]: _CONTENT[v - 1] for c, v in enumerate(self._board) if v},
            "result": result_to_dict(self._result),
            "marks": list(self.marks()),
            "leader": self.leader(),
            "track_length": grid.n_cells,
            "history": [[k.translate(_ARRANGEMENT).decode(), n] for k, n in self._hist.items()],
        }

    def _status(self) -> str:
        col = self.game.colours
        m = self.marks()
        marks = ", ".join(f"{col[i]} {m[i] if m[i] else '-'}" for i in (0, 1))
        leader = self.leader()
        line = f"marks: {marks} (track 1-{self._lay.grid.n_cells}); leader: "
        line += col[leader] if leader is not None else "nobody"
        if self._result is not None:
            return f"{line}\nresult: {self._result.reason}: {self._result.detail}"
        done = f", played {' '.join(self._acts)}" if self._acts else ""
        return (
            f"{line}\nturn {self._turn}: {col[self._to_move]} to move"
            f" ({self.actions_remaining()} action(s) left{done})"
        )

    def render_text(self) -> str:
        glyphs = (".", "P", "B")
        board = self._board
        return self._lay.grid.render(lambda c: glyphs[board[c]]) + "\n" + self._status()

    def render_svg(self) -> str:
        board = self._board
        status = self._status().replace("\n", "; ")
        return self._lay.grid.svg(
            lambda c: _FILL[board[c] - 1] if board[c] else None,
            title=f"Papagra: {status}",
        )

    def key(self) -> bytes:
        return bytes(self._board)

    def clone(self) -> PapagraState:
        s = PapagraState.__new__(PapagraState)
        s.game = self.game
        s._lay = self._lay
        s._board = bytearray(self._board)
        s._stones = list(self._stones)
        s._regions = dict(self._regions)
        s._groups = [dict(self._groups[0]), dict(self._groups[1])]
        s._marks = list(self._marks)
        s._turn = self._turn
        s._to_move = self._to_move
        s._acts = list(self._acts)
        s._hist = self._hist
        s._hist_shared = self._hist_shared = True
        s._result = self._result
        s._legal = self._legal
        return s
