"""Seasons with the real server on SQLite and PostgreSQL: the ladder plays season 1, a game is
held in play while the operator closes it (and finishes after, recorded once, in season 1,
unrated), no rated game is made between seasons, season 2 opens through the API with fresh
ratings, and season 1 stays browsable, unchanged, through the API and the pages."""

from __future__ import annotations

import collections
import tempfile
from pathlib import Path

import pytest
import sqlalchemy as sa

from arena.league.db import schema
from arena.league.ratings import MU0, SIGMA0

from .support import BACKENDS, BOTS, Server, cli, database_url, make_league

pytestmark = pytest.mark.slow

GATE_BOT = """import os, time
from protocol.sdk import run_bot

HOLD = {hold!r}

def choose(turn, bot):
    while os.path.exists(HOLD):  # held while the test keeps the file
        time.sleep(0.005)
    return bot.rng.choice(turn["legal"])

raise SystemExit(run_bot(choose))
"""


@pytest.fixture(params=BACKENDS)
def league(request, tmp_path):
    hold_dir = Path(tempfile.mkdtemp(prefix="arena-hold-", dir="/tmp"))
    hold_dir.chmod(0o755)  # the bots' own uids read it
    with database_url(request.param, tmp_path) as url:
        d = make_league(
            tmp_path / "league",
            url,
            concurrency="2",
            time_control='"60+0.05"',
            games='["stripes"]',
            memory_mb="256",
        )
        token = cli("league", "user", "add", "op", "--admin", "-C", str(d)).strip()
        gate = tmp_path / "gate"
        gate.mkdir()
        (gate / "bot.toml").write_text('name = "gate"\ncommand = ["python3", "bot.py"]\n')
        (gate / "bot.py").write_text(GATE_BOT.format(hold=str(hold_dir / "hold")))
        for bot in (BOTS / "random-py", BOTS / "random-c", gate):
            cli("league", "bot", "add", str(bot), "--owner", "op", "-C", str(d))
        yield d, url, token, hold_dir / "hold"
    for p in hold_dir.iterdir():
        p.unlink()
    hold_dir.rmdir()


def _db(url: str):
    return sa.create_engine(url)


def _rows(url: str, query) -> list:
    engine = _db(url)
    try:
        with engine.connect() as conn:
            return conn.execute(query).all()
    finally:
        engine.dispose()


def _season_id(url: str, name: str) -> int:
    return _rows(url, sa.select(schema.seasons.c.id).where(schema.seasons.c.name == name))[0][0]


def _replay_counts(url: str, season_id: int) -> collections.Counter:
    g = schema.games
    expected: collections.Counter = collections.Counter()
    for row in _rows(
        url,
        sa.select(g.c.version0, g.c.version1, g.c.winner).where(
            g.c.state == "finished", g.c.rated.is_(True), g.c.season_id == season_id
        ),
    ):
        for seat, v in ((0, row.version0), (1, row.version1)):
            out = "d" if row.winner is None else ("w" if row.winner == seat else "l")
            expected[(v, out)] += 1
    return expected


def _counts(rows) -> collections.Counter:
    actual: collections.Counter = collections.Counter()
    for r in rows:
        for out, n in (("w", r.wins), ("d", r.draws), ("l", r.losses)):
            if n:
                actual[(r.version_id, out)] = n
    return actual


