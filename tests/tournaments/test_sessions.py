"""`reuse = true`: a tournament keeps the processes of bots that offer sessions between their
games, in its real referee workers; every game is recorded in full, and no bot process
outlives the run."""

from __future__ import annotations

import os
from pathlib import Path

from arena.tournaments.config import load_config
from arena.tournaments.runner import run_tournament
from arena.tournaments.store import Store

from .tournament_helpers import write_config

ROOT = Path(__file__).resolve().parents[2]
#: two entries of bots/random-c, which offers sessions
TWO_BOTS = f"""[[bots]]
path = "{ROOT / "bots" / "random-c"}"
name = "c1"
[[bots]]
path = "{ROOT / "bots" / "random-c"}"
name = "c2"
"""


def processes_running(path: Path) -> list[int]:
    """Live processes whose command line names `path` (the bots of this test)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                if str(path).encode() in f.read():
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_reuse_keeps_session_processes_between_games(tmp_path: Path) -> None:
    text = f"""
seed = 3
rounds = 3
concurrency = 1
reuse = true
games = [{{ name = "papagra", options = {{ board = "hex 3", max_turns = 4 }} }}]
time_control = {{ base = 20.0, increment = 0.5, startup = 20.0 }}
results = "s.sqlite"
{TWO_BOTS}"""
    cfg = load_config(write_config(tmp_path, text))
    assert cfg.reuse
    out = await run_tournament(cfg)
    assert out.status == "complete" and out.played == 6
    with Store(cfg.results) as s:
        records = [s.record(r.game_id) for r in s.games()]
    session_games = sorted(r["session_game"] for rec in records for r in rec["ready"])
    assert session_games[0] == 1 and session_games[-1] > 1  # later games reused processes
    for rec in records:
        assert rec["result"]["reason"] not in ("crash", "protocol_error", "failed_start")
        assert all(e["kept"] for e in rec["exits"])
        assert all(len(t["actions"]) >= 1 for t in rec["turns"])
    # the worker closed its pool when the run ended: nothing of the bots is left
    assert processes_running(ROOT / "bots" / "random-c" / "random_bot") == []


async def test_reuse_is_off_by_default(tmp_path: Path) -> None:
    text = f"""
games = [{{ name = "papagra", options = {{ board = "hex 3", max_turns = 4 }} }}]
results = "s.sqlite"
concurrency = 1
{TWO_BOTS}"""
    cfg = load_config(write_config(tmp_path, text))
    assert not cfg.reuse
    out = await run_tournament(cfg)
    assert out.status == "complete"
    with Store(cfg.results) as s:
        records = [s.record(r.game_id) for r in s.games()]
    for rec in records:
        assert all("session_game" not in r for r in rec["ready"])
        assert all(e["exited_after_end"] for e in rec["exits"])
