"""Oversubscription in the league (issue 19): the server's own game slots and a worker's
`--concurrency` above the CPUs available are refused at start with one line naming the way out,
unless the operator insists: `oversubscribe = true` in league.toml (the server, and every worker
through the database), or `--force` on a worker."""

from __future__ import annotations

import sqlalchemy as sa

from arena.league.db import fleet
from arena.oversubscription import available_cpus

from .support import Server, arena, make_league, postgres_database
from .test_workers import Worker, wait_until

CPUS = available_cpus()


def _one_line_refusal(stderr: str, way_out: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"arena: error: concurrency {CPUS + 1} is more than the {CPUS}")
    assert way_out in lines[0], lines[0]


def test_server_slots_above_the_cpus_are_refused_unless_league_toml_insists(tmp_path) -> None:
    d = make_league(tmp_path / "lg", concurrency=str(CPUS + 1), games='["stripes"]')
    result = arena("league", "serve", str(d), "--listen", "127.0.0.1:0", check=False)
    assert result.returncode == 2
    _one_line_refusal(result.stderr, f"set oversubscribe = true in {d / 'league.toml'}")

    toml = d / "league.toml"
    toml.write_text(toml.read_text().replace("oversubscribe = false", "oversubscribe = true"))
    with Server(d) as server:  # starts, and serves
        assert server.get("/api/v1/workers").status_code == 200


def test_a_worker_above_the_cpus_is_refused_unless_forced_or_the_league_insists(
    tmp_path,
) -> None:
    with postgres_database() as url:
        make_league(tmp_path / "lg", url)  # the schema and the queue
        args = ["league", "worker", "--database", url, "--concurrency", str(CPUS + 1)]
        result = arena(*args, "--cache", str(tmp_path / "c"), check=False)
        assert result.returncode == 2
        _one_line_refusal(result.stderr, "pass --force")
        engine = sa.create_engine(url)
        try:
            with engine.connect() as conn:
                assert fleet.list_workers(conn, 30) == []  # refused before registering

            def registered(name: str) -> bool:
                with engine.connect() as conn:
                    return any(w["name"] == name for w in fleet.list_workers(conn, 30))

            forced = Worker(url, "forced", tmp_path, tmp_path / "f.log", CPUS + 1, force=True)
            try:
                wait_until(lambda: registered("forced"), "the forced worker to register")
            finally:  # (a SIGTERM this early may come before its handlers: no exit status)
                forced.stop()

            with engine.begin() as conn:  # what `serve` publishes for oversubscribe = true
                fleet.set_meta(conn, fleet.OVERSUBSCRIBE, "true")
            keyed = Worker(url, "keyed", tmp_path, tmp_path / "k.log", CPUS + 1)
            try:
                wait_until(lambda: registered("keyed"), "the worker to register")
            finally:
                keyed.stop()
        finally:
            engine.dispose()
