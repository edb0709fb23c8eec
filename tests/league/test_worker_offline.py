"""A worker that cannot reach the server to fetch bots: it stops taking jobs instead of voiding
them (no attempt burnt, no game failed), says why in its log, on `/workers` and in the API, and
takes jobs again once the server answers. Real processes on a real PostgreSQL."""

from __future__ import annotations

import socket
import uuid

import pytest

from .support import Server
from .test_workers import STALLED_AFTER, Worker, finished, pg_league, q, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

__all__ = ["pg_league"]  # the fixture, from test_workers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_worker_that_cannot_reach_the_server_stops_taking_jobs(pg_league, tmp_path):
    d, url, engine = pg_league
    port = free_port()
    name = f"wo-{uuid.uuid4().hex[:6]}"
    server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
    worker = Worker(
        url, name, tmp_path, tmp_path / "wo.log", extra=["--server", f"http://127.0.0.1:{port}"]
    )
    try:

        def me() -> dict:
            items = server.get("/api/v1/workers").json()["items"]
            return next((w for w in items if w["name"] == name), {})

        w = wait_until(lambda: me().get("state") == "offline" and me(), "the worker offline")
        assert f"127.0.0.1:{port}" in w["last_failure"], w
        log = (tmp_path / "wo.log").read_text()
        assert "taking no jobs until it answers" in log, log
        page = server.get("/workers").text
        assert "offline" in page and f"127.0.0.1:{port}" in page
        # nothing was burnt: no attempt voided, no game failed, none claimed by this worker
        assert q(engine, "SELECT count(*) FROM voids")[0][0] == 0
        assert q(engine, "SELECT count(*) FROM games WHERE state = 'failed'")[0][0] == 0
        assert q(engine, "SELECT count(*) FROM attempts WHERE worker = :w", w=name)[0][0] == 0
        # and it holds no job while it waits: the jobs wait for a worker that can play them (a
        # second slot may be finding out in its own fetch, and then gives its job back too)
        wait_until(
            lambda: (
                q(engine, "SELECT count(*) FROM procrastinate_jobs WHERE status = 'doing'")[0][0]
                == 0
            ),
            "the offline worker to hold no job",
        )

        # the server comes back where the worker looks for it: the worker takes jobs again
        server.stop()
        server = Server(
            d, "--no-local-games", "--stalled-after", STALLED_AFTER, "--listen", f"127.0.0.1:{port}"
        )
        wait_until(lambda: finished(engine) >= 4, "games played once the server answers")
        assert me()["state"] == "running"
        assert "taking jobs again" in (tmp_path / "wo.log").read_text()
        assert q(engine, "SELECT count(*) FROM voids")[0][0] == 0
        assert q(engine, "SELECT count(*) FROM games WHERE state = 'failed'")[0][0] == 0
    finally:
        server.stop()
        assert worker.stop() == 0
