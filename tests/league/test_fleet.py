"""The worker fleet's bookkeeping on a real PostgreSQL (workers need it): what the API's
`/api/v1/workers` shows of a worker started again under the same name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from arena.league import migrations
from arena.league.db import fleet, ledger, schema
from arena.league.db.database import Database

from .support import add_bots, postgres_database

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with postgres_database() as url:
        engine = sa.create_engine(url)
        migrations.upgrade(engine)
        engine.dispose()
        yield url


@pytest.fixture
def db(url: str) -> Iterator[Database]:
    from .support import empty_tables

    db = Database(url)
    empty_tables(db)
    yield db
    db.dispose()


def _game(conn: Any, versions: list[int]) -> int:
    return ledger.create_game(
        conn,
        ledger.NewGame(
            kind=schema.GameKind.RATED,
            variant="stripes",
            game_name="stripes",
            options={},
            seed=1,
            opening=[],
            time_control={"base": 5, "increment": 0.05},
            version0=versions[0],
            version1=versions[1],
        ),
    )


def _worker(db: Database, name: str) -> dict[str, Any]:
    with db.read() as conn:
        [w] = [w for w in fleet.list_workers(conn, fleet.STALLED_AFTER) if w["name"] == name]
    return w


def test_a_worker_started_again_under_its_name_does_not_show_its_predecessors_games(db):
    versions = add_bots(db, 2, ["stripes"])
    with db.write() as conn:
        fleet.register(conn, "w1", "host", 100, 2)
        gid = _game(conn, versions)
        claim = ledger.claim_game(conn, gid)
        assert claim is not None
        fleet.begin_attempt(conn, gid, claim.attempt, "w1")
    assert [p["game"] for p in _worker(db, "w1")["playing"]] == [gid]

    # the worker is SIGKILLed and started again under the same name: the game is still
    # `running` (its job has not been retried yet), but nobody plays it any more
    with db.write() as conn:
        fleet.register(conn, "w1", "host", 200, 2)
    w = _worker(db, "w1")
    assert w["pid"] == 200
    assert w["playing"] == [] and w["load"] == 0.0
    assert w["voided"] == 1  # the lost attempt counts against the worker, once
    assert "started again" in (w["last_failure"] or "")

    # the retry of the job voids the lost attempt (as slot.py does): not counted twice
    with db.write() as conn:
        ledger.void_attempt(conn, gid, claim.attempt, schema.VoidKind.WORKER_LOST, "lost", 3)
        fleet.end_attempt(conn, gid, claim.attempt, fleet.LOST, "lost")
    assert _worker(db, "w1")["voided"] == 1
