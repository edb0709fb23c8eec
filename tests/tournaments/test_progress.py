"""The progress displays: one line per game with ETA, and the rich live display."""

from __future__ import annotations

import io

from rich.console import Console

from arena.tournaments.progress import LineProgress, LiveProgress
from arena.tournaments.runner import row_from_record
from arena.tournaments.schedule import ScheduledGame

from .tournament_helpers import fake_record


def _row(k: int, winner: int | None):
    sg = ScheduledGame(f"r1-stripes-p0-{'ab'[k % 2]}", k, 1, "stripes", 0, k % 2, (0, 1), 7)
    return row_from_record(sg, fake_record(sg.game_id, ("a", "b"), winner, game="stripes"), 1)


def test_line_progress() -> None:
    out = io.StringIO()
    p = LineProgress(out)
    p.start(4, [], ["a", "b"], 4)
    p.game_finished(_row(0, 0))
    p.game_voided("r1-stripes-p0-b", 1, "SandboxFault: gone")
    p.game_finished(_row(1, None))
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "4 games scheduled, 0 already recorded, 4 to play"
    assert lines[1].startswith("[1/4 eta ") and "a vs b: 1-0 (board_full, 10 turns)" in lines[1]
    assert "void: r1-stripes-p0-b attempt 1: SandboxFault: gone" in lines[2]
    assert lines[3].startswith("[2/4 eta ")


def test_live_progress_renders() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100)
    p = LiveProgress("demo", console=console)
    p.start(4, [_row(0, 0)], ["a", "b"], 3)
    p.game_started("r1-stripes-p0-b")
    p.game_finished(_row(1, 1))
    p.close()
    text = buf.getvalue()
    assert "demo" in text and "standings" in text and "2/4" in text


def test_live_standings_show_elo() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=60)
    p = LiveProgress("demo", console=console)
    p.start(4, [_row(0, 0), _row(1, None)], ["a", "b"], 2)  # a: 1.5 of 2 against b
    p.close()
    text = buf.getvalue()
    assert "elo" in text and "+95" in text and "-95" in text


def test_both_displays_show_the_sprt() -> None:
    from arena.tournaments.sprt import SprtParams, evaluate

    state = evaluate([0, 1, 2, 3, 4], SprtParams(0, 5))
    out = io.StringIO()
    LineProgress(out).sprt(state)
    assert out.getvalue() == state.summary() + "\n"
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=250, color_system=None)
    live = LiveProgress("demo", console=console)
    live.start(4, [], ["a", "b"], 4)
    live.sprt(state)
    live.close()
    assert "SPRT [0, 5] (logistic" in buf.getvalue() and "games 20" in buf.getvalue()