def test_seasons_with_the_real_server(league):
    d, url, token, hold = league
    auth = {"Authorization": f"Bearer {token}"}
    with Server(d) as server:
        seasons = server.get("/api/v1/seasons").json()["items"]
        assert [(s["name"], s["state"]) for s in seasons] == [("1", "open")]
        server.wait_for(
            lambda: len(server.get("/api/v1/games?season=1&limit=200").json()["items"]) >= 6,
            what="six games of season 1",
        )
        # hold the gate bot: a game it starts from now on waits for its first move
        hold.write_text("")
        held_from = _rows(url, sa.select(sa.func.max(schema.games.c.id)))[0][0]
        gate_version = _rows(
            url,
            sa.select(schema.versions.c.id)
            .join(schema.bots, schema.bots.c.id == schema.versions.c.bot_id)
            .where(schema.bots.c.name == "gate"),
        )[0][0]
        g = schema.games

        def held_game() -> int | None:
            found = _rows(
                url,
                sa.select(g.c.id).where(
                    g.c.id > held_from,
                    g.c.state == "running",
                    sa.or_(g.c.version0 == gate_version, g.c.version1 == gate_version),
                ),
            )
            return found[0][0] if found else None

        # both slots may be playing games of the gate's begun before the hold (they are held
        # too, at its next move, until its 60 s clock runs out): on a loaded machine, where
        # games last longer, that is often so; the next game of the gate's comes after them
        held = server.wait_for(held_game, timeout=180, what="a game held in play")
        cli("league", "season", "close", "-C", str(d))
        s1 = _season_id(url, "1")
        closed_at = _rows(url, sa.select(schema.seasons.c.closed_at))[0][0]
        kept = server.get("/api/v1/leaderboard/stripes?season=1").json()
        assert kept["season"] == "1" and len(kept["items"]) == 3
        hold.unlink()  # the held game plays on and finishes after the close
        server.wait_for(
            lambda: _rows(url, sa.select(g.c.state).where(g.c.id == held))[0][0] == "finished",
            what="the held game to finish",
        )
        row = _rows(url, sa.select(g).where(g.c.id == held))[0]
        assert row.season_id == s1 and row.rated is False and row.finished_at > closed_at
        assert server.get(f"/api/v1/games/{held}").json()["rated"] is False
        # between seasons the ladder makes no rated game
        assert not _rows(
            url, sa.select(g.c.id).where(g.c.kind == "rated", g.c.created_at > closed_at)
        ) or all(
            r.season_id == s1 for r in _rows(url, sa.select(g).where(g.c.created_at > closed_at))
        )
        # the kept season: its ratings are exactly its rated games
        kept_rows = _rows(
            url, sa.select(schema.season_ratings).where(schema.season_ratings.c.season_id == s1)
        )
        assert _counts(kept_rows) == _replay_counts(url, s1)
        assert server.get("/api/v1/leaderboard/stripes?season=1").json() == kept

        # a visitor may not open a season; the admin opens season 2 through the API
        refused = server.client.post("/api/v1/seasons", json={"name": "2"})
        assert refused.status_code == 401
        opened = server.client.post("/api/v1/seasons", json={"name": "2"}, headers=auth)
        assert opened.status_code == 201, opened.text
        assert opened.json()["state"] == "open"
        again = server.client.post("/api/v1/seasons", json={"name": "3"}, headers=auth)
        assert again.status_code == 409
        server.wait_for(
            lambda: len(server.get("/api/v1/games?season=2&limit=200").json()["items"]) >= 6,
            what="six games of season 2",
        )
        s2 = _season_id(url, "2")
        # fresh ratings: each version's season-2 history starts from the prior, once (its
        # first rated game; sigma only shrinks after it), whatever the order games finished in
        seats = schema.seats
        starts: collections.Counter = collections.Counter()
        for r in _rows(
            url,
            sa.select(seats.c.version_id, seats.c.mu_before, seats.c.sigma_before)
            .join(g, g.c.id == seats.c.game_id)
            .where(g.c.season_id == s2, seats.c.mu_before.is_not(None)),
        ):
            starts[r.version_id] += (r.mu_before, r.sigma_before) == (MU0, SIGMA0)
        assert starts and all(n == 1 for n in starts.values()), starts
        # season 1 browsable and unchanged; the lists keep the seasons apart
        assert server.get("/api/v1/leaderboard/stripes?season=1").json() == kept
        one = {x["id"] for x in server.get("/api/v1/games?season=1&limit=200").json()["items"]}
        two = {x["id"] for x in server.get("/api/v1/games?season=2&limit=200").json()["items"]}
        assert held in one and not one & two
        assert server.get("/api/v1/games?season=9").status_code == 404
        page = server.client.get("/seasons/1")
        assert page.status_code == 200 and "closed" in page.text and "random-c" in page.text
        assert f'href="/games/{held}"' in page.text or len(one) > 50
        listing = server.client.get("/seasons").text
        assert "/seasons/1" in listing and "/seasons/2" in listing
        assert server.client.get("/admin/seasons").status_code in (302, 303, 401)
    # the live ratings are exactly season 2's rated games (after the server's stop)
    live = _rows(url, sa.select(schema.ratings))
    assert _counts(live) == _replay_counts(url, s2)
    assert cli("league", "season", "list", "-C", str(d)).splitlines()[0].startswith("2 ")
