"""How a game ended, said once (arena/referee/outcome.py): the arena's reason codes are today's
strings with their forfeit and report kind, and a record's result reads the same for the
tournament's results file and the runner's own row (`result_fields`), however incomplete the
record's result is."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.referee.outcome import (
    KIND_ORDER,
    REASON_WORDS,
    Reason,
    by_failure,
    forfeit_seats,
    is_forfeit,
    result_fields,
)
from arena.tournaments.runner import row_from_record
from arena.tournaments.schedule import ScheduledGame
from arena.tournaments.store import FinishedGame, _game_row

FORFEITS = ("time_forfeit", "illegal_action", "protocol_error", "crash", "failed_start")
ARENA_CODES = (*FORFEITS, "memory_limit", "both_failed_start")


def test_the_reason_codes_are_the_strings_records_have_always_held() -> None:
    assert {str(r) for r in Reason} == set(ARENA_CODES)
    assert [r for r in Reason if r.forfeit] == [Reason(c) for c in (*FORFEITS, "memory_limit")]
    assert not Reason.BOTH_FAILED_START.forfeit  # a draw: nobody lost
    assert {r.kind for r in Reason} == set(KIND_ORDER)
    assert Reason.BOTH_FAILED_START.kind == Reason.FAILED_START.kind == "start"
    for code in ARENA_CODES:
        assert by_failure(code) and "_" not in REASON_WORDS[code]
    for code in ("max_turns", "resign", "board_full", "", None):
        assert Reason.of(code) is None and not by_failure(code) and not is_forfeit(code)


def test_the_seats_that_forfeited() -> None:
    assert forfeit_seats("both_failed_start", None) == (0, 1)
    assert forfeit_seats("crash", 0) == (1,)
    assert forfeit_seats("time_forfeit", 1) == (0,)
    assert forfeit_seats("max_turns", 0) == ()
    assert forfeit_seats("max_turns", None) == ()


REASONS = st.sampled_from((*ARENA_CODES, "max_turns", "board_full", "resign", ""))
RESULTS = st.fixed_dictionaries(
    {},
    optional={
        "winner": st.sampled_from((0, 1, None)),
        "result": st.sampled_from(("1-0", "0-1", "1/2-1/2")),
        "reason": REASONS,
        "detail": st.one_of(st.none(), st.text(max_size=5)),
        "forfeit": st.booleans(),
        "loser_seat": st.sampled_from((0, 1, None)),
        "scores": st.one_of(st.none(), st.lists(st.integers(0, 99), max_size=2)),
    },
)


def _record(result: dict[str, Any], duration: float | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "game": "papagra",
        "bots": [{"seat": 1, "name": "b"}, {"seat": 0, "name": "a"}],
        "result": result,
        "turn_count": 7,
        "started_at": "2026-01-31T12:00:00.000Z",
        "finished_at": "2026-01-31T12:00:01.250Z",
    }
    if duration is not None:
        record["duration"] = duration
    return record


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded machine
@given(result=RESULTS, duration=st.sampled_from((None, 0.0, 0.5)))
def test_a_result_reads_the_same_in_the_results_file_and_the_runners_row(
    result: dict[str, Any], duration: float | None
) -> None:
    record = _record(result, duration)
    fields = result_fields(record)
    winner = result.get("winner")
    assert fields.result == result.get("result") or {0: "1-0", 1: "0-1"}.get(winner, "1/2-1/2")
    assert fields.rated == (result.get("reason") != "both_failed_start")
    assert fields.forfeit == (bool(result.get("forfeit")) or is_forfeit(result.get("reason")))
    assert fields.duration == (duration or 1.25)
    assert isinstance(fields.detail, str) and isinstance(fields.reason, str)

    sg = ScheduledGame(
        "g", seq=3, round=1, game="papagra", pair=0, seat_order=0, bots=(0, 1), seed=5
    )
    row = row_from_record(sg, record, attempt=2)
    stored = _game_row(FinishedGame("g", 3, 1, "papagra", 0, 0, 2, record, None), run_id=1)
    # the committed columns: winner .. duration (see _ROW_COLUMNS), as the runner shows them
    assert stored[9:19] == (
        row.winner,
        row.result,
        row.reason,
        row.detail,
        int(row.forfeit),
        row.loser_seat,
        row.scores[0],
        row.scores[1],
        row.turns,
        row.duration,
    )
    assert row.bots == ("a", "b")
