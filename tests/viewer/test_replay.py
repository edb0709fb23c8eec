"""Replay data, the HTML page and the per-turn SVGs: what they hold, checked against the engine,
and that nothing a bot wrote reaches the page as markup."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import GAME_NAMES, make_game
from arena.referee import GameRecord
from arena.viewer import (
    cell_markup,
    mark_cells,
    replay_data,
    replay_page,
    static_text,
    write_turn_svgs,
)
from arena.viewer.replay import REPLAY_FORMAT

from .viewer_helpers import BOTS, HOSTILE_NAME, HTMLBOT, ROOT, misbehaving_bot, play

VARIANTS = [(name, {}) for name in GAME_NAMES] + [
    ("papagra", {"board": "square 5", "extra_removals": 1}),
    ("wrigglers", {"ludii_rules": True}),
]


def random_record(game_name: str, options: dict, seed: int, turns: int) -> GameRecord:
    """A record of random legal play, shaped as the referee writes it (optional actions taken
    or left at random, so early ends are in it)."""
    game = make_game(game_name, options)
    state = game.new_initial_state()
    rng = random.Random(seed)
    entries = []
    while not state.is_terminal() and len(entries) < turns:
        turn, seat = state.turn_number(), state.current_player()
        entry = {"turn": turn, "seat": seat, "actions": [], "elapsed": 0.01, "t": len(entries)}
        while not state.is_terminal() and state.turn_number() == turn:
            if state.can_end_turn() and rng.random() < 0.5:
                state.end_turn()
                entry["ended_early"] = True
                break
            action = rng.choice(state.legal_actions())
            state.apply(action)
            entry["actions"].append({"action": action, "elapsed": 0.01})
        entry["clocks_after"] = [1.0, 2.0]
        entries.append(entry)
    result = state.result()
    return GameRecord(
        game=game_name,
        options=dict(game.options),
        bots=[{"name": "a", "colour": game.colours[0]}, {"name": "b", "colour": game.colours[1]}],
        turns=entries,
        logs=[{"seat": 0, "t": 0.5, "message": "hello"}, {"seat": 1, "t": 99.0, "message": "late"}],
        result={
            "result": result.result_string if result else None,
            "winner": result.winner if result else None,
            "reason": result.reason if result else "",
            "scores": list(state.scores()),
        },
    )


@pytest.mark.parametrize(("name", "options"), VARIANTS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), turns=st.integers(1, 40))
def test_steps_rebuild_every_position(name, options, seed, turns):
    """Applying the steps' cell changes to the first board gives, at the end of every turn,
    exactly the engine's picture of the position after that turn."""
    record = random_record(name, options, seed, turns)
    data = replay_data(record)
    assert data["format"] == REPLAY_FORMAT
    json.dumps(data)  # JSON-safe
    steps = data["steps"]
    assert len(steps) == 1 + sum(max(1, len(t["actions"])) for t in record.turns)
    shown = cell_markup(data["board"])
    expected = iter(state for _, state in record.replay_states())
    state = next(expected)
    assert shown == cell_markup(state.render_svg())
    for i, step in enumerate(steps[1:], 1):
        shown.update(step["cells"])
        last_of_turn = i == len(steps) - 1 or steps[i + 1].get("first_of_turn")
        if last_of_turn:
            state = next(expected)
            assert shown == cell_markup(state.render_svg()), f"step {i}"
            assert step["scores"] == list(state.scores())
    # every log is shown with exactly one turn, in order, the late one with the last turn
    ranges = [s["logs"] for s in steps if s.get("first_of_turn") or s is steps[-1]]
    shown_logs = sorted({i for a, b in ranges for i in range(a, b)})
    assert shown_logs == list(range(len(record.logs)))


def test_replay_of_a_real_game_with_html_in_names_and_logs(tmp_path):
    record = play("hexaphage", HTMLBOT, BOTS / "random-py", seed=3, max_turns="12")
    assert record.bots[0]["name"] == HOSTILE_NAME
    assert any("<img" in log["message"] for log in record.logs)
    data = replay_data(record)
    assert data["players"][0]["name"] == HOSTILE_NAME  # data, as it was
    page = replay_page(data)
    # the page's own two script elements, and no element from a bot
    assert page.count("<script") == 2 and page.count("</script>") == 2
    for markup in ("<img", "<svg onload", "<b>", "<i>", "</textarea>"):
        assert markup not in page
    embedded = re.search(
        r'<script type="application/json" id="arena-replay-data">(.*?)</script>', page, re.S
    )
    assert embedded and json.loads(embedded.group(1)) == json.loads(json.dumps(data))
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


