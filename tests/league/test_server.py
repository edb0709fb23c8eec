"""`arena league serve` as a real process on both backends: house bots join, real submissions
are validated (a C bot built in the sandbox joins; a crashing and a hostile bot are refused with
their reason; a malicious archive never unpacks), rated games are played and read back through
the API, and a SIGKILL mid-game followed by a restart loses nothing and records nothing
twice."""

from __future__ import annotations

import collections
import shutil
import signal
from pathlib import Path

import pytest
import sqlalchemy as sa

from arena.league.archives import pack_bot_dir
from arena.league.db import schema

from .support import BACKENDS, BOTS, ROOT, Server, cli, database_url, make_league

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
            memory_mb="256",
        )
        cli("league", "user", "add", "op", "--admin", "-C", str(d))
        token = cli("league", "user", "add", "carol", "-C", str(d)).strip()
        d.joinpath("token").write_text(token)
        for bot in ("random-py", "strong"):
            cli("league", "bot", "add", str(BOTS / bot), "--owner", "op", "-C", str(d))
        d.joinpath("url").write_text(url)
        yield d


def finished(server: Server) -> int:
    return server.get("/api/v1/queue").json()["counts"].get("finished", 0)


def check_consistency(url: str) -> collections.Counter:
    """Every finished game has one record and counts once in both players' ratings."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            g, r, s = schema.games, schema.ratings, schema.records
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


def misbehaving_bot(tmp: Path, name: str, mode: str) -> Path:
    """A bot directory running tests/referee/bots/testbot.py in one misbehaving MODE."""
    d = tmp / name
    d.mkdir()
    shutil.copy(ROOT / "tests" / "referee" / "bots" / "testbot.py", d / "testbot.py")
    (d / "bot.toml").write_text(f'name = "{name}"\ncommand = ["python3", "testbot.py", "{mode}"]\n')
    return d


def submit(server: Server, token: str, data: bytes):
    return server.client.post(
        "/api/v1/bots",
        content=data,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/gzip"},
    )


def submit_all(server: Server, token: str, tmp: Path) -> dict[str, str]:
    """Submit a C bot, a crashing bot, a memory hog and a malicious archive; their URLs."""
    urls = {}
    for name, path in (
        ("random-c", BOTS / "random-c"),
        ("crasher", misbehaving_bot(tmp, "crasher", "crash_at_start")),
        ("hog", misbehaving_bot(tmp, "hog", "hog")),
    ):
        resp = submit(server, token, pack_bot_dir(path))
        assert resp.status_code == 202, resp.text
        urls[name] = resp.json()["url"]
    evil = make_tar({"bot.toml": b'name = "evil"\ncommand = "sh x"\n', "/etc/evil": b"x"})
    resp = submit(server, token, evil)
    assert resp.status_code == 422 and resp.json()["error"]["field"] == "archive"
    assert "/etc/evil" in resp.json()["error"]["message"]
    return urls


def make_tar(members: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return buf.getvalue()


def validated(server: Server, url: str, token: str):
    """The version once validated, as its owner sees it (with the bot's stderr)."""
    v = server.get(url, headers={"Authorization": f"Bearer {token}"}).json()
    return v if v["state"] not in ("queued", "validating") else None


def test_submissions_rated_games_and_sigkill_restart(league_dir, tmp_path):
    url = league_dir.joinpath("url").read_text()
    token = league_dir.joinpath("token").read_text()
    server = Server(league_dir)
    try:
        urls = submit_all(server, token, tmp_path)
        server.wait_for(lambda: finished(server) >= 4, what="4 finished games")
        board = server.get("/api/v1/leaderboard/stripes").json()["items"]
        assert {"random-py", "strong"} <= {row["bot"] for row in board}
        results = {
            name: server.wait_for(lambda u=u: validated(server, u, token), what=f"{name} validated")
            for name, u in urls.items()
        }
        assert results["random-c"]["state"] == "active", results["random-c"]["validation"]
        for name in ("crasher", "hog"):
            report = results[name]["validation"]
            assert results[name]["state"] == "rejected" and report["passed"] is False
            assert report["problem"], report
        assert "cannot load my weights" in results["crasher"]["validation"]["stderr_tail"]
        assert "memory" in results["hog"]["validation"]["problem"]
        server.wait_for(
            lambda: any(
                r["bot"] == "random-c" and r["games"] > 0
                for r in server.get("/api/v1/leaderboard/stripes").json()["items"]
            ),
            what="random-c rated",
        )
        games = server.get("/api/v1/games", params={"bot": "random-c"}).json()["items"]
        seat = [s["bot"] for s in games[0]["seats"]].index("random-c")
        logs = server.get(
            f"/api/v1/games/{games[0]['id']}/logs", headers={"Authorization": f"Bearer {token}"}
        ).json()
        assert [s["seat"] for s in logs["seats"]] == [seat]
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
            g = schema.games
            return conn.execute(
                sa.select(sa.func.count()).where(g.c.state == "finished")
            ).scalar_one()
    finally:
        engine.dispose()
