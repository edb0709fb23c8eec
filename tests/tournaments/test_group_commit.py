"""Group commit: the games that finish while a commit is being written go in the next
transaction together. A game still counts only once it is committed, and a game that finished
but was not committed when the runner died is played again by the next run."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from arena.tournaments.config import load_config
from arena.tournaments.progress import Progress
from arena.tournaments.runner import run_tournament
from arena.tournaments.store import GameRow, Store

from .tournament_helpers import BOTS, REPO, write_config

CONFIG = """
seed = 5
rounds = {rounds}
concurrency = 2
reuse = true
bots = [{{ path = "{c}", name = "a" }}, {{ path = "{c}", name = "b" }}]
games = [{{ name = "papagra", options = {{ max_turns = 4 }} }}]
time_control = {{ base = 20.0, increment = 0.2, startup = 20.0 }}
results = "{name}.sqlite"
"""


def _config_path(tmp_path: Path, name: str, rounds: int) -> Path:
    text = CONFIG.format(rounds=rounds, c=BOTS / "random-c", name=name)
    return write_config(tmp_path, text, f"{name}.toml")


def _committed(results: Path) -> set[str]:
    """The games in the results file, read by a connection of our own (what survives)."""
    db = sqlite3.connect(results)
    try:
        return {r[0] for r in db.execute("SELECT game_id FROM games")}
    finally:
        db.close()


class SeesCommitted(Progress):
    """Checks, as each game is reported finished, that another reader finds it committed."""

    def __init__(self, results: Path) -> None:
        self.results = results
        self.finished: list[str] = []
        self.missing: list[str] = []

    def game_finished(self, row: GameRow) -> None:
        self.finished.append(row.game_id)
        if row.game_id not in _committed(self.results):
            self.missing.append(row.game_id)


async def test_games_finished_during_a_commit_share_the_next_and_count_only_once_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a slow disk: every commit takes 150 ms (in the store's thread), so the games that
    # finish meanwhile pile up for the next one
    batches: list[list[str]] = []
    record_games = Store.record_games

    def slow_record_games(self: Store, games: list, run_id: int) -> None:
        time.sleep(0.15)
        record_games(self, games, run_id)
        batches.append([g.game_id for g in games])

    monkeypatch.setattr(Store, "record_games", slow_record_games)
    cfg = load_config(_config_path(tmp_path, "group", rounds=8))
    progress = SeesCommitted(cfg.results)
    outcome = await run_tournament(cfg, progress=progress)
    assert outcome.status == "complete" and outcome.played == outcome.scheduled == 16
    assert progress.missing == []  # never reported before its commit
    assert sorted(progress.finished) == sorted(g for b in batches for g in b)
    assert max(len(b) for b in batches) > 1, batches  # some commits held several games
    with Store(cfg.results) as s:
        assert s.count_games() == 16
        (run,) = s.runs()
        assert run["played"] == 16
        for game_id in progress.finished:  # the text stored is the complete record
            record = s.record(game_id)
            assert record["match_id"] == f"{cfg.name}/{game_id}"
            assert len(record["turns"]) + len(record["opening"]) == record["turn_count"]


# Run in a child process: the first commit is slow (the games finishing meanwhile go into the
# second), the second announces the games it holds in a file and never returns (a machine that
# dies mid-commit). The first commit holds the first game only: no game waits for company.
_STALLED_RUNNER = """
import sys, threading, time
from pathlib import Path
import trio
from arena.tournaments.config import load_config
from arena.tournaments.runner import run_tournament
from arena.tournaments.store import Store

marker = Path(sys.argv[2])
record_games = Store.record_games
commits = []

def stalled(self, games, run_id):
    commits.append(games)
    if len(commits) == 1:
        time.sleep(0.1)
        return record_games(self, games, run_id)
    marker.write_text(" ".join(g.game_id for g in games))
    threading.Event().wait()

Store.record_games = stalled
trio.run(run_tournament, load_config(sys.argv[1]))
"""


@pytest.mark.slow
def test_a_game_finished_but_not_committed_when_the_runner_dies_is_replayed(
    tmp_path: Path,
) -> None:
    path = _config_path(tmp_path, "killed", rounds=4)
    results = tmp_path / "killed.sqlite"
    marker = tmp_path / "in-commit"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", _STALLED_RUNNER, str(path), str(marker)],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() or not marker.read_text():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the second commit never began"
            time.sleep(0.02)  # polling for the child's state, not synchronising
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stderr:
            proc.stderr.close()
    in_commit = set(marker.read_text().split())
    committed = _committed(results)
    assert in_commit and not in_commit & committed  # finished, never committed: not there

    cfg = load_config(path)
    again = trio.run(run_tournament, cfg)
    assert again.status == "complete"
    assert again.pending_at_start == 8 - len(committed) == again.played
    with Store(results) as s:
        assert s.count_games() == 8
        runs = s.runs()
        assert [r["status"] for r in runs] == ["killed", "complete"]
        second = runs[1]["run_id"]
        replayed = {
            r[0] for r in s.db.execute("SELECT game_id FROM games WHERE run_id = ?", (second,))
        }
    assert in_commit <= replayed  # the lost commit's games were played again, by the new run
    assert not committed & replayed
