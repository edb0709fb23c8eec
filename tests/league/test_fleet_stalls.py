"""Host stalls in the fleet (issue 19): a game the referee voids as a `HostStall` is a
`host_stall` void, counted against the worker that played it (or the server's own slots), in
the same transaction; `/api/v1/workers` and `/workers` show each worker's stall rate over its
last games, and a worker that keeps stalling is degraded and plays fewer games at once.

The real-worker tests force the referee's verdict with tests/league/host_stall/sitecustomize.py
(the games are real, the stall is not: one cannot be made on demand on a loaded machine).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.league.db import fleet, schema
from arena.league.executors.inprocess import _outcome
from arena.league.voids import void_of
from arena.league.worker import Deferred, Gate

from .support import BOTS, Server, arena, database_fixtures, make_league, postgres_database
from .test_workers import STALLED_AFTER, Worker, q, two_bots, wait_until

url, db = database_fixtures()
STUB = str(Path(__file__).resolve().parent / "host_stall")
STALL = "HostStall: host_stall: the host kept the bot from a CPU for 0.500 s"


def test_a_host_stall_is_its_own_void_kind_wherever_a_void_is_read() -> None:
    reply = {"type": "void", "fault": "host_stall", "reason": STALL}
    assert void_of(reply) == (schema.VoidKind.HOST_STALL, STALL)
    assert _outcome(None, reply).void is schema.VoidKind.HOST_STALL  # type: ignore[arg-type]
    for fault, kind in [
        ("sandbox", schema.VoidKind.SANDBOX_FAULT),
        ("referee", schema.VoidKind.REFEREE_FAULT),
        ("internal", schema.VoidKind.INTERNAL_ERROR),
    ]:
        assert void_of({"type": "void", "fault": fault, "reason": "x"})[0] is kind


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ends=st.lists(st.booleans(), max_size=fleet.RECENT + 30))
def test_the_stall_rate_is_over_exactly_the_last_games(db, ends: list[bool]) -> None:
    """Whatever the sequence of game ends, `recent` is the last RECENT of them, `stalls` all
    the stalls, and `degraded` the documented rule, on SQLite and PostgreSQL alike."""
    with db.write() as conn:
        conn.execute(fleet.workers.delete())
        fleet.register(conn, "w", "host", 1, 4)
    for stall in ends:
        with db.write() as conn:
            fleet.game_ended(conn, "w", "voided" if stall else "played", stall)
    with db.read() as conn:
        (w,) = fleet.list_workers(conn, 3600)
    with db.write() as conn:
        beat_degraded = fleet.heartbeat(conn, "w")
    last = ends[-fleet.RECENT :]
    assert (w["recent_games"], w["recent_stalls"]) == (len(last), sum(last))
    assert w["stalls"] == sum(ends) and w["voided"] == sum(ends)
    assert w["played"] == len(ends) - sum(ends)
    rate = sum(last) / len(last) if last else 0.0
    assert w["stall_rate"] == pytest.approx(rate, abs=1e-4)
    degraded = len(last) >= fleet.MIN_GAMES and rate >= fleet.DEGRADED_RATE
    assert w["degraded"] is degraded is beat_degraded
    assert w["slots"] == (2 if degraded else 4)


def test_a_degraded_worker_plays_half_its_slots_and_defers_the_rest() -> None:
    async def main() -> None:
        gate = Gate(4)
        with gate.game("a"), gate.game("b"):
            gate.degraded = True  # its heartbeat said so, while two games were in play
            with pytest.raises(Deferred, match="plays 2 game"), gate.game("c"):
                pass
        with gate.game("a"), gate.game("b"), pytest.raises(Deferred), gate.game("c"):
            pass
        gate.degraded = False
        with gate.game("a"), gate.game("b"), gate.game("c"), gate.game("d"):
            assert gate.playing == 4
        assert gate.playing == 0
        assert Gate(1, degraded=True).limit == 1  # one slot is kept

    asyncio.run(main())


def test_a_worker_named_like_the_servers_slots_is_refused(tmp_path) -> None:
    r = arena(
        "league",
        "worker",
        "--database",
        "postgresql+psycopg://x@127.0.0.1:1/x",
        "--name",
        fleet.SERVER_SLOTS,
        check=False,
    )
    assert r.returncode == 2 and "names the server's own game slots" in r.stderr, r.stderr


def _stub_env() -> dict[str, str]:
    return {"PYTHONPATH": STUB, "ARENA_TEST_HOST_STALL": "1"}


@pytest.mark.slow
@pytest.mark.postgres
def test_workers_count_their_host_stalls_and_a_stalling_worker_is_degraded(tmp_path) -> None:
    """A worker whose every game is voided as a host stall shows a stall rate of 100% and is
    degraded (at most half its slots) once MIN_GAMES are counted; the other worker, whose games
    are recorded, shows 0%; the voids are `host_stall`, the games are replayed and recorded."""
    with postgres_database() as dburl:
        d = make_league(
            tmp_path / "league",
            dburl,
            time_control='"2+0.02"',
            games='[{ name = "stripes", options = { max_turns = 6 } }]',
            concurrency="2",
            opening_turns="1",
            max_attempts="100",
        )
        arena("league", "user", "add", "op", "--admin", "-C", str(d))
        for bot in two_bots(tmp_path):
            arena("league", "bot", "add", str(bot), "--owner", "op", "-C", str(d))
        engine = sa.create_engine(dburl)
        server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
        stally = Worker(dburl, "stally", tmp_path, tmp_path / "s.log", env=_stub_env())
        healthy = None
        try:

            def row(name: str) -> dict | None:
                items = server.get("/api/v1/workers").json()["items"]  # checked vs OpenAPI
                return next((w for w in items if w["name"] == name), None)

            w = wait_until(
                lambda: (r := row("stally")) and r["degraded"] and r,
                "the stalling worker to be degraded",
                timeout=180,
            )
            assert w["recent_games"] >= fleet.MIN_GAMES and w["stall_rate"] == 1.0
            assert w["stalls"] >= fleet.MIN_GAMES and w["played"] == 0
            assert (w["concurrency"], w["slots"]) == (2, 1)
            wait_until(
                lambda: "playing at most 1 game(s) at once" in stally.log.read_text(),
                "the worker to learn it is degraded",
            )
            healthy = Worker(dburl, "healthy", tmp_path, tmp_path / "h.log", concurrency=1)
            wait_until(
                lambda: (r := row("healthy")) and r["played"] >= 5,
                "the healthy worker to record games",
                timeout=180,
            )
            h = row("healthy")
            # its games are recorded; a real host stall on this loaded machine would be
            # counted too, and only its own: its count is the stalls voided on its attempts
            own = q(
                engine,
                "SELECT count(*) FROM voids v JOIN attempts a ON a.game_id = v.game_id "
                "AND a.attempt = v.attempt WHERE a.worker = 'healthy' AND v.kind = 'host_stall'",
            )[0][0]
            assert h is not None and h["stalls"] == own and not h["degraded"]
            assert h["recent_stalls"] <= own and h["played"] >= 5
            page = server.get("/workers").text
            assert "stally</td>" in page and "degraded" in page and "(100.0%)" in page
            kinds = {k for (k,) in q(engine, "SELECT DISTINCT kind FROM voids")}
            assert kinds == {"host_stall"}, kinds  # the stub's, and any real one
            reasons = q(engine, "SELECT reason FROM voids LIMIT 1")
            assert reasons[0][0].startswith("HostStall: host_stall:")
            stalls_in_db = q(
                engine,
                "SELECT count(*) FROM attempts WHERE worker = 'stally' AND outcome = 'voided'",
            )[0][0]
            assert stalls_in_db >= w["stalls"]
        finally:
            server.stop()
            assert stally.stop() == 0
            if healthy is not None:
                assert healthy.stop() == 0
            engine.dispose()


@pytest.mark.slow
def test_the_servers_own_slots_count_their_host_stalls(tmp_path) -> None:
    d = make_league(
        tmp_path / "league",
        time_control='"2+0.02"',
        games='[{ name = "stripes", options = { max_turns = 6 } }]',
        concurrency="1",
        opening_turns="1",
        max_attempts="100",
    )
    arena("league", "user", "add", "op", "--admin", "-C", str(d))
    for bot in ("random-py", "random-c"):
        arena("league", "bot", "add", str(BOTS / bot), "--owner", "op", "-C", str(d))
    with Server(d, env=_stub_env()) as server:
        w = server.wait_for(
            lambda: next(
                (
                    w
                    for w in server.get("/api/v1/workers").json()["items"]
                    if w["name"] == fleet.SERVER_SLOTS and w["stalls"] >= 3
                ),
                None,
            ),
            what="the server's slots to count host stalls",
        )
        assert w["state"] == "running" and w["stall_rate"] == 1.0 and w["played"] == 0
        assert w["voided"] == w["stalls"] and "(server)</td>" in server.get("/workers").text
    assert server.proc.returncode == 0
    engine = sa.create_engine(f"sqlite:///{d / 'league.sqlite'}")
    try:
        with engine.connect() as conn:
            state = conn.execute(
                sa.text("SELECT state FROM workers WHERE name = :n"), {"n": fleet.SERVER_SLOTS}
            ).scalar()
            kinds = set(conn.execute(sa.text("SELECT kind FROM voids")).scalars())
    finally:
        engine.dispose()
    # the stalls, and the games in play when it stopped (which count against nobody)
    assert state == "stopped" and kinds <= {"host_stall", "server_stopped"}
    assert "host_stall" in kinds
