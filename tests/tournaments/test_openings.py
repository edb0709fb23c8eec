"""Openings as text: the syntax, openings files in a tournament (order, both seats, errors by
line), `arena match --opening` and the `arena tournament record --command` that replays a game.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.errors import ArenaError
from arena.tournaments.config import load_config
from arena.tournaments.openings import (
    OpeningError,
    check_opening,
    format_opening,
    parse_opening,
    pick,
)
from arena.tournaments.runner import run_tournament
from arena.tournaments.store import Store

from .tournament_helpers import BOTS, REPO, write_config

action = st.text(alphabet="abcdefghijk0123456789-", min_size=1, max_size=6)
opening_st = st.lists(st.lists(action, min_size=1, max_size=5).map(tuple), max_size=6).map(tuple)


@given(opening_st)
def test_format_and_parse_round_trip(opening) -> None:
    assert parse_opening(format_opening(opening)) == opening


def test_syntax_spaces_or_commas_and_errors() -> None:
    assert parse_opening("e5 ; -e5,c3 ;g7  ,  -c3") == (("e5",), ("-e5", "c3"), ("g7", "-c3"))
    assert parse_opening("  ") == ()
    with pytest.raises(OpeningError, match="turn 2 is empty"):
        parse_opening("e5 ; ; c3")


@pytest.mark.parametrize(
    ("game", "text", "message"),
    [
        ("papagra", "e5 ; g7 ; h3", "opening turn 2 is incomplete"),
        ("papagra", "e5 -e5", "opening turn 1 has more actions than the turn takes: -e5"),
        ("wrigglers", "e5 ; e5", "opening turn 2: e5:"),
        ("stripes", "a1-z1", "opening turn 1: a1-z1:"),
    ],
)
def test_openings_are_checked_by_the_engine(game: str, text: str, message: str) -> None:
    with pytest.raises(OpeningError, match=message):
        check_opening(game, {}, parse_opening(text))


def test_pick_sequential_cycles_and_random_uses_each_once_per_pass() -> None:
    ops = tuple(((f"o{i}",),) for i in range(5))
    assert [pick(ops, "sequential", 1, "g", i)[0][0] for i in range(7)] == [
        "o0",
        "o1",
        "o2",
        "o3",
        "o4",
        "o0",
        "o1",
    ]
    first = [pick(ops, "random", 1, "g", i) for i in range(5)]
    assert sorted(first) == sorted(ops)
    assert first == [pick(ops, "random", 1, "g", i) for i in range(5)]  # seeded


def _config_text(openings: str, extra: str = "") -> str:
    return f"""
