"""The shipped test vectors (protocol/vectors/<game>.json) are what the engines give now, every
one replays from the start to its position and answers, and each file covers the corner cases
docs/vectors.md promises (every end reason, mid-turn requests, the option variants)."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from arena.games import GAME_NAMES, make_game
from protocol.vectors import VECTORS_DIR, load
from protocol.vectors.generate import FORMAT, MAX_FILE_BYTES, build_all, replay

from .support import errors

ROOT = Path(__file__).resolve().parents[2]

#: corner cases by game: at least these ids, whatever the search finds besides
REQUIRED = {
    "papagra": {
        "start", "second-action", "remove-just-added", "mark-moves", "opponent-mark-moves",
        "both-marks-move", "mark-blocked", "same-size-both-colours", "optional-third-action",
        "multi-removal", "turn-ended-early", "end-repetition", "end-max-turns",
        "end-board-full", "end-no-moves",
    },
    "wrigglers": {
        "start", "removal-legal", "removal-played", "overcrowded-group", "forced-pass",
        "ludii-pass-any-time", "ludii-no-second-removal", "end-both-passed",
        "end-tie-last-pass", "end-max-turns", "board-19",
    },
    "stripes": {
        "start", "second-first-stripe", "single-cell", "loser-stuck-winner-plays-on",
        "end-stuck", "end-max-turns", "size-15",
    },
    "quadraphages": {
        "start", "part-a", "part-b", "part-c", "number-restricted", "stuck-stone",
        "end-blocked", "end-max-turns",
    },
    "hexaphage": {
        "start", "part-a", "part-b", "part-c", "number-restricted", "stuck-stone",
        "end-blocked", "end-max-turns",
    },
}  # fmt: skip

#: every end reason a rules engine gives by itself (not resign), by game
END_REASONS = {
    "papagra": {"board_full", "repetition", "max_turns", "no_moves"},
    "wrigglers": {"both_passed", "tie_last_pass", "max_turns"},
    "stripes": {"stuck", "max_turns"},
    "quadraphages": {"blocked", "max_turns"},
    "hexaphage": {"blocked", "max_turns"},
}


def test_shipped_files_are_what_the_engines_give_now():
    built = build_all()
    assert sorted(built) == sorted(f"{g}.json" for g in GAME_NAMES)
    total = 0
    for name, text in built.items():
        shipped = (VECTORS_DIR / name).read_text(encoding="utf-8")
        assert shipped == text, f"{name} is out of date: run python -m protocol.vectors"
        size = len(text.encode())
        assert size <= MAX_FILE_BYTES, (name, size)
        total += size
    assert total < 1_000_000, total


def test_the_generator_is_deterministic_across_processes(tmp_path):
    """A fresh interpreter (another hash seed) writes the same bytes; --check says so, and names
    a file that differs."""
    env_runs = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        out.mkdir()
        result = subprocess.run(
            [sys.executable, "-m", "protocol.vectors", "--out", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        env_runs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert env_runs[0] == env_runs[1]
    assert env_runs[0] == {p.name: p.read_bytes() for p in VECTORS_DIR.glob("*.json")}

    check = [sys.executable, "-m", "protocol.vectors", "--check", "--out"]
    ok = subprocess.run([*check, str(tmp_path / "1")], cwd=ROOT, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    stale = tmp_path / "1" / "stripes.json"
    stale.write_text(stale.read_text().replace('"loser":null', '"loser":0', 1))
    bad = subprocess.run([*check, str(tmp_path / "1")], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 1
    assert "out of date" in bad.stderr and "stripes.json" in bad.stderr
    assert "papagra.json" not in bad.stderr


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_vector_replays_to_its_position_and_answers(game):
    data = load(game)
    assert (data["format"], data["game"]) == (FORMAT, game)
    ids = [v["id"] for v in data["vectors"]]
    assert len(ids) == len(set(ids)), "vector ids are unique within a file"
    for v in data["vectors"]:
        where = f"{game}/{v['id']}"
        state = replay(game, v["options"], v["turns"], v["turn_actions"])
        assert state.describe() == v["position"], where
        assert sorted(state.legal_actions()) == sorted(v["legal"]), where
        assert list(state.scores()) == v["scores"] == v["position"]["scores"], where
        assert state.is_terminal() is v["terminal"], where
        assert state.current_player() == v["to_move"] == v["position"]["to_move"], where
        assert state.actions_remaining() == v["actions_remaining"], where
        assert state.can_end_turn() is v["can_end_turn"], where
        if not v["terminal"]:  # (a final position keeps its last turn's actions there)
            assert v["turn_actions"] == v["position"]["turn_actions"], where
        else:
            assert v["turn_actions"] == [], where
        result = state.result()
        if v["terminal"]:
            assert v["legal"] == [] and v["to_move"] is None, where
            assert v["result"]["result"] == result.result_string, where
            assert (v["result"]["winner"], v["result"]["reason"]) == (
                result.winner,
                result.reason,
            ), where
            assert v["result"]["scores"] == list(result.scores), where
        else:
            assert v["result"] is None and result is None, where
            assert v["legal"], where
            # every legal action applies; the position alone (as a bot gets it) is enough
            alone = make_game(game, v["options"]).state_from_description(v["position"])
            assert sorted(alone.legal_actions()) == sorted(v["legal"]), where
            for action in v["legal"]:
                alone.clone().apply(action)
        # the position is one a `turn` message may carry (a live one) or a final one
        definition = "position" if v["terminal"] else "live_position"
        assert errors(definition, v["position"]) == [], where


@pytest.mark.parametrize("game", GAME_NAMES)
def test_each_file_covers_its_corner_cases_and_every_end(game):
    vectors = load(game)["vectors"]
    ids = {v["id"] for v in vectors}
    assert REQUIRED[game] <= ids, sorted(REQUIRED[game] - ids)
    reasons = {v["result"]["reason"] for v in vectors if v["terminal"]}
    assert reasons == END_REASONS[game]
    if game in ("papagra", "quadraphages", "hexaphage"):  # requests within a turn
        assert any(v["turn_actions"] and not v["terminal"] for v in vectors)
    options = {json.dumps(v["options"], sort_keys=True) for v in vectors}
    assert len(options) >= 2, "option variants beside the defaults"
    assert sum(v["id"].startswith("random-") for v in vectors) >= 8


def test_replay_ends_a_turn_whose_optional_action_was_skipped():
    """The one rule of `turns` a reader must know: a complete turn followed by another means
    the optional actions of the first were skipped (Papagra's extra_removals)."""
    (v,) = [v for v in load("papagra")["vectors"] if v["id"] == "turn-ended-early"]
    last = v["turns"][-1]
    assert len(last) == 2 and v["options"]["extra_removals"] > 0
    state = replay("papagra", v["options"], v["turns"][:-1], [])
    for action in last:
        state.apply(action)
    assert state.can_end_turn() and state.turn_number() == v["position"]["turn"] - 1


class _ArenaRules:
    """The arena's engine behind the interface docs/vectors.md's example assumes of a reader's."""

    def __init__(self, game: str, options: dict) -> None:
        self.state = make_game(game, options).new_initial_state()

    @property
    def turn(self) -> int:
        return self.state.turn_number()

    @property
    def over(self) -> bool:
        return self.state.is_terminal()

    def play(self, action: str) -> None:
        self.state.apply(action)

    def end_turn(self) -> None:
        self.state.end_turn()

    def legal_actions(self) -> list[str]:
        return self.state.legal_actions()

    def scores(self) -> tuple[int, int]:
        return self.state.scores()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_example_of_the_docs_checks_an_engine(game, monkeypatch, capsys):
    text = (ROOT / "docs" / "vectors.md").read_text(encoding="utf-8")
    section = text[text.index("## Checking your engine") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("\n```", start)]
    assert "my_rules.new_state" in code and '"papagra.json"' in code
    module = types.ModuleType("my_rules")
    module.new_state = _ArenaRules  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "my_rules", module)
    monkeypatch.chdir(VECTORS_DIR)
    exec(compile(code.replace('"papagra.json"', f'"{game}.json"'), "vectors.md", "exec"), {})
    assert capsys.readouterr().out == f"{len(load(game)['vectors'])} vectors agree\n"
