"""The worker fleet as the database sees it: who works, on what, and how their attempts ended.

A worker (`arena league worker`, arena/league/worker.py) registers under a name, beats its heart
every few seconds with the database's own clock (`now()`), so whether a worker is alive never
depends on machines agreeing on the time, and logs every attempt it claims in `attempts`. So
the API can show each worker's load (attempts in flight against its concurrency), its games
played, voided and stale, and its last failure; and the queue executor can size the queue to the
capacity of the workers alive.

A worker's failures are counted against the worker, never against a bot: an attempt a worker
lost (it was killed, its machine vanished) is `lost` here and a `worker_lost` void on the game.
Every function takes a Connection inside the caller's transaction, as in store.py.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.privacy import neutral_paths
from arena.league.store import attempts, games, meta, workers
from arena.referee.record import now_iso

#: meta keys
SERVER_URL = "server_url"
WORKER_SECRET = "worker_secret"

#: how an attempt ended, as `attempts.outcome`
RECORDED, STALE, VOIDED, LOST = "recorded", "stale", "voided", "lost"


def get_meta(conn: Connection, key: str) -> str | None:
    return conn.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar()


def set_meta(conn: Connection, key: str, value: str) -> None:
    if conn.execute(meta.update().where(meta.c.key == key).values(value=value)).rowcount == 0:
        conn.execute(meta.insert().values(key=key, value=value))


def worker_secret(conn: Connection) -> str:
    """The secret a worker shows the server to download archives, made on first use. Whoever
    can read the league's database can read it: the database is the workers' trust boundary."""
    secret = get_meta(conn, WORKER_SECRET)
    if secret is None:
        secret = secrets.token_urlsafe(32)
        set_meta(conn, WORKER_SECRET, secret)
    return secret


def register(conn: Connection, name: str, host: str, pid: int, concurrency: int) -> None:
    """A worker starts (or starts again under the same name: its counts carry on)."""
    values = {
        "host": host[:255],
        "pid": pid,
        "concurrency": concurrency,
        "state": "running",
        "started_at": sa.func.now(),
        "heartbeat_at": sa.func.now(),
    }
    done = conn.execute(workers.update().where(workers.c.name == name).values(**values)).rowcount
    if not done:
        conn.execute(workers.insert().values(name=name, played=0, voided=0, stale=0, **values))


def heartbeat(conn: Connection, name: str) -> None:
    conn.execute(
        workers.update()
        .where(workers.c.name == name)
        .values(heartbeat_at=sa.func.now(), state="running")
    )


def stopped(conn: Connection, name: str) -> None:
    conn.execute(workers.update().where(workers.c.name == name).values(state="stopped"))


def begin_attempt(conn: Connection, game_id: int, attempt: int, worker: str) -> None:
    conn.execute(
        attempts.insert().values(
            game_id=game_id, attempt=attempt, worker=worker, started_at=now_iso()
        )
    )


def end_attempt(
    conn: Connection, game_id: int, attempt: int, outcome: str, failure: str | None = None
) -> None:
    """Close an attempt's log row and count it against the worker that claimed it. A result
    arriving for an attempt already declared lost turns that row to `stale` (late, refused)."""
    where = [attempts.c.game_id == game_id, attempts.c.attempt == attempt]
    if outcome != STALE:
        where.append(attempts.c.ended_at.is_(None))  # else closed already
    worker = conn.execute(
        attempts.update()
        .where(*where)
        .values(ended_at=sa.func.coalesce(attempts.c.ended_at, now_iso()), outcome=outcome)
        .returning(attempts.c.worker)
    ).scalar()
    if worker is None:
        return  # closed already, or not claimed by a queue worker (the in-process executor)
    column = {RECORDED: "played", STALE: "stale"}.get(outcome, "voided")
    values: dict[str, Any] = {column: getattr(workers.c, column) + 1}
    if failure is not None:
        values.update(last_failure=failure[:2000], last_failure_at=now_iso())
    conn.execute(workers.update().where(workers.c.name == worker).values(**values))


def attempt_worker(conn: Connection, game_id: int, attempt: int) -> str | None:
    return conn.execute(
        sa.select(attempts.c.worker).where(
            attempts.c.game_id == game_id, attempts.c.attempt == attempt
        )
    ).scalar()


def _age(now: datetime, then: datetime) -> float:
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return max(0.0, (now - then).total_seconds())


def live_capacity(conn: Connection, stale_after: float) -> int:
    """Game slots of the workers whose heartbeat is younger than `stale_after` seconds."""
    now = conn.execute(sa.select(sa.func.now())).scalar_one()
    rows = conn.execute(
        sa.select(workers.c.concurrency, workers.c.heartbeat_at).where(workers.c.state == "running")
    )
    return sum(c for c, hb in rows if _age(now, hb) < stale_after)


def list_workers(conn: Connection, stale_after: float) -> list[dict[str, Any]]:
    """Every worker with its state (running, lost: no heartbeat for `stale_after` s, stopped),
    the games it is playing, its load and its counts; running workers first."""
    now = conn.execute(sa.select(sa.func.now())).scalar_one()
    playing: dict[str, list[dict[str, Any]]] = {}
    for r in conn.execute(
        sa.select(attempts.c.worker, attempts.c.game_id, attempts.c.attempt, games.c.variant)
        .join(games, games.c.id == attempts.c.game_id)
        .where(
            attempts.c.ended_at.is_(None),
            games.c.state == "running",
            games.c.attempt == attempts.c.attempt,
        )
        .order_by(attempts.c.game_id)
    ):
        playing.setdefault(r.worker, []).append(
            {"game": r.game_id, "attempt": r.attempt, "variant": r.variant}
        )
    out = []
    for r in conn.execute(sa.select(workers).order_by(workers.c.name)):
        age = _age(now, r.heartbeat_at)
        state = r.state
        if state == "running" and age >= stale_after:
            state = "lost"
        mine = playing.get(r.name, []) if state == "running" else []
        out.append(
            {
                "name": r.name,
                "host": r.host,
                "pid": r.pid,
                "state": state,
                "concurrency": r.concurrency,
                "playing": mine,
                "load": round(len(mine) / r.concurrency, 3) if r.concurrency else 0.0,
                "heartbeat_age": round(age, 1),
                "started_at": r.started_at.isoformat() if r.started_at else None,
                "played": r.played,
                "voided": r.voided,
                "stale": r.stale,
                "last_failure": neutral_paths(r.last_failure) if r.last_failure else None,
                "last_failure_at": r.last_failure_at,
            }
        )
    order = {"running": 0, "lost": 1, "stopped": 2}
    out.sort(key=lambda w: (order.get(w["state"], 3), w["name"]))
    return out
