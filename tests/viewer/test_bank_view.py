"""Time banks where a game is looked at (issue 22.5): `arena replay`'s text, the replay data and
the HTML viewer's clocks show each seat's bank left at every step and what a turn drew. One real
game through the real command: a bot that thinks 0.5 s on its first turn of a 0.2 s move time,
on a 1 s bank."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from arena.referee import GameRecord
from arena.viewer import replay_data

from .viewer_helpers import ROOT

BANKBOT = ROOT / "tests" / "referee" / "bots" / "bankbot.py"


def arena(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.fixture(scope="module")
def banked_game(tmp_path_factory) -> tuple[GameRecord, Path, Path]:
    d = tmp_path_factory.mktemp("bank")
    record, html = d / "g.json", d / "g.html"
    slow = f"{sys.executable} {BANKBOT} sleep 0.5 1"
    quick = f"{sys.executable} {BANKBOT} sleep 0"
    out = arena(
        "match", "stripes", slow, quick, "-o", "max_turns=6", "--seed", "2",
        "--move-time", "0.2", "--bank", "1", "--first-move", "0.2", "-q",
        "--record", str(record), "--html", str(html),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rec = GameRecord.load(record)
    assert rec.result["reason"] != "time_forfeit", rec.result["detail"]
    return rec, record, html


def test_the_replay_text_shows_the_banks_and_the_draw(banked_game):
    rec, record, _ = banked_game
    assert rec.time_control["bank"] == 1.0
    out = arena("replay", str(record), "--no-board")
    assert out.returncode == 0, out.stderr
    assert "time control 0.2s/turn, first move 0.2s, bank 1s" in out.stdout
    first = next(line for line in out.stdout.splitlines() if line.startswith("turn 1:"))
    drawn = rec.turns[0]["bank_drawn"]
    left = rec.turns[0]["banks_after"]
    assert 0.25 <= drawn <= 0.9
    assert f"banks {left[0]:.2f} | 1.00 (drew {drawn * 1000:.1f} ms)" in first, first


def test_every_replay_step_carries_the_banks_left(banked_game):
    rec, _, _ = banked_game
    data = replay_data(rec)
    steps = data["steps"]
    assert steps[0]["banks"] == [1.0, 1.0]
    by_turn = {t["turn"]: t for t in rec.turns}
    for s in steps[1:]:
        assert s["banks"] == by_turn[s["turn"]]["banks_after"]
    first_turn = [s for s in steps if s["turn"] == rec.turns[0]["turn"]]
    assert first_turn[-1]["bank_drawn"] == rec.turns[0]["bank_drawn"]


@pytest.mark.browser
def test_the_viewer_shows_each_seats_bank_at_every_step(browser, banked_game):
    rec, _, html = banked_game
    browser.get(html.as_uri() + "#step=0")  # a local replay opens at the end otherwise
    browser.find_element(By.CSS_SELECTOR, ".arena-viewer svg")

    def bank_row() -> list[str]:
        return browser.execute_script(
            "var rows = Array.from(document.querySelectorAll('.arena-facts tr'));"
            "var row = rows.find(r => r.cells[0].textContent === 'bank');"
            "return row ? Array.from(row.cells).slice(1).map(c => c.textContent) : null;"
        )

    assert bank_row() == ["1.00 s", "1.00 s"]
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("\ue014")  # right arrow: the first action, the slow turn
    left = rec.turns[0]["banks_after"][0]
    assert bank_row() == [f"{left:.2f} s", "1.00 s"]
    step = browser.find_element(By.CSS_SELECTOR, ".arena-step").text
    assert "from the bank" in step, step
    body.send_keys("\ue010")  # End: the banks the game ended with
    last = rec.turns[-1]["banks_after"]
    assert bank_row() == [f"{last[0]:.2f} s", f"{last[1]:.2f} s"]
