"""Finals with the real server (SQLite and PostgreSQL) and on workers (PostgreSQL): a season's
top N play a knockout after the season closes; a finalist's submission is refused while it
runs; the server (or a worker) is SIGKILLed mid-final and the final resumes from its recorded
games to a champion, every game recorded once, unrated, with its replay and the bracket page."""

from __future__ import annotations

import signal
import uuid

import pytest
import sqlalchemy as sa

from arena.league.archives import pack_bot_dir
from arena.league.db import schema

from .support import BACKENDS, BOTS, Server, cli, database_url, make_league
from .test_seasons_server import GATE_BOT
from .test_workers import STALLED_AFTER, Worker, kill_mid_game, leftovers, live_jobs, wait_until

pytestmark = pytest.mark.slow

GAMES_FAST = '[{ name = "stripes", options = { max_turns = 10 } }]'


def _q(url: str, query) -> list:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(query).all()
    finally:
        engine.dispose()


def _league(tmp_path, url, hold, **extra) -> tuple:
    d = make_league(
        tmp_path / "league",
        url,
        concurrency="2",
        time_control='"60+0.05"',
        games=GAMES_FAST,
        memory_mb="256",
        **extra,
    )
    token = cli("league", "user", "add", "op", "--admin", "-C", str(d)).strip()
    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "bot.toml").write_text('name = "gate"\ncommand = ["python3", "bot.py"]\n')
    (gate / "bot.py").write_text(GATE_BOT.format(hold=str(hold)))
    for bot in (BOTS / "random-py", BOTS / "random-c", BOTS / "random-js", gate):
        cli("league", "bot", "add", str(bot), "--owner", "op", "-C", str(d))
    return d, token, gate


@pytest.fixture
def hold(tmp_path_factory):
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="arena-hold-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder / "hold"
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


def _ladder_idle(url: str) -> bool:
    """No ladder game queued or in play: after a season's close the games claimed before it
    have been played (the gate bot holds any game it starts once the hold file is there, a
    ladder game too, which would keep a slot from the final until the bot's clock ran out)."""
    g = schema.games
    return not _q(
        url,
        sa.select(g.c.id).where(g.c.kind == "rated", g.c.state.in_(["queued", "running"])),
    )


def _final_games(url: str, final_id: int) -> list:
    g = schema.games
    return _q(url, sa.select(g).where(g.c.schedule_key.like(f"final/{final_id}/%")))


def _gate_held(url: str, final_id: int, gate_version: int) -> int | None:
    g = schema.games
    rows = _q(
        url,
        sa.select(g.c.id).where(
            g.c.schedule_key.like(f"final/{final_id}/%"),
            g.c.state == "running",
            sa.or_(g.c.version0 == gate_version, g.c.version1 == gate_version),
        ),
    )
    return rows[0][0] if rows else None


