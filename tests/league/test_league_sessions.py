"""`reuse = true` in league.toml: the server's game slots keep the processes of bot versions that
offer sessions between their rated games, every game is still recorded in full and rated once,
and no bot process outlives the server. (The workers' slots: tests/league/test_workers.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .support import BOTS, Server, cli, make_league
from .test_workers import leftovers

pytestmark = pytest.mark.slow


def session_bots(tmp: Path) -> list[Path]:
    """Two league versions of the bundled Python random bot, which offers sessions (the SDK's
    default): a kept process saves a Python start per game."""
    out = []
    for name in ("sa", "sb"):
        d = tmp / name
        shutil.copytree(BOTS / "random-py", d, ignore=shutil.ignore_patterns("__pycache__"))
        toml = d / "bot.toml"
        toml.write_text(toml.read_text().replace('name = "random-py"', f'name = "{name}"', 1))
        out.append(d)
    return out


@pytest.mark.parametrize("reuse", [True, False])
def test_league_slots_keep_session_processes_when_allowed(tmp_path: Path, reuse: bool) -> None:
    d = make_league(
        tmp_path / "league",
        concurrency="1",
        time_control='"5+0.05"',
        games='[{ name = "stripes", options = { max_turns = 6 } }]',
        opening_turns="1",
        reuse="true" if reuse else "false",
    )
    cli("league", "user", "add", "op", "--admin", "-C", str(d))
    bots = session_bots(tmp_path)
    for bot in bots:
        cli("league", "bot", "add", str(bot), "--owner", "op", "-C", str(d))
    server = Server(d)
    try:
        server.wait_for(
            lambda: server.get("/api/v1/queue").json()["counts"].get("finished", 0) >= 5,
            what="five rated games",
        )
        games = server.get("/api/v1/games", params={"limit": 200}).json()["items"]
        records = [
            server.get(f"/api/v1/games/{g['id']}/record").json()
            for g in games
            if g["state"] == "finished"
        ]
    finally:
        assert server.stop() == 0
    assert len(records) >= 5
    for rec in records:
        assert rec["result"]["reason"] not in ("crash", "protocol_error", "failed_start"), rec
        assert rec["turns"], "every record is complete"
    exits_kept = [e.get("kept", False) for rec in records for e in rec["exits"]]
    if reuse:
        session_games = sorted(r["session_game"] for rec in records for r in rec["ready"] if r)
        # one slot plays every game: after the first, both seats' processes are kept ones
        assert session_games[0] == 1 and session_games[-1] >= 4, session_games
        assert all(exits_kept)
    else:
        assert not any(exits_kept)
        assert all("session_game" not in r for rec in records for r in rec["ready"] if r)
    # the server closed its slots' pools when it stopped: no bot process is left
    assert leftovers(tmp_path, []) == []
