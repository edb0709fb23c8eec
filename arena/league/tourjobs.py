"""Tournament games as jobs on the league's queue: what the runner and the workers share.

`arena tournament run --database URL` plays nothing itself (arena/tournaments/remote.py): it
stores each bot's archive in the database by content hash (`tournament_blobs`), defers one job
per game attempt (task `TASK`, on the league's queue, so the same `arena league worker`s play
league and tournament games), and waits for the attempt's outcome in `tournament_results`.
A worker's slot (arena/league/slot.py) fetches the archives, verifies their hash, builds and
caches them like league versions (arena/league/botcache.py), plays the game with the
tournament's time control and limits, and inserts the outcome once: the row is keyed by
(run, game, attempt) and inserted with `ON CONFLICT DO NOTHING`, so a job run twice (a stalled
job retried while its first worker was merely slow) gives one outcome, the first.

The runner's SQLite results file stays the tournament's record: this table is only the mailbox
between workers and runner. A runner stopped or killed while its games are in the queue finds
their outcomes here when it runs again, and defers again only attempts that have neither an
outcome nor a live job.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from typing import Any

import procrastinate
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Connection

from arena.league import queue
from arena.league.errors import PlatformFault
from arena.league.store import tournament_blobs, tournament_results
from arena.referee.outcome import now_iso

#: the task of a tournament game's attempt (same queue as league games)
TASK = "arena.tournament.play_game"


def _pack(obj: Any) -> bytes:
    return zlib.compress(json.dumps(obj, separators=(",", ":")).encode())


def _unpack(data: bytes) -> Any:
    return json.loads(zlib.decompress(data))


def put_blob(conn: Connection, data: bytes) -> str:
    """Store an archive (once); its sha256. A stored copy whose bytes differ (damaged in the
    database, so every worker refuses it) is overwritten: the next run repairs it."""
    sha = hashlib.sha256(data).hexdigest()
    t = tournament_blobs
    stmt = pg_insert(t).values(sha256=sha, data=data)
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=[t.c.sha256],
            set_={"data": stmt.excluded.data},
            where=t.c.data != stmt.excluded.data,
        )
    )
    return sha


def get_blob(conn: Connection, sha: str) -> bytes | None:
    """The archive's bytes, verified against its name; None if the database has no such blob."""
    data = conn.execute(
        sa.select(tournament_blobs.c.data).where(tournament_blobs.c.sha256 == sha)
    ).scalar()
    if data is None:
        return None
    data = bytes(data)
    if hashlib.sha256(data).hexdigest() != sha:
        raise PlatformFault(f"archive {sha[:12]}: the database's bytes do not match the hash")
    return data


def defer(
    app: procrastinate.App, conn: Connection, run: str, game_id: str, attempt: int, job: dict
) -> int:
    """Queue one attempt of a tournament game inside the caller's transaction; the job's id.
    `job` is {"bots": [archive sha256 x2], "entries": [bot entries x2], "match": payload}."""
    raw = conn.connection.driver_connection
    return app.configure_task(TASK, queue=queue.QUEUE, connection=raw).defer(
        run=run, game_id=game_id, attempt=attempt, job=job
    )


_LIVE = sa.text(
    "SELECT args->>'game_id', (args->>'attempt')::int FROM procrastinate_jobs "
    "WHERE task_name = :task AND status IN ('todo', 'doing') AND args->>'run' = :run"
)


def live_jobs(conn: Connection, run: str) -> set[tuple[str, int]]:
    """(game, attempt) of this run's jobs waiting or in play."""
    return {(g, int(a)) for g, a in conn.execute(_LIVE, {"task": TASK, "run": run})}


_ENDED = sa.text(
    "SELECT args->>'game_id', (args->>'attempt')::int, id, status::text FROM procrastinate_jobs "
    "WHERE task_name = :task AND status NOT IN ('todo', 'doing') AND args->>'run' = :run"
)


def ended_jobs(conn: Connection, run: str) -> dict[tuple[str, int], str]:
    """(game, attempt) of this run's jobs that ended and are still listed (a worker's error,
    one without this task, an operator's cancel): how, e.g. `job 12 failed`."""
    return {
        (g, int(a)): f"job {i} {status}"
        for g, a, i, status in conn.execute(_ENDED, {"task": TASK, "run": run})
    }


def record(
    conn: Connection, run: str, game_id: str, attempt: int, kind: str, payload: Any, worker: str
) -> bool:
    """Insert an attempt's outcome (`record`: the game record; `void`: the reason; `error`:
    {"message", "user"}) unless one is there already; True if this one was stored."""
    # RETURNING, not rowcount: SQLAlchemy reports -1 as the rowcount of this INSERT on psycopg
    res = conn.execute(
        pg_insert(tournament_results)
        .values(
            run=run,
            game_id=game_id,
            attempt=attempt,
            kind=kind,
            payload=_pack(payload),
            worker=worker,
            at=now_iso(),
        )
        .on_conflict_do_nothing()
        .returning(tournament_results.c.attempt)
    )
    return res.first() is not None


def outcomes(
    conn: Connection, run: str, wanted: list[tuple[str, int]]
) -> dict[tuple[str, int], dict]:
    """The outcomes stored for these (game, attempt)s, as referee worker replies
    (`{"type": "record", "record"}` or `{"type": "void", "reason"}`)."""
    if not wanted:
        return {}
    t = tournament_results
    rows = conn.execute(
        sa.select(t.c.game_id, t.c.attempt, t.c.kind, t.c.payload).where(
            t.c.run == run, sa.tuple_(t.c.game_id, t.c.attempt).in_(wanted)
        )
    )
    out: dict[tuple[str, int], dict] = {}
    for gid, attempt, kind, payload in rows:
        value = _unpack(bytes(payload))
        if kind == "record":
            out[(gid, attempt)] = {"type": "record", "game_id": gid, "record": value}
        elif kind == "error":  # the game cannot be played at all (the referee refused it)
            out[(gid, attempt)] = {"type": "error", "game_id": gid, **value}
        else:
            out[(gid, attempt)] = {"type": "void", "game_id": gid, "reason": str(value)}
    return out
