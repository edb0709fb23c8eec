"""How a game ended, said once: the arena's reason codes, their words, and a record's result.

A game ends by the rules (each engine's codes, listed on its rules page: `board_full`,
`max_turns`, ...) or by the arena's own codes, `Reason`: a bot broke a rule of the arena (its
time, an illegal action, the protocol, a crash, a failed start, its memory) and loses by a
forfeit, or both bots failed to start, a draw that is no contest (recorded, never rated). The
values are the codes records, both databases and docs/protocol.md#6 have always used, so a
`Reason` is the same string wherever it is stored.

Everything that reads an outcome reads it here: the forfeit columns of the tournament reports
(`Reason.kind`, `KIND_ORDER`), the words pages and reports show (`REASON_WORDS`,
`reason_text`), and a record's result as the fields a results table stores (`result_fields`,
for the tournaments' SQLite file and the league's games alike), so the meaning of a result is
derived in one place. The record itself stays a versioned dict (docs/record.md): this module
reads it, it does not wrap it.

Imports only the games' base (the result strings): the referee, tournaments, the viewer and the
league all sit above it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from arena.games.base import RESULT_STRINGS


class Reason(StrEnum):
    """The arena's own reason codes (docs/protocol.md#6); the engines' codes stay strings."""

    TIME_FORFEIT = "time_forfeit"
    ILLEGAL_ACTION = "illegal_action"
    PROTOCOL_ERROR = "protocol_error"
    CRASH = "crash"
    FAILED_START = "failed_start"
    MEMORY_LIMIT = "memory_limit"
    BOTH_FAILED_START = "both_failed_start"

    @classmethod
    def of(cls, code: str | None) -> Reason | None:
        """The arena's reason for a code; None for a game that ended by its rules."""
        return cls._value2member_map_.get(code)  # type: ignore[return-value]

    @property
    def forfeit(self) -> bool:
        """The named bot lost by breaking a rule of the arena (its opponent is credited the
        win); not when both failed to start, a draw with no loser."""
        return self is not Reason.BOTH_FAILED_START

    @property
    def kind(self) -> str:
        """The forfeit's column in the tournament reports (`KIND_ORDER`)."""
        return _KINDS[self]

    @property
    def words(self) -> str:
        return _WORDS[self]


_KINDS: dict[Reason, str] = {
    Reason.TIME_FORFEIT: "time",
    Reason.ILLEGAL_ACTION: "illegal",
    Reason.PROTOCOL_ERROR: "protocol",
    Reason.CRASH: "crash",
    Reason.FAILED_START: "start",
    Reason.MEMORY_LIMIT: "memory",
    Reason.BOTH_FAILED_START: "start",  # each seat forfeited its start
}

#: the reports' forfeit columns, in order
KIND_ORDER = ("time", "illegal", "protocol", "crash", "start", "memory")

_WORDS: dict[Reason, str] = {
    Reason.TIME_FORFEIT: "out of time",
    Reason.ILLEGAL_ACTION: "illegal move",
    Reason.PROTOCOL_ERROR: "protocol error",
    Reason.CRASH: "bot crashed",
    Reason.FAILED_START: "bot failed to start",
    Reason.MEMORY_LIMIT: "over its memory limit",
    Reason.BOTH_FAILED_START: "both bots failed to start",
}

#: every reason code a game can end by, in words, for pages and reports: the engines' (each
#: rules page lists its own) and the arena's (`Reason`). One table, so a page never shows a
#: code where words belong; `reason_text` falls back to the code with spaces for a code added
#: without words.
REASON_WORDS: dict[str, str] = {
    # by the rules (arena/games)
    "board_full": "board full",
    "repetition": "threefold repetition",
    "max_turns": "turn limit reached",
    "no_moves": "no move left",
    "stuck": "a player could not move",
    "both_passed": "both passed",
    "tie_last_pass": "both passed with equal scores",
    "blocked": "blocked (four failed moves)",
    "resign": "resignation",
    # by the arena: the forfeits and the draw when neither bot starts
    **{str(r): r.words for r in Reason},
}


def reason_text(code: str | None) -> str:
    """A reason code in words ("max_turns" -> "turn limit reached")."""
    if not code:
        return ""
    return REASON_WORDS.get(code, code.replace("_", " "))


def is_forfeit(code: str | None) -> bool:
    """A code by which the named bot lost by a forfeit (`Reason.forfeit`)."""
    reason = Reason.of(code)
    return reason is not None and reason.forfeit


def by_failure(code: str | None) -> bool:
    """The game was decided by a bot's failure rather than by the rules: any of the arena's
    own codes (the record's `result.forfeit`, docs/record.md; `resign` is not one)."""
    return Reason.of(code) is not None


def forfeit_seats(code: str | None, winner: int | None) -> tuple[int, ...]:
    """The seats that forfeited a game that ended by `code`: both when neither started, the
    loser of a forfeit, none when the rules ended it."""
    if code == Reason.BOTH_FAILED_START:
        return (0, 1)
    if is_forfeit(code) and winner is not None:
        return (1 - winner,)
    return ()


@dataclass(frozen=True, slots=True)
class ResultFields:
    """A finished game's result as the results tables store it (tournaments' `games`, the
    league's games): one reading of the record's `result`, for both."""

    winner: int | None  # a seat, None for a draw
    result: str  # 1-0, 0-1, 1/2-1/2
    reason: str
    detail: str
    forfeit: bool  # the loser forfeited (time, illegal, crash, ...; both, when neither started)
    loser_seat: int | None
    scores: tuple[int | None, int | None]
    turns: int | None
    duration: float | None  # wall seconds, start to end
    rated: bool  # False when both bots failed to start: no contest


def result_fields(record: Mapping[str, Any]) -> ResultFields:
    """The result of a record (a GameRecord's dict) as the fields a results table stores.
    Tolerant of what older or hand-made records lack: a result string from the winner, the
    forfeit flag from the reason, the duration from the timestamps."""
    res = record.get("result") or {}
    winner = res.get("winner")
    reason = str(res.get("reason") or "")
    scores = [*list(res.get("scores") or ()), None, None]
    duration = record.get("duration") or _duration(
        record.get("started_at"), record.get("finished_at")
    )
    return ResultFields(
        winner=winner,
        result=res.get("result") or RESULT_STRINGS.get(winner, RESULT_STRINGS[None]),
        reason=reason,
        detail=str(res.get("detail") or ""),
        forfeit=bool(res.get("forfeit")) or is_forfeit(reason),
        loser_seat=res.get("loser_seat"),
        scores=(scores[0], scores[1]),
        turns=record.get("turn_count"),
        duration=duration,
        rated=reason != Reason.BOTH_FAILED_START,
    )


def _duration(start: Any, end: Any) -> float | None:
    try:
        a = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        b = datetime.fromisoformat(str(end).replace("Z", "+00:00"))
    except ValueError:
        return None
    return round((b - a).total_seconds(), 3)


def now_iso() -> str:
    """The UTC time as 2026-01-31T12:34:56.789Z, the one timestamp format of records, results
    files and the league's tables (every game stamps its start and end: cheaper than
    datetime's formatting). It sorts as text."""
    t = time.time()
    ms = int(t * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{ms:03d}Z"
