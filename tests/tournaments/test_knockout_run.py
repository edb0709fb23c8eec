"""A knockout tournament with the bundled bots: played stage by stage from recorded games, so
a SIGKILLed run resumes where it was and crowns the same champion, no game played twice."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from arena.tournaments.config import ConfigError, load_config
from arena.tournaments.knockout import Rules
from arena.tournaments.store import Store

from .test_cli import _arena, _count, _start_and_wait, descendants, wait_gone
from .test_runner import game_signature
from .tournament_helpers import BOTS, write_config

CONFIG = """
name = "{name}"
seed = 11
format = "knockout"
concurrency = 2
bots = ["{strong}", "{py}", "{c}", "{js}", {{ path = "{py}", name = "py-two" }}]
games = ["wrigglers"]
time_control = {{ base = 20.0, increment = 0.2, startup = 20.0 }}
results = "{name}.sqlite"

[knockout]
pairs = 2
extra_pairs = 1
"""


def _write(tmp_path: Path, name: str) -> Path:
    text = CONFIG.format(
        name=name,
        strong=BOTS / "strong",
        py=BOTS / "random-py",
        c=BOTS / "random-c",
        js=BOTS / "random-js",
    )
    return write_config(tmp_path, text, f"{name}.toml")


def _report(results: Path) -> dict:
    done = _arena("tournament", "report", str(results), "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_knockout_killed_and_resumed_crowns_the_same_champion(tmp_path: Path) -> None:
    ref_cfg = _write(tmp_path, "ref")
    done = _arena("tournament", "run", str(ref_cfg), "--quiet")
    assert done.returncode == 0, done.stderr
    ref = _report(tmp_path / "ref.sqlite")
    bracket = ref["bracket"]
    assert bracket["champion"] is not None and ref["progress"]["complete"]
    # 5 entrants: 3 byes in round 1 (to the best seeds), then 2 matches, then the final
    rounds = bracket["rounds"]
    assert [len(r) for r in rounds] == [4, 2, 1]
    assert [m["bye"] for m in rounds[0]] == [True, False, True, True]
    assert all(not m["bye"] and m["winner"] for r in rounds[1:] for m in r)
    total = ref["progress"]["played"]
    assert total >= 4 * 2 * 2  # four matches of two game pairs at the least

    cfg = _write(tmp_path, "killed")
    results = tmp_path / "killed.sqlite"
    proc = _start_and_wait(cfg, results, 5)  # into the second stage (round 2 needs round 1)
    below = descendants(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert wait_gone(below) == set()
    at_kill = _count(results)
    assert 5 <= at_kill < total

    status = _arena("tournament", "status", str(results))
    assert status.returncode == 0, status.stderr
    assert "champion: not decided yet" in status.stdout

    resumed = _arena("tournament", "run", str(cfg), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    again = _report(results)
    assert again["bracket"]["champion"] == bracket["champion"]
    assert again["bracket"]["rounds"] == bracket["rounds"]
    with Store(results) as s, Store(tmp_path / "ref.sqlite") as r:
        assert s.count_games() == total  # every game once: the game id is the primary key
        assert game_signature(s) == game_signature(r)
        runs = s.runs()
        assert [x["status"] for x in runs] == ["killed", "complete"]
        assert runs[1]["played"] == total - at_kill
    # a finished knockout has nothing left to play
    third = _arena("tournament", "run", str(cfg), "--quiet")
    assert third.returncode == 0, third.stderr
    with Store(results) as s:
        assert s.count_games() == total and s.runs()[-1]["played"] == 0
    status = _arena("tournament", "status", str(results))
    assert f"champion: {bracket['champion']}" in status.stdout
    assert f"{total}/{total} (complete)" in status.stdout
    page = _arena("tournament", "report", str(results), "--format", "html")
    assert 'id="bracket"' in page.stdout and bracket["champion"] in page.stdout


def test_knockout_config(tmp_path: Path) -> None:
    two = f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]\ngames = ["wrigglers"]\n'
    cfg = load_config(
        write_config(tmp_path, f'format = "knockout"\n{two}[knockout]\npairs = 3\n', "a.toml")
    )
    assert cfg.knockout == Rules(3, 1)
    identity = cfg.identity(["a", "b"])["knockout"]
    assert identity == {"pairs": 3, "extra_pairs": 1, "seeds": ["a", "b"]}
    bad = {
        "k1.toml": (f"{two}[knockout]\npairs = 2\n", "only a format"),
        "k2.toml": (f'format = "knockout"\n{two}[knockout]\npairs = 0\n', "knockout.pairs"),
        "k3.toml": (f'format = "knockout"\n{two}rounds = 2\n', "rounds"),
        "k4.toml": (
            'format = "knockout"\n' + two.replace('"wrigglers"', '"wrigglers", "stripes"'),
            "one game",
        ),
        "k5.toml": (f'format = "knockout"\n{two}[knockout]\nrounds = 2\n', "knockout"),
    }
    for name, (text, words) in bad.items():
        with pytest.raises(ConfigError, match=words):
            load_config(write_config(tmp_path, text, name))