def _check_final(url: str, final_id: int) -> list:
    """The final finished: a champion, every game finished and recorded once, unrated."""
    f = schema.finals
    row = _q(url, sa.select(f).where(f.c.id == final_id))[0]
    assert row.state == "finished" and row.champion is not None
    played = _final_games(url, final_id)
    assert played and {r.state for r in played} == {"finished"}
    assert all(r.kind == "final" and r.rated is False for r in played)
    ids = [r.id for r in played]
    records = _q(
        url,
        sa.select(sa.func.count())
        .select_from(schema.records)
        .where(schema.records.c.game_id.in_(ids)),
    )[0][0]
    assert records == len(ids)  # each game recorded exactly once
    keys = [r.schedule_key for r in played]
    assert len(keys) == len(set(keys))
    # 4 finalists, one pair a match: 3 matches, 6 games, plus tie-break pairs of level ones
    assert len(ids) >= 6 and len(ids) % 2 == 0
    return played


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_final_with_the_real_server_resumes_after_a_kill(backend, tmp_path, hold):
    with database_url(backend, tmp_path) as url:
        d, token, _gate = _league(tmp_path, url, hold)
        auth = {"Authorization": f"Bearer {token}"}
        server = Server(d)
        try:
            server.wait_for(
                lambda: len(server.get("/api/v1/games?season=1&limit=100").json()["items"]) >= 8,
                what="ladder games of season 1",
            )
            cli("league", "season", "close", "-C", str(d))
            server.wait_for(lambda: _ladder_idle(url), what="the ladder's last games")
            hold.write_text("")  # the gate bot's final games wait while this file is there
            out = cli(
                "league",
                "final",
                "start",
                "--season",
                "1",
                "--top",
                "4",
                "--pairs",
                "1",
                "--format",
                "knockout",
                "-C",
                str(d),
            )
            final_id = int(out.split()[1].rstrip(":"))
            gate_version = _q(
                url,
                sa.select(schema.versions.c.id)
                .join(schema.bots, schema.bots.c.id == schema.versions.c.bot_id)
                .where(schema.bots.c.name == "gate"),
            )[0][0]
            held = server.wait_for(
                lambda: _gate_held(url, final_id, gate_version), what="a final game in play"
            )
            # a finalist's new version is refused while the final runs
            refused = server.client.post(
                "/api/v1/bots",
                content=pack_bot_dir(BOTS / "random-c"),
                headers={**auth, "Content-Type": "application/gzip"},
            )
            assert refused.status_code == 409, refused.text
            assert "frozen" in refused.json()["error"]["message"]
            status = server.get(f"/api/v1/finals/{final_id}").json()
            assert status["state"] == "running" and status["champion"] is None
            server.kill()  # SIGKILL mid-final, a game in play
        finally:
            server.stop()
        hold.unlink()
        server = Server(d)
        try:
            server.wait_for(
                lambda: server.get(f"/api/v1/finals/{final_id}").json()["state"] == "finished",
                what="the final to finish after the restart",
                timeout=180,
            )
            detail = server.get(f"/api/v1/finals/{final_id}").json()
            assert detail["champion"] is not None
            assert [len(r) for r in detail["rounds"]] == [2, 1]
            assert detail["rounds"][1][0]["winner"] == detail["champion"]
            played = _check_final(url, final_id)
            # the game held at the kill was voided (the server stopped) and played again
            again = [r for r in played if r.id == held]
            assert again and again[0].attempt >= 2
            page = server.client.get(f"/finals/{final_id}")
            assert page.status_code == 200 and 'id="bracket"' in page.text
            assert detail["champion"]["bot"] in page.text
            for r in played[:2]:
                game_page = server.client.get(f"/games/{r.id}")
                assert game_page.status_code == 200
                assert server.get(f"/api/v1/games/{r.id}/record").status_code == 200
            status_text = cli("league", "final", "status", str(final_id), "-C", str(d))
            assert f"champion: {detail['champion']['bot']}" in status_text
            # the final over, the finalist's submissions thaw
            thawed = server.client.post(
                "/api/v1/bots",
                content=pack_bot_dir(BOTS / "random-c"),
                headers={**auth, "Content-Type": "application/gzip"},
            )
            assert thawed.status_code == 202, thawed.text
        finally:
            server.stop()