@pytest.mark.parametrize(
    ("mode", "reason", "note"),
    [("resign", "resign", "resigns"), ("illegal", "illegal_action", None)],
)
def test_resignation_and_illegal_action_steps(mode, reason, note):
    record = play("stripes", BOTS / "random-py", misbehaving_bot(mode, fail_turn=3), seed=2)
    assert record.result["reason"] == reason
    data = replay_data(record)
    last = data["steps"][-1]
    assert data["result"]["reason"] == reason
    assert last["seat"] == 1 and last["turn"] == record.turns[-1]["turn"]
    if note:
        assert last["action"] is None and last["note"] == note
    else:
        assert last["illegal"] is True and last["cells"] == {}
        assert last["action"] == record.result["failure"]["action"]


def test_turn_svgs_are_standalone_and_mark_the_turn(tmp_path):
    record = random_record("quadraphages", {}, 5, 6)
    paths = write_turn_svgs(record, tmp_path / "pics")
    assert [p.name for p in paths] == [f"turn-{i:03d}.svg" for i in range(len(record.turns) + 1)]
    for path, turn in zip(paths[1:], record.turns, strict=True):
        root = ElementTree.parse(path).getroot()  # well-formed
        style = root.find("{http://www.w3.org/2000/svg}style")
        assert style is not None
        for item in turn["actions"]:
            for cell in re.findall(r"[a-z]+[0-9]+", item["action"]):
                assert f'g[data-cell="{cell}"]' in style.text
    # marked groups are moved, not lost or doubled
    assert sorted(cell_markup(paths[3].read_text())) == sorted(
        cell_markup(make_game("quadraphages").new_initial_state().render_svg())
    )


def test_mark_cells_ignores_names_that_are_not_cells():
    svg = make_game("wrigglers").new_initial_state().render_svg()
    assert mark_cells(svg, ["pass", '"];x{'], []) == svg
    marked = mark_cells(svg, ["c3"], ["d4"])
    assert 'g[data-cell="c3"]' in marked and "stroke-dasharray" in marked
    ElementTree.fromstring(marked)


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_cli_match_and_replay_write_html_and_svgs(tmp_path):
    record, html, pics = tmp_path / "g.json", tmp_path / "g.html", tmp_path / "pics"
    out = run_cli(
        "match", "papagra", str(BOTS / "random-py"), str(BOTS / "random-py"),
        "-o", "board=hex 3", "--seed", "4", "--tc", "20+0.5", "-q",
        "--record", str(record), "--html", str(html), "--svg", str(pics),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rec = GameRecord.load(record)
    assert html.read_text().startswith("<!DOCTYPE html>")
    assert len(list(pics.glob("turn-*.svg"))) == len(rec.turns) + 1
    html.unlink()
    out = run_cli("replay", str(record), "--html", str(html), "--svg", str(tmp_path / "again"))
    assert out.returncode == 0, out.stderr
    assert f"wrote {html}" in out.stdout
    assert f"wrote {len(rec.turns) + 1} SVG files" in out.stdout
    assert (tmp_path / "again" / "turn-000.svg").read_text() == (pics / "turn-000.svg").read_text()
    data = json.loads(
        re.search(r'id="arena-replay-data">(.*?)</script>', html.read_text(), re.S).group(1)
    )
    assert data == json.loads(json.dumps(replay_data(rec)))


def test_cli_bad_picture_paths_are_one_line_errors(tmp_path):
    record = tmp_path / "g.json"
    random_record("stripes", {}, 1, 3).write(record)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for argv, problem in [
        (("--svg", str(a_file)), "not a directory"),
        (("--html", str(tmp_path / "nowhere" / "x.html")), "no such directory"),
    ]:
        out = run_cli("replay", str(record), *argv)
        assert out.returncode == 2
        assert out.stderr.startswith("arena: error: ") and problem in out.stderr
        assert out.stderr.count("\n") == 1


def test_static_files_can_be_inlined():
    """The page inlines viewer.js and viewer.css: they must not close their own element."""
    for name, closing in (("viewer.js", "</script"), ("viewer.css", "</style")):
        text = static_text(name)
        assert closing not in text.lower() and "<!--" not in text
