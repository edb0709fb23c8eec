"""The referee's book of a game's debug marks: what each seat drew, per turn, within its caps.

A bot may attach `marks` to a `move`, a `resign` or a `log` (protocol/marks.py holds their
shape and caps, docs/protocol.md "Debug marks" the rules). They are a debugging aid, so
nothing about them costs a game: a mark that breaks a rule is dropped, counted in the record's
`marks_dropped`, and explained in a note among the seat's logs of that turn
(`{"arena": true, ...}`), so the author sees why the drawing is missing where they look for
it. Notes are few (`MARK_NOTES` per seat and game, then only counted) and are not charged to
the bot's own log budget.

Bounded whatever a bot sends: per message `MARKS_PER_MESSAGE`, per seat and turn
`MARKS_PER_TURN`, per seat and game `MARKS_BYTES` of kept marks; marks past a cap are counted
without being looked at.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from arena.referee.record import GameRecord
from protocol.marks import (
    MARKS_BYTES,
    MARKS_PER_TURN,
    clean_marks,
    mark_size,
    marks_note,
)

#: notes about dropped marks per seat and game; later drops are only counted
MARK_NOTES = 16


class MarkBook:
    """Takes each message's `marks` into the record (`marks`, `marks_dropped`) and says what
    note, if any, the seat's logs get."""

    def __init__(self, record: GameRecord, cells: Container[str]) -> None:
        self.record = record
        self.cells = cells
        #: per seat: the turn its count is of, and how many marks it kept in that turn
        self._turn: list[Any] = [None, None]
        self._in_turn = [0, 0]
        self._bytes = [0, 0]
        self._notes = [0, 0]

    def take(self, seat: int, turn: int | None, t: float, value: Any) -> str | None:
        """Record the marks of one message of `seat` in `turn` (None: before the first turn),
        arrived `t` seconds into the game; the note for its logs when some were dropped
        (None when all were kept, or when the seat's notes are used up)."""
        if value is None:
            return None
        if self._turn[seat] != turn:
            self._turn[seat], self._in_turn[seat] = turn, 0
        room = MARKS_PER_TURN - self._in_turn[seat]
        kept, problems, dropped = clean_marks(value, self.cells, room)
        fitting = []
        for mark in kept:
            size = mark_size(mark)
            if self._bytes[seat] + size > MARKS_BYTES:
                rest = len(kept) - len(fitting)
                dropped += rest
                problems.append(f"{rest} mark(s) past the {MARKS_BYTES} bytes a game allows")
                break
            self._bytes[seat] += size
            fitting.append(mark)
        if fitting:
            self._in_turn[seat] += len(fitting)
            self.record.marks.append({"seat": seat, "turn": turn, "t": t, "marks": fitting})
        if not dropped:
            return None
        self.record.marks_dropped[seat] += dropped
        self._notes[seat] += 1
        if self._notes[seat] > MARK_NOTES:
            return None
        note = marks_note(problems, len(fitting))
        if self._notes[seat] == MARK_NOTES:
            note += " (further drops are only counted, in the record's marks_dropped)"
        return note
