"""The mailbox between a local tournament's runner and the league's workers.

`arena tournament run --database URL` (arena/league/tourjobs.py) stores each bot's archive
here by content hash (`tournament_blobs`, `put_blob`), defers one job per game attempt on the
league's queue (arena/league/tourjobs.py), and reads the attempts' outcomes back (`outcomes`).
A worker's slot fetches the archives (`get_blob`, verified against their name) and inserts each
attempt's outcome once (`record`): the row is keyed by (run, game, attempt) and inserted with
`ON CONFLICT DO NOTHING`, so a job run twice (a stalled job retried while its first worker was
merely slow) gives one outcome, the first. The runner's SQLite results file stays the
tournament's record: this table is only the mailbox.

Every function takes a Connection inside the caller's transaction (arena/league/db/database.py);
PostgreSQL only, as the queue is.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Connection

from arena.league.db.schema import tournament_blobs, tournament_results
from arena.league.errors import PlatformFault
from arena.referee.outcome import now_iso


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
