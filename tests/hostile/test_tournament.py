"""A round robin that includes hostile bots completes with every result recorded, every
forfeit charged to a hostile bot, and no bot process left over, in both isolation modes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import trio

from arena.tournaments.config import load_config
from arena.tournaments.runner import run_tournament
from arena.tournaments.store import Store

from .conftest import IMAGE, wait_gone

MODES = ("good", "busy", "orphan", "fork_bomb", "garbage", "exit_now")


def write_league(directory: Path, results: Path, isolation: str, token: str) -> Path:
    """Manifests for a few hostile bots and the good one, and the tournament config."""
    league = directory / f"league-{token}"
    league.mkdir(mode=0o755)
    entries = []
    for mode in MODES:
        if isolation == "process":
            command = [str(directory / "hostile"), mode, token]
            extra = ""
        else:
            command = ["/hostile", mode, token]
            extra = f'isolation = "docker"\nimage = "{IMAGE}"\n'
        manifest = league / f"{mode}.toml"
        manifest.write_text(
            f'name = "{mode}"\ncommand = {command!r}\nencoding = "json"\n'.replace("'", '"')
            + extra
            + "[limits]\nmemory_mb = 64\nprocesses = 32\n"
        )
        entries.append(f'"{manifest}"')
    config = league / "league.toml"
    config.write_text(
        # a loaded machine can hold a hostile busy bot off the CPU past the hard cap: its game is
        # then voided as a host stall and replayed (docs/protocol.md §4), so more attempts
        f'name = "hostile-{isolation}"\nseed = 3\nrounds = 1\nconcurrency = 2\nmax_attempts = 10\n'
        f'results = "{results}"\n'
        f"bots = [{', '.join(entries)}]\n"
        'games = ["wrigglers"]\n'
        "[time_control]\nstartup = 5.0\nmove_time = 0.3\n"
        "[openings]\nturns = 0\n"
    )
    return config


@pytest.mark.parametrize(
    "isolation",
    [pytest.param("process"), pytest.param("docker", marks=pytest.mark.docker)],
)
async def test_league_with_hostile_bots_completes(isolation, request, hostile_dir, token, tmp_path):
    if isolation == "docker":
        request.getfixturevalue("hostile_image")
    config_path = write_league(hostile_dir, tmp_path / "league.sqlite", isolation, token)
    try:
        config = load_config(config_path)
        with trio.fail_after(240):
            outcome = await run_tournament(config)
        pairs = len(MODES) * (len(MODES) - 1) // 2
        assert outcome.status == "complete", outcome
        assert outcome.unplayable == []
        store = Store(tmp_path / "league.sqlite")
        try:
            rows = store.games()
        finally:
            store.close()
        assert len(rows) == 2 * pairs
        for row in rows:
            assert row.reason, row
            if "good" in row.bots:
                # the well-behaved bot never loses to a hostile one
                good_seat = row.bots.index("good")
                assert row.winner == good_seat, row
                assert row.forfeit, row
        left = await trio.to_thread.run_sync(wait_gone, token, 3.0)
        assert not left, left
    finally:
        shutil.rmtree(config_path.parent, ignore_errors=True)
