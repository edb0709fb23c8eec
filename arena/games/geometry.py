"""Board geometry shared by the engines: square grids and hex-hex boards.

Cells are small integers (indices into `Grid.names`), because every engine's hot loop works on
lists indexed by cell; names exist only at the notation boundary.

Hex-hex boards use the doubled-column scheme of the seed's Hexaphage diagrams: row r holds every
second column letter, horizontal neighbours are two letters apart and diagonal ones one letter
and one row apart. For rotations a hex cell is also given axial lattice coordinates
(q, r) = ((col - row) / 2, row), in which a 60-degree turn is the integer map (q, r) -> (-r, q + r).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache

LETTERS = "abcdefghijklmnopqrstuvwxyz"

#: the shape of a cell name (`e5`, `aa12`), whether or not a given board has that cell; engines
#: use it to tell "not on this board" from "not a cell at all" in their error messages
CELL_NAME = re.compile(r"^[a-z]+[0-9]+$")


def _column_name(c: int) -> str:
    # a..z, then aa, ab, ... so that boards wider than 26 still get names
    if c < 26:
        return LETTERS[c]
    return LETTERS[c // 26 - 1] + LETTERS[c % 26]


@dataclass(frozen=True, eq=False)
class Grid:
    """A board: cell names, neighbour lists, line-of-move directions and rotation lattice."""

    kind: str  # "square" or "hex"
    size: int  # side length (square: cells per side; hex: cells per side of the hexagon)
    width: int  # number of column letters used
    height: int  # number of rows
    names: tuple[str, ...]
    cols: tuple[int, ...]  # column index per cell (doubled for hex)
    rows: tuple[int, ...]  # row index per cell, 0-based
    directions: tuple[tuple[int, int], ...]  # (dcol, drow) steps
    lattice: tuple[tuple[int, int], ...]  # rotation-friendly coordinates per cell
    index: dict[str, int] = field(repr=False)
    at: dict[tuple[int, int], int] = field(repr=False)  # (col, row) -> cell
    neighbours: tuple[tuple[int, ...], ...] = field(repr=False)
    # steps[d][cell] = the cell one step in direction d, or -1 off the board
    steps: tuple[tuple[int, ...], ...] = field(repr=False)

    @property
    def n_cells(self) -> int:
        return len(self.names)

    def cell(self, name: str) -> int:
        """Index of a cell name; KeyError for names not on this board."""
        return self.index[name]

    def ray(self, cell: int, direction: int) -> list[int]:
        """The cells from `cell` (exclusive) to the edge in one direction."""
        out = []
        step = self.steps[direction]
        c = step[cell]
        while c >= 0:
            out.append(c)
            c = step[c]
        return out

    def rotate(self, q: int, r: int, k: int) -> tuple[int, int]:
        """Rotate lattice coordinates by k steps (90 degrees square, 60 degrees hex)."""
        for _ in range(k % self.n_rotations):
            q, r = (-r, q) if self.kind == "square" else (-r, q + r)
        return q, r

    @property
    def n_rotations(self) -> int:
        return 4 if self.kind == "square" else 6

    def canonical_shape(self, cells: Iterable[int]) -> tuple[tuple[int, int], ...]:
        """A key equal for two cell sets exactly when a translation plus rotation maps one
        onto the other (mirror images get different keys)."""
        pts = [self.lattice[c] for c in cells]
        best: tuple[tuple[int, int], ...] | None = None
        for k in range(self.n_rotations):
            rot = [self.rotate(q, r, k) for q, r in pts]
            mq = min(q for q, _ in rot)
            mr = min(r for _, r in rot)
            form = tuple(sorted((q - mq, r - mr) for q, r in rot))
            if best is None or form < best:
                best = form
        return best or ()

    def render(self, glyph: Callable[[int], str], labels: bool = True) -> str:
        """Text board like the seed diagrams: one character per cell, row numbers on the right.

        Square: `a b c ...` header and `x . o  1.` rows (Quadraphages seed). Hex: doubled
        columns, one character per column letter, header and footer ` abcdefghijklm`
        (Hexaphage seed).
        """
        lines = []
        if self.kind == "square":
            header = " ".join(_column_name(c) for c in range(self.width))
            if labels:
                lines.append(header)
            for r in range(self.height):
                row = " ".join(glyph(self.at[(c, r)]) for c in range(self.width))
                lines.append(f"{row}  {r + 1}." if labels else row)
        else:
            header = " " + "".join(_column_name(c) for c in range(self.width))
            if labels:
                lines.append(header)
            for r in range(self.height):
                chars = [" "] * self.width
                for c in range(self.width):
                    cell = self.at.get((c, r))
                    if cell is not None:
                        chars[c] = glyph(cell)
                row = " " + "".join(chars)
                lines.append(f"{row} {r + 1}" if labels else row.rstrip())
            if labels:
                lines.append(header)
        return "\n".join(lines)

    def svg(
        self,
        fill: Callable[[int], str | None],
        text: Callable[[int], str] = lambda c: "",
        title: str = "",
        extra: str = "",
    ) -> str:
        """A standalone SVG of the board; `fill` gives a cell's colour (None = empty).

        Every cell is a `<g class="cell" data-cell="e5">` group holding its shape and glyph, so
        that a page can find, restyle or click a cell by its notation name (the replay viewer
        marks the cells of the last action that way). Coordinates run along the edges as on the
        text boards: letters above and below, row numbers on both sides.
        """
        unit = 28
        parts: list[str] = []
        label = 'text-anchor="middle" font-family="sans-serif" fill="#444" font-size='
        if self.kind == "square":
            w, h = self.width * unit + 2 * unit, self.height * unit + 2 * unit
            for cell in range(self.n_cells):
                x = unit + self.cols[cell] * unit
                y = unit + self.rows[cell] * unit
                glyph = ""
                t = text(cell)
                if t:
                    glyph = (
                        f'<text x="{x + unit / 2}" y="{y + unit * 0.68}" font-size="{unit * 0.5}" '
                        f'text-anchor="middle" font-family="sans-serif">{t}</text>'
                    )
                parts.append(
                    f'<g class="cell" data-cell="{self.names[cell]}">'
                    f'<rect x="{x}" y="{y}" width="{unit}" height="{unit}" '
                    f'fill="{fill(cell) or "#f4ecd8"}" stroke="#555" stroke-width="1"/>{glyph}</g>'
                )
            for c in range(self.width):
                x = unit + c * unit + unit / 2
                for y in (unit * 0.7, h - unit * 0.35):
                    parts.append(f'<text x="{x}" y="{y}" {label}"11">{_column_name(c)}</text>')
            for r in range(self.height):
                y = unit + r * unit + unit * 0.62
                for x in (unit * 0.5, w - unit * 0.5):
                    parts.append(f'<text x="{x}" y="{y}" {label}"11">{r + 1}</text>')
        else:
            dx, dy = unit / 2, unit * 0.866
            top = dy * 1.3  # room for the column letters
            w, h = (self.width + 5) * dx, top * 2 + (self.height - 1) * dy
            for cell in range(self.n_cells):
                cx = dx * 3 + self.cols[cell] * dx
                cy = top + self.rows[cell] * dy
                glyph = ""
                t = text(cell)
                if t:
                    glyph = (
                        f'<text x="{cx:.1f}" y="{cy + unit * 0.18:.1f}" font-size="{unit * 0.45}" '
                        f'text-anchor="middle" font-family="sans-serif">{t}</text>'
                    )
                parts.append(
                    f'<g class="cell" data-cell="{self.names[cell]}">'
                    f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{unit * 0.45:.1f}" '
                    f'fill="{fill(cell) or "#f4ecd8"}" stroke="#555" stroke-width="1"/>{glyph}</g>'
                )
            # doubled columns: every letter names a column, and a cell sits on every second
            # one, so the letters stand at half-cell spacing above and below the board
            for c in range(self.width):
                x = dx * 3 + c * dx
                for y in (top - dy * 0.75, h - top + dy * 0.95):
                    parts.append(
                        f'<text x="{x:.1f}" y="{y:.1f}" {label}"9">{_column_name(c)}</text>'
                    )
            for r, (first, last) in enumerate(_row_ends(self)):
                y = top + r * dy + 4
                for x in (dx * 3 + (first - 2) * dx, dx * 3 + (last + 2) * dx):
                    parts.append(f'<text x="{x:.1f}" y="{y:.1f}" {label}"11">{r + 1}</text>')
        from html import escape  # here: not part of every command's start

        caption = f"<title>{escape(title)}</title>" if title else ""
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
            f'viewBox="0 0 {w:.0f} {h:.0f}">{caption}'
            f'<rect width="100%" height="100%" fill="white"/>{"".join(parts)}{extra}</svg>'
        )


@cache
def _row_ends(grid: Grid) -> tuple[tuple[int, int], ...]:
    """The first and last column of every row of a hex board (where its row numbers go)."""
    ends = []
    for r in range(grid.height):
        row = [c for c in range(grid.width) if (c, r) in grid.at]
        ends.append((row[0], row[-1]))
    return tuple(ends)


def _build(kind: str, size: int, coords: list[tuple[int, int]], width: int, height: int) -> Grid:
    if kind == "square":
        directions = ((0, -1), (1, 0), (0, 1), (-1, 0))
    else:
        directions = ((2, 0), (1, 1), (-1, 1), (-2, 0), (-1, -1), (1, -1))
    coords.sort(key=lambda cr: (cr[1], cr[0]))
    at = {cr: i for i, cr in enumerate(coords)}
    names = tuple(f"{_column_name(c)}{r + 1}" for c, r in coords)
    steps = tuple(tuple(at.get((c + dc, r + dr), -1) for c, r in coords) for dc, dr in directions)
    neighbours = tuple(
        tuple(steps[d][i] for d in range(len(directions)) if steps[d][i] >= 0)
        for i in range(len(coords))
    )
    if kind == "square":
        lattice = tuple((c, r) for c, r in coords)
    else:
        lattice = tuple(((c - r) // 2, r) for c, r in coords)
    return Grid(
        kind=kind,
        size=size,
        width=width,
        height=height,
        names=names,
        cols=tuple(c for c, _ in coords),
        rows=tuple(r for _, r in coords),
        directions=directions,
        lattice=lattice,
        index={n: i for i, n in enumerate(names)},
        at=at,
        neighbours=neighbours,
        steps=steps,
    )


@cache
def square_grid(size: int) -> Grid:
    """An N x N board with orthogonal adjacency; `a1` top-left."""
    if size < 1:
        raise ValueError("a square board needs at least one cell per side")
    return _build("square", size, [(c, r) for r in range(size) for c in range(size)], size, size)


@cache
def hex_grid(side: int) -> Grid:
    """A hex-hex board of the given side in doubled-column coordinates (side 4: 37 cells, a-m)."""
    if side < 1:
        raise ValueError("a hex board needs a side of at least 1")
    height = 2 * side - 1
    width = 4 * side - 3
    coords = []
    for r in range(height):
        first = abs(side - 1 - r)
        count = side + min(r, height - 1 - r)
        coords.extend((first + 2 * k, r) for k in range(count))
    return _build("hex", side, coords, width, height)
