"""Shared helpers for the tournament tests: configs written to real files, fake records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "bots"


def write_config(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def fake_record(
    game_id: str,
    bots: tuple[str, str],
    winner: int | None,
    reason: str = "board_full",
    game: str = "wrigglers",
) -> dict[str, Any]:
    """A minimal record shaped like GameRecord.to_dict(), for store and report tests."""
    forfeit = reason in (
        "time_forfeit",
        "illegal_action",
        "protocol_error",
        "crash",
        "failed_start",
    )
    return {
        "format": "arena-record/1",
        "match_id": game_id,
        "game": game,
        "options": {},
        "seed": 1,
        "opening": [],
        "bots": [{"name": bots[0], "seat": 0}, {"name": bots[1], "seat": 1}],
        "turns": [],
        "result": {
            "winner": winner,
            "result": {0: "1-0", 1: "0-1", None: "1/2-1/2"}[winner],
            "reason": reason,
            "detail": "",
            "scores": [1, 0],
            "loser_seat": None if winner is None else 1 - winner,
            "forfeit": forfeit,
        },
        "started_at": "2026-01-01T00:00:00.000Z",
        "finished_at": "2026-01-01T00:00:01.500Z",
        "turn_count": 10,
    }


def two_bots_toml() -> str:
    return f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]\n'
