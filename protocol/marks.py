"""Debug marks: drawing hints a bot attaches to a `move`, a `resign` or a `log` message.

Battlecode, Halite and Lux let a bot draw on its replay; so does the arena. A message may carry
an optional `marks` field, a list of small maps (docs/protocol.md, "Debug marks"):

    {"cell": "e5"}                          highlight a cell
    {"cell": "e5", "text": "12"}            a short text on a cell
    {"arrow": ["a1", "c3"]}                 an arrow from one cell to another

each with an optional `colour` from `COLOURS` (default `DEFAULT_COLOUR`). Cells are the names
the game's board lists (`position.board.cells`).

The rule: a debugging aid never costs a game. A mark that breaks a rule (a cell not on the
board, an unknown colour, a text too long, more marks than the caps allow) is dropped, and the
referee says so in a note among the bot's logs of that turn; the message it came with counts
as if it had no marks. So this module is not part of message validation (protocol/messages.py:
what loses a game): `clean_marks` sorts a bot's value into the marks kept, in a normal form,
and the reasons for the others, and never raises whatever the value is.

Caps keep the record bounded whatever a bot sends: `MARKS_PER_MESSAGE` and `MARKS_PER_TURN`
(per seat), `MARK_TEXT_CHARS` per text, and `MARKS_BYTES` of kept marks per seat and game
(each mark's size is `mark_size`, its compact JSON length). Marks are plain data, the same in
every language: the colour is a word from a closed list, never CSS, so that nothing a bot
writes becomes style or markup on a page.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

#: the colours a mark may name; a page maps each to its own shade
COLOURS: tuple[str, ...] = (
    "red",
    "orange",
    "yellow",
    "green",
    "teal",
    "blue",
    "purple",
    "pink",
    "white",
    "black",
    "grey",
)
DEFAULT_COLOUR = "yellow"
#: marks one message may carry; the rest are dropped
MARKS_PER_MESSAGE = 64
#: marks one seat may leave in one turn (its move and its logs together)
MARKS_PER_TURN = 256
#: characters of a mark's text
MARK_TEXT_CHARS = 12
#: bytes of kept marks per seat and game (`mark_size` of each)
MARKS_BYTES = 64 * 1024
#: how many problems one note quotes before "and N more"
_QUOTED = 3

__all__ = [
    "COLOURS",
    "DEFAULT_COLOUR",
    "MARKS_BYTES",
    "MARKS_PER_MESSAGE",
    "MARKS_PER_TURN",
    "MARK_TEXT_CHARS",
    "clean_marks",
    "mark_size",
    "marks_note",
]


def _show(value: Any) -> str:
    """A bot's value quoted briefly in a note (the note is text: pages escape it)."""
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _cell(value: Any, cells: Container[str], what: str) -> str:
    """The cell name `value` if it is one of the board's; ValueError naming `what` else."""
    if type(value) is not str:
        raise ValueError(f"{what} must be a cell name (a string), got {_show(value)}")
    if value not in cells:
        raise ValueError(f"{what} {_show(value)} is not a cell of this board")
    return value


def _clean_one(mark: Any, cells: Container[str]) -> dict[str, Any]:
    """One mark in its normal form; ValueError saying what is wrong with it."""
    if type(mark) is not dict:
        raise ValueError(f"a mark is a map, got {_show(mark)}")
    colour = mark.get("colour", DEFAULT_COLOUR)
    if type(colour) is not str or colour not in COLOURS:
        raise ValueError(f"colour {_show(colour)} is not one of {', '.join(COLOURS)}")
    if "arrow" in mark:
        if "cell" in mark or "text" in mark:
            raise ValueError("a mark is either an arrow or a cell (with or without text)")
        arrow = mark["arrow"]
        if type(arrow) is not list or len(arrow) != 2:
            raise ValueError(f"arrow must be a list of two cell names, got {_show(arrow)}")
        start, end = _cell(arrow[0], cells, "arrow start"), _cell(arrow[1], cells, "arrow end")
        if start == end:
            raise ValueError(f"an arrow joins two different cells, got {start} twice")
        return {"arrow": [start, end], "colour": colour}
    if "cell" not in mark:
        raise ValueError("a mark needs a cell or an arrow")
    out: dict[str, Any] = {"cell": _cell(mark["cell"], cells, "cell")}
    if "text" in mark:
        text = mark["text"]
        if type(text) is not str or not text or len(text) > MARK_TEXT_CHARS:
            raise ValueError(
                f"text must be a string of 1 to {MARK_TEXT_CHARS} characters, got {_show(text)}"
            )
        if not text.isprintable():
            raise ValueError(f"text {_show(text)} holds a control or invisible character")
        out["text"] = text
    out["colour"] = colour
    return out


def clean_marks(
    value: Any, cells: Container[str], room: int = MARKS_PER_MESSAGE
) -> tuple[list[dict[str, Any]], list[str], int]:
    """(kept, problems, dropped) of a message's `marks` value: at most `room` marks (and never
    more than `MARKS_PER_MESSAGE`) in normal form, the reasons for the first dropped ones, and
    how many were dropped. Never raises: anything a bot sends is sorted, at a cost bounded by
    the caps (marks past them are counted, not examined)."""
    if type(value) is not list:
        return [], [f"marks must be a list of maps, got {_show(value)}"], 1
    room = max(0, min(room, MARKS_PER_MESSAGE))
    kept: list[dict[str, Any]] = []
    problems: list[str] = []
    dropped = 0
    for i, mark in enumerate(value):
        if len(kept) >= room:
            rest = len(value) - i
            dropped += rest
            problems.append(
                f"{rest} mark(s) past the cap left out "
                f"({MARKS_PER_MESSAGE} a message, {MARKS_PER_TURN} a turn)"
            )
            break
        try:
            kept.append(_clean_one(mark, cells))
        except ValueError as e:
            dropped += 1
            problems.append(f"mark {i}: {e}")
    return kept, problems, dropped


def mark_size(mark: dict[str, Any]) -> int:
    """The compact JSON size in bytes of a mark in normal form (what it adds to a record)."""
    import json  # here: not part of every command's start (benchmarks/versus.py, start-up)

    return len(json.dumps(mark, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def marks_note(problems: list[str], kept: int) -> str:
    """The note a bot's logs get for a message whose marks were (partly) dropped."""
    shown = "; ".join(problems[:_QUOTED])
    more = len(problems) - _QUOTED
    if more > 0:
        shown += f"; and {more} more"
    return f"marks dropped ({kept} kept): {shown}"