seed = 2
rounds = 2
concurrency = 2
bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]
games = [{{ name = "wrigglers", openings = "w.txt" }}]
time_control = {{ base = 20.0, increment = 0.2, startup = 20.0 }}
results = "o.sqlite"
{extra}
"""


async def test_a_tournament_plays_its_file_openings_from_both_seats(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text("# two openings\ne5 ; d4\n\nc3 ; g7 ; c4\n")
    cfg = load_config(write_config(tmp_path, _config_text("w.txt")))
    out = await run_tournament(cfg)
    assert out.status == "complete" and out.played == 4
    with Store(cfg.results) as s:
        openings = {r.game_id: s.record(r.game_id)["opening"] for r in s.games()}
    assert openings["r1-wrigglers-p0-a"] == openings["r1-wrigglers-p0-b"] == [["e5"], ["d4"]]
    assert openings["r2-wrigglers-p0-a"] == openings["r2-wrigglers-p0-b"]
    assert openings["r2-wrigglers-p0-a"] == [["c3"], ["g7"], ["c4"]]


def test_a_bad_openings_file_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text("e5 ; d4\n# fine\ne5 ; e5\n")
    with pytest.raises(ArenaError, match=r"key 'games\[0\]\.openings': .*w\.txt:3: opening turn 2"):
        load_config(write_config(tmp_path, _config_text("w.txt")))
    (tmp_path / "w.txt").write_text("# nothing\n")
    with pytest.raises(ArenaError, match="no openings in the file"):
        load_config(write_config(tmp_path, _config_text("w.txt")))
    (tmp_path / "w.txt").write_text("e5\n")
    with pytest.raises(ArenaError, match=r"key 'openings\.order': expected sequential or random"):
        load_config(write_config(tmp_path, _config_text("w.txt", '[openings]\norder = "x"')))


def _arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
    )


def test_match_opening_and_the_record_command_replay_a_tournament_game(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text("e5 ; d4 ; f6\n")
    cfg = write_config(tmp_path, _config_text("w.txt").replace("rounds = 2", "rounds = 1"))
    run = _arena("tournament", "run", str(cfg), "--quiet")
    assert run.returncode == 0, run.stderr
    got = _arena("tournament", "record", str(cfg), "r1-wrigglers-p0-b", "--command")
    assert got.returncode == 0, got.stderr
    argv = shlex.split(got.stdout)
    assert argv[:3] == ["arena", "match", "wrigglers"]
    assert argv[argv.index("--opening") + 1] == "e5 ; d4 ; f6"
    replay = tmp_path / "replay.json"
    again = _arena(*argv[1:], "--record", str(replay), "--quiet")
    assert again.returncode == 0, again.stderr
    with Store(tmp_path / "o.sqlite") as s:
        original = s.record("r1-wrigglers-p0-b")
    copy = json.loads(replay.read_text())
    assert copy["opening"] == original["opening"] == [["e5"], ["d4"], ["f6"]]
    assert [b["name"] for b in copy["bots"]] == [b["name"] for b in original["bots"]]
    assert copy["seed"] == original["seed"]
    # deterministic bots, same seed and position: the same game
    moves = [[[a["action"] for a in t["actions"]] for t in r["turns"]] for r in (copy, original)]
    assert moves[0] == moves[1]
    bad = _arena(
        "match",
        "wrigglers",
        str(BOTS / "random-py"),
        str(BOTS / "random-c"),
        "--opening",
        "e5 ; e5",
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("arena: error: --opening: opening turn 2: e5:")
    assert len(bad.stderr.strip().splitlines()) == 1


def test_record_command_turn_restarts_the_game_at_that_moment(tmp_path: Path) -> None:
    from arena.referee import GameRecord
    from arena.referee.moments import find_moment

    text = _config_text("w.txt").replace("rounds = 2", "rounds = 1")
    text = text.replace(
        'games = [{ name = "wrigglers", openings = "w.txt" }]', 'games = ["papagra"]'
    )
    cfg = write_config(tmp_path, text)
    run = _arena("tournament", "run", str(cfg), "--quiet")
    assert run.returncode == 0, run.stderr
    with Store(tmp_path / "o.sqlite") as s:
        original = GameRecord.from_dict(s.record("r1-papagra-p0-a"))
    for at, first in (("7.2", 7), ("8", 8)):
        got = _arena("tournament", "record", str(cfg), "r1-papagra-p0-a", "--command", "--turn", at)
        assert got.returncode == 0, got.stderr
        argv = shlex.split(got.stdout.splitlines()[0])
        replay = tmp_path / f"at-{at}.json"
        again = _arena(*argv[1:], "--record", str(replay), "--quiet")
        assert again.returncode == 0, again.stderr
        copy = GameRecord.load(replay)
        turn, _, action = at.partition(".")
        moment = find_moment(original, int(turn), int(action or 1))
        assert copy.initial_state().describe() == moment.state.describe()
        assert copy.turns[0]["turn"] == first and copy.seed == original.seed
    bad = _arena("tournament", "record", str(cfg), "r1-papagra-p0-a", "--command", "--turn", "7.9")
    assert bad.returncode == 2 and "--turn 7.9: the record has no such moment" in bad.stderr
