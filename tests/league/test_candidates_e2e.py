"""Candidate verdicts with a real `arena league serve` and real bots, on SQLite and PostgreSQL:
the bundled strong bot submitted over the random one with `league submit --wait` is "better"
(printed as it forms), the reverse is "not better", their games are interleaved with the rated
ones and rate nobody; a server killed mid-test resumes it and counts every game once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from .support import BACKENDS, BOTS, ROOT, Server, add_user, cli, database_url, make_league

pytestmark = pytest.mark.slow
ARENA = (sys.executable, "-m", "arena")
WAIT = ("--wait", "--verdict-timeout", "600")


def named_copy(src: str, name: str, where: Path) -> Path:
    """A bundled bot under another name (a new version of bot `name`)."""
    where.mkdir(parents=True, exist_ok=True)
    dest = where / f"{name}-{src}"
    shutil.copytree(BOTS / src, dest, ignore=shutil.ignore_patterns("__pycache__"))
    toml = dest / "bot.toml"
    lines = toml.read_text().splitlines()
    toml.write_text(
        "\n".join(f'name = "{name}"' if ln.startswith("name =") else ln for ln in lines)
    )
    return dest


def bot_add(league: Path, bot: Path, owner: str) -> None:
    cli("league", "bot", "add", str(bot), "--owner", owner, "-C", str(league))


@pytest.fixture(params=BACKENDS)
def league_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A league of stripes on each backend (its database URL too)."""
    with database_url(request.param, tmp_path) as url:
        yield tmp_path / "league", url


def make(league_dir: tuple[Path, str], **sprt: str) -> Path:
    directory, url = league_dir
    return make_league(
        directory,
        None if url.startswith("sqlite") else url,
        games='["stripes"]',
        **sprt,
    )


def verdict(server: Server, bot: str, number: int) -> dict[str, Any] | None:
    found = server.get(f"/api/v1/bots/{bot}/versions/{number}").json()["verdicts"]
    return found[0] if found else None


def games_table(directory: Path) -> list[Any]:
    """Every game row, by id (read after the server stopped)."""
    from arena.league.db import schema
    from arena.league.settings import load_settings

    engine = sa.create_engine(load_settings(directory).database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.select(schema.games).order_by(schema.games.c.id)).all()
            seats = conn.execute(sa.select(schema.seats)).all()
            ratings = conn.execute(sa.select(schema.ratings)).all()
    finally:
        engine.dispose()
    return [rows, seats, ratings]


def test_better_and_not_better_interleaved_and_unrated(league_dir, tmp_path: Path) -> None:
    # bounds that decide a bot's game pairs against the random bot within a few pairs
    directory = make(league_dir, elo1="200", alpha="0.1", beta="0.1", max_pairs="30")
    token = add_user(directory, "ann")
    bot_add(directory, named_copy("random-py", "mine", tmp_path), "ann")
    bot_add(directory, named_copy("random-py", "other", tmp_path), "ann")
    bot_add(directory, named_copy("strong", "rev", tmp_path), "ann")
    with Server(directory) as server:
        strong = named_copy("strong", "mine", tmp_path / "v2")
        proc = subprocess.run(
            [*ARENA, "league", "submit", server.url, str(strong), "--token", token, *WAIT],
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, proc.stderr + server.log()[-2000:]
        lines = proc.stdout.splitlines()
        assert "validation: passed; mine is on the ladder" in lines
        follow = [ln for ln in lines if ln.startswith("verdict: stripes v2 vs v1: ")]
        # it formed in front of us, one line per update
        assert follow[0].startswith("verdict: stripes v2 vs v1: testing; LLR ")
        assert "(-2.20, 2.20)" in follow[0] and len(follow) >= 2
        assert follow[-1].startswith("verdict: stripes v2 vs v1: better; LLR ")
        assert lines[-1] == "verdict: better (stripes)"
        v = verdict(server, "mine", 2)
        assert v is not None and v["state"] == "better" and v["llr"] >= v["upper"]
        assert v["pairs"] <= 30 and (v["elo"] is None or v["elo"] > 0)
        # the pages say so too
        page = server.get(f"/submissions/{v['version_id']}").text
        assert 'data-state="better"' in page and "Verdict: better than version 1?" in page
        assert 'data-state="better"' in server.get("/bots/mine").text
        # the reverse: the random bot as the new version of the strong one
        bot_add(directory, named_copy("random-py", "rev", tmp_path / "v2"), "ann")
        server.wait_for(
            lambda: (verdict(server, "rev", 2) or {}).get("state") not in (None, "testing"),
            timeout=600,
            what="the reverse test's verdict",
        )
        r = verdict(server, "rev", 2)
        assert r["state"] == "not_better" and r["verdict"] == "not better"
        assert r["llr"] <= r["lower"]
    rows, seats, ratings = games_table(directory)
    kinds = {g.id: g.kind for g in rows}
    test_of = {g.id: g.candidate_test for g in rows if g.candidate_test is not None}
    assert {kinds[g] for g in test_of} == {"candidate"}
    assert not any(g.rated for g in rows if g.kind == "candidate")
    # unrated: every rating counts exactly the rated games its version sat in
    rated_games = {g.id for g in rows if g.state == "finished" and g.rated}
    for r in ratings:
        sat = sum(1 for s in seats if s.version_id == r.version_id and s.game_id in rated_games)
        assert r.games == sat, r
    assert sum(s.mu_after is not None for s in seats if s.game_id in test_of) == 0
    # interleaved: within the first test's span, new games alternate candidate and rated
    first = [g for g, t in test_of.items() if t == min(test_of.values())]
    span = "".join(kinds[g][0] for g in sorted(kinds) if min(first) <= g <= max(first))
    assert span == "cr" * (len(span) // 2) + "c", span


def test_a_server_killed_mid_test_resumes_it_counting_every_game_once(
    league_dir, tmp_path: Path
) -> None:
    # bounds no 6 pairs can decide: the test ends "undecided" after exactly 12 games
    directory = make(league_dir, elo0="-10", elo1="10", max_pairs="6")
    add_user(directory, "ann")
    bot_add(directory, named_copy("random-py", "mine", tmp_path), "ann")
    bot_add(directory, named_copy("strong", "mine", tmp_path / "v2"), "ann")
    server = Server(directory)
    try:
        counted = server.wait_for(
            lambda: (v := verdict(server, "mine", 2)) and v["games"] >= 2 and v,
            timeout=300,
            what="a few games counted",
        )
        assert counted["state"] == "testing"
    finally:
        server.kill()  # SIGKILL: games in play are left running in the database
    with Server(directory) as server:
        done = server.wait_for(
            lambda: (v := verdict(server, "mine", 2)) and v["state"] != "testing" and v,
            timeout=600,
            what="the test's end",
        )
    assert done["state"] == "undecided"
    assert (done["games"], done["pairs"]) == (12, 6)
    assert done["wins"] + done["draws"] + done["losses"] == 12
    rows, _, _ = games_table(directory)
    pairs = sorted((g.candidate_pair, g.version0) for g in rows if g.candidate_test is not None)
    assert len(pairs) == 12 and len(set(pairs)) == 12  # no game made twice
    assert all(g.state == "finished" for g in rows if g.candidate_test is not None)
