"""`arena league serve` as a real process on both backends: house bots join, rated games are
played and read back through the API, and a SIGKILL mid-game followed by a restart loses
nothing and records nothing twice."""

from __future__ import annotations

import collections
import signal

import pytest
import sqlalchemy as sa
from support import BACKENDS, BOTS, Server, arena, database_url, make_league

from arena.league import store

pytestmark = pytest.mark.slow


@pytest.fixture(params=BACKENDS)
def league_dir(request, tmp_path):
    with database_url(request.param, tmp_path) as url:
        d = make_league(
            tmp_path / "league",
            url,
            concurrency="2",
            time_control='"2+0.02"',
            games='["stripes", "papagra"]',
        )
        arena("league", "user", "add", "op", "--admin", "-C", str(d))
        for bot in ("random-py", "strong"):
            arena("league", "bot", "add", str(BOTS / bot), "--owner", "op", "-C", str(d))
        d.joinpath("url").write_text(url)
        yield d


def finished(server: Server) -> int:
    return server.get("/api/v1/queue").json()["counts"].get("finished", 0)


def check_consistency(url: str) -> collections.Counter:
    """Every finished game has one record and counts once in both players' ratings."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            g, r, s = store.games, store.ratings, store.records
            states = collections.Counter(
                dict(conn.execute(sa.select(g.c.state, sa.func.count()).group_by(g.c.state)).all())
            )
            assert "running" not in states
            n_records = conn.execute(sa.select(sa.func.count()).select_from(s)).scalar()
            assert n_records == states["finished"]
            expected: collections.Counter = collections.Counter()
            for row in conn.execute(
                sa.select(g.c.variant, g.c.version0, g.c.version1, g.c.winner).where(
                    g.c.state == "finished", g.c.rated.is_(True)
                )
            ):
                for seat, v in ((0, row.version0), (1, row.version1)):
                    out = "d" if row.winner is None else ("w" if row.winner == seat else "l")
                    expected[(v, row.variant, out)] += 1
            actual: collections.Counter = collections.Counter()
            for row in conn.execute(sa.select(r)):
                for out, n in (("w", row.wins), ("d", row.draws), ("l", row.losses)):
                    if n:
                        actual[(row.version_id, row.variant, out)] = n
                assert row.games == row.wins + row.draws + row.losses
            assert actual == expected
            return states
    finally:
        engine.dispose()


def test_rated_games_survive_sigkill_and_restart(league_dir):
    url = league_dir.joinpath("url").read_text()
    server = Server(league_dir)
    try:
        server.wait_for(lambda: finished(server) >= 4, what="4 finished games")
        board = server.get("/api/v1/leaderboard/stripes").json()["items"]
        assert {row["bot"] for row in board} == {"random-py", "strong"}
        server.wait_for(
            lambda: server.get("/api/v1/queue").json()["counts"].get("running"),
            what="a game in flight",
        )
    finally:
        assert server.kill() == -signal.SIGKILL
    before = check_consistency_allowing_running(url)
    server = Server(league_dir)
    try:
        assert "replaying" in server.log()
        server.wait_for(lambda: finished(server) >= before + 4, what="more games after restart")
        games = server.get("/api/v1/games", params={"limit": 200}).json()["items"]
        assert games and all(g["state"] == "finished" for g in games)
        voided = [server.get(f"/api/v1/games/{g['id']}").json() for g in games if g["attempt"] > 1]
        assert voided, "the games killed in flight were replayed"
        assert all(v["voids"][0]["kind"] == "server_stopped" for v in voided)
        record = server.get(f"/api/v1/games/{games[0]['id']}/record").json()
        assert record["format"] == "arena-record/1"
    finally:
        assert server.stop() == 0
    check_consistency(url)


def check_consistency_allowing_running(url: str) -> int:
    """After a SIGKILL: the killed games are still `running`; the finished ones are sound."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            g = store.games
            return conn.execute(
                sa.select(sa.func.count()).where(g.c.state == "finished")
            ).scalar_one()
    finally:
        engine.dispose()