@pytest.mark.postgres
def test_a_final_on_workers_survives_a_worker_and_a_server_kill(tmp_path, hold):
    from .support import postgres_database

    with postgres_database() as url:
        d, _token, _gate = _league(tmp_path, url, hold)
        tag = uuid.uuid4().hex[:6]
        names = [f"fa-{tag}", f"fb-{tag}"]
        engine = sa.create_engine(url)
        server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
        a = Worker(url, names[0], tmp_path, tmp_path / "fa.log")
        b = Worker(url, names[1], tmp_path, tmp_path / "fb.log")
        try:
            wait_until(
                lambda: len(server.get("/api/v1/games?season=1&limit=100").json()["items"]) >= 8,
                "ladder games on the workers",
            )
            cli("league", "season", "close", "-C", str(d))
            out = cli(
                "league",
                "final",
                "start",
                "--season",
                "1",
                "--top",
                "4",
                "--pairs",
                "2",
                "--variant",
                "stripes",
                "-C",
                str(d),
            )
            final_id = int(out.split()[1].rstrip(":"))

            def final_in_play() -> bool:
                g = schema.games
                return bool(
                    _q(
                        url,
                        sa.select(g.c.id).where(
                            g.c.schedule_key.like(f"final/{final_id}/%"), g.c.state == "running"
                        ),
                    )
                )

            wait_until(final_in_play, "the final on the workers")
            # SIGKILL a worker mid-game; the other takes its job over once it stalls
            _lost, a = kill_mid_game(
                engine, a, lambda: Worker(url, names[0], tmp_path, tmp_path / "fa.log")
            )
            server.kill()  # and the server: the workers play on; it comes back
            server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
            wait_until(
                lambda: server.get(f"/api/v1/finals/{final_id}").json()["state"] == "finished",
                "the final to finish",
                timeout=240,
            )
            played = _check_final(url, final_id)
            assert len(played) >= 12  # 3 matches x 2 pairs x 2 seats, at the least
            workers = {
                r.worker
                for r in _q(
                    url,
                    sa.select(schema.attempts.c.worker).where(
                        schema.attempts.c.game_id.in_([r.id for r in played])
                    ),
                )
            }
            assert workers <= set(names) and workers  # played by the workers, not the server
        finally:
            server.stop()
        wait_until(lambda: live_jobs(engine) == 0, "the queue to drain")
        for w in (a, b):
            assert w.stop(signal.SIGTERM) == 0
        assert not leftovers(tmp_path, names), leftovers(tmp_path, names)
        engine.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_finalist_disabled_by_an_admin_forfeits_the_rest_of_the_final(backend, tmp_path, hold):
    """An admin disables a finalist while one of its final games is in play: that game is
    failed at once (its result, arriving later, is dropped as stale), the finalist loses its
    match by forfeit and plays no other game of the final, which finishes with a champion; the
    bracket page and the API say why. Enabling the bot again brings nothing back."""
    with database_url(backend, tmp_path) as url:
        d, token, _gate = _league(tmp_path, url, hold)
        auth = {"Authorization": f"Bearer {token}"}
        with Server(d) as server:
            server.wait_for(
                lambda: len(server.get("/api/v1/games?season=1&limit=100").json()["items"]) >= 8,
                what="ladder games of season 1",
            )
            cli("league", "season", "close", "-C", str(d))
            server.wait_for(lambda: _ladder_idle(url), what="the ladder's last games")
            hold.write_text("")  # the gate bot's final games wait while this file is there
            out = cli(
                "league", "final", "start", "--season", "1", "--top", "4", "--pairs", "1",
                "--format", "knockout", "-C", str(d),
            )  # fmt: skip
            final_id = int(out.split()[1].rstrip(":"))
            gate_version = _q(
                url,
                sa.select(schema.versions.c.id)
                .join(schema.bots, schema.bots.c.id == schema.versions.c.bot_id)
                .where(schema.bots.c.name == "gate"),
            )[0][0]
            held = server.wait_for(
                lambda: _gate_held(url, final_id, gate_version), what="a final game in play"
            )
            resp = server.client.post("/api/v1/bots/gate/disable", headers=auth)
            assert resp.status_code == 200, resp.text
            g = schema.games
            [(state, detail)] = _q(url, sa.select(g.c.state, g.c.detail).where(g.c.id == held))
            assert state == "failed" and detail == "forfeited: gate was disabled by an admin"
            made = {r.id for r in _final_games(url, final_id)}
            hold.unlink()  # the held game ends now: its result must be refused
            server.wait_for(
                lambda: server.get(f"/api/v1/finals/{final_id}").json()["state"] == "finished",
                what="the final to finish",
                timeout=180,
            )
            detail = server.get(f"/api/v1/finals/{final_id}").json()
            assert detail["champion"] is not None and detail["champion"]["bot"] != "gate"
            assert [(f["bot"], f["why"]) for f in detail["forfeits"]] == [
                ("gate", "gate was disabled by an admin")
            ]
            gate_match = [
                m for m in detail["rounds"][0] if any(s and s["bot"] == "gate" for s in m["sides"])
            ]
            assert len(gate_match) == 1 and gate_match[0]["decided_by"] == "forfeit"
            assert gate_match[0]["winner"]["bot"] != "gate"
            page = server.client.get(f"/finals/{final_id}").text
            assert 'id="forfeits"' in page and "decided by forfeit" in page
            # the held game stayed failed (the late result dropped); every game of the gate not
            # finished before was failed as forfeited, and none was made after the disabling
            rows = _final_games(url, final_id)
            assert [r.state for r in rows if r.id == held] == ["failed"]
            gate_rows = [r for r in rows if gate_version in (r.version0, r.version1)]
            assert {r.id for r in gate_rows} <= made
            assert all(
                r.state == "finished" or r.detail.startswith("forfeited: ") for r in gate_rows
            )
            assert {r.state for r in rows if gate_version not in (r.version0, r.version1)} == {
                "finished"
            }
            # enabling the bot again changes nothing in the finished final
            resp = server.client.post("/api/v1/bots/gate/disable?enable=true", headers=auth)
            assert resp.status_code == 200, resp.text
            assert server.get(f"/api/v1/finals/{final_id}").json() == detail
