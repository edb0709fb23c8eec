"""The worker fleet as the database sees it: who works, on what, and how their attempts ended.

A worker (`arena league worker`, arena/league/worker.py) registers under a name, beats its heart
every few seconds with the database's own clock (`now()`), so whether a worker is alive never
depends on machines agreeing on the time, and logs every attempt it claims in `attempts`. So
the API can show each worker's load (attempts in flight against its concurrency), its games
played, voided and stale, and its last failure; and the queue executor can size the queue to the
capacity of the workers alive.

A worker's failures are counted against the worker, never against a bot: an attempt a worker
lost (it was killed, its machine vanished) is `lost` here and a `worker_lost` void on the game.
Every function takes a Connection inside the caller's transaction (arena/league/db/database.py).

Host stalls (issue 19). A game the referee voids because the host, not a bot, made a reply late
(`HostStall`: the bot was runnable but got no CPU, or the referee itself was kept waiting) says
something about the machine that played it: a worker beside a noisy neighbour, on a throttled
VM, or running more games than it has cores. Each game a worker ends is counted in the same
transaction as its outcome: in all (`stalls`), and in `recent`, its last RECENT games as one
character each (`s` a host stall, `.` any other end), so the stall rate shown is exactly "host
stalls among its last RECENT games" and costs one row update per game. A worker whose stall
rate over at least MIN_GAMES of those games is DEGRADED_RATE or more is **degraded**: the
window keeps the mark while the stalls go on and drops it once RECENT healthy games have pushed
them out. A degraded worker plays at most `degraded_slots(concurrency)` games at once (a job its
other slots take goes back to the queue for a healthier worker; arena/league/worker.py), and the
queue executor counts only those slots in the fleet's capacity. The server's own game slots
(when it plays its games itself) are counted the same way, as the worker `SERVER_SLOTS`, which
it registers and heartbeats while it serves; they are shown degraded, and keep playing.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.db.schema import attempts, games, meta, workers
from arena.league.privacy import neutral_paths
from arena.referee.outcome import now_iso

#: meta keys
SERVER_URL = "server_url"
WORKER_SECRET = "worker_secret"
#: the key login cookies are signed with (arena/league/web/auth.py)
SESSION_SECRET = "session_secret"
#: "true" when league.toml says `oversubscribe = true`: its workers may too
OVERSUBSCRIBE = "oversubscribe"

#: how an attempt ended, as `attempts.outcome`
RECORDED, STALE, VOIDED, LOST = "recorded", "stale", "voided", "lost"

#: the games a worker's stall rate is measured over (its last ones)
RECENT = 50
#: a worker is degraded when at least MIN_GAMES of its last RECENT games were played and
#: DEGRADED_RATE or more of them were host stalls
MIN_GAMES, DEGRADED_RATE = 20, 0.10
#: `recent`'s marks
STALL_MARK, GAME_MARK = "s", "."
#: the worker row of the server's own game slots (a name `arena league worker` refuses)
SERVER_SLOTS = "(server)"
#: seconds without a heartbeat after which the API calls a worker lost, unless the server
#: published its own (meta key `stalled_after`)
STALLED_AFTER = 30.0


def stall_rate(recent: str) -> tuple[int, int, float]:
    """(host stalls, games, their ratio) over a worker's recent games."""
    games = len(recent)
    stalls = recent.count(STALL_MARK)
    return stalls, games, (stalls / games if games else 0.0)


def is_degraded(recent: str) -> bool:
    _, n, rate = stall_rate(recent)
    return n >= MIN_GAMES and rate >= DEGRADED_RATE


def degraded_slots(concurrency: int) -> int:
    """The games a degraded worker plays at once: half its slots, at least one."""
    return max(1, concurrency // 2)


def game_ended(
    conn: Connection, worker: str, column: str | None = None, stall: bool = False
) -> None:
    """Count a game a worker ended in its recent games, and in `column` (played, voided or
    stale) for a league attempt (a tournament's game has none); one row update, in the
    caller's transaction (the outcome's)."""
    w = workers.c
    keep = sa.case(
        (sa.func.length(w.recent) >= RECENT, sa.func.substr(w.recent, 2)), else_=w.recent
    )
    values: dict[str, Any] = {"recent": keep + (STALL_MARK if stall else GAME_MARK)}
    if column is not None:
        values[column] = getattr(w, column) + 1
    if stall:
        values["stalls"] = w.stalls + 1
    conn.execute(workers.update().where(w.name == worker).values(**values))


def get_meta(conn: Connection, key: str) -> str | None:
    return conn.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar()


def set_meta(conn: Connection, key: str, value: str) -> None:
    if conn.execute(meta.update().where(meta.c.key == key).values(value=value)).rowcount == 0:
        conn.execute(meta.insert().values(key=key, value=value))


def worker_secret(conn: Connection) -> str:
    """The secret a worker shows the server to download archives, made on first use. Whoever
    can read the league's database can read it: the database is the workers' trust boundary."""
    return secret(conn, WORKER_SECRET)


def secret(conn: Connection, key: str) -> str:
    """The random secret kept under `key`, made on first use (write transaction)."""
    value = get_meta(conn, key)
    if value is None:
        value = secrets.token_urlsafe(32)
        set_meta(conn, key, value)
    return value


def register(conn: Connection, name: str, host: str, pid: int, concurrency: int) -> None:
    """A worker starts (or starts again under the same name: its counts carry on).

    A worker of that name that is starting now is a new process: attempts its predecessor
    left open died with it (nobody plays them any more, though their games stay `running`
    until their jobs are retried), so they are closed as `lost` and counted against the
    worker here, once: the retry's `end_attempt` finds them closed."""
    lost = conn.execute(
        attempts.update()
        .where(attempts.c.worker == name, attempts.c.ended_at.is_(None))
        .values(ended_at=now_iso(), outcome=LOST)
    ).rowcount
    values = {
        "host": host[:255],
        "pid": pid,
        "concurrency": concurrency,
        "state": "running",
        "started_at": sa.func.now(),
        "heartbeat_at": sa.func.now(),
    }
    if lost:
        values.update(
            voided=workers.c.voided + lost,
            last_failure=f"{lost} attempt(s) lost: the worker was started again mid-game",
            last_failure_at=now_iso(),
        )
    done = conn.execute(workers.update().where(workers.c.name == name).values(**values)).rowcount
    if not done:
        values.pop("voided", None)
        conn.execute(workers.insert().values(name=name, played=0, voided=0, stale=0, **values))


#: a worker's states as it reports them (`lost` is the API's word for a silent one)
RUNNING, OFFLINE, STOPPED = "running", "offline", "stopped"


def heartbeat(conn: Connection, name: str, state: str = RUNNING) -> bool:
    """The worker is alive, and `running` or `offline` (it cannot fetch bots from the server,
    so it takes no jobs); whether it is degraded (it then plays fewer games at once)."""
    recent = conn.execute(
        workers.update()
        .where(workers.c.name == name)
        .values(heartbeat_at=sa.func.now(), state=state)
        .returning(workers.c.recent)
    ).scalar()
    return is_degraded(recent or "")


def set_offline(conn: Connection, name: str, reason: str) -> None:
    """The worker cannot fetch bots and takes no jobs until the server answers: shown as its
    state and last failure."""
    conn.execute(
        workers.update()
        .where(workers.c.name == name)
        .values(
            state=OFFLINE,
            heartbeat_at=sa.func.now(),
            last_failure=reason[:2000],
            last_failure_at=now_iso(),
        )
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
    conn: Connection,
    game_id: int,
    attempt: int,
    outcome: str,
    failure: str | None = None,
    *,
    stall: bool = False,
) -> None:
    """Close an attempt's log row and count it against the worker that claimed it. A result
    arriving for an attempt already declared lost turns that row to `stale` (late, refused).
    `stall`: the attempt was voided as a host stall. A `lost` attempt is not one of the
    worker's recent games (it never ended it)."""
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
    if outcome != LOST:
        game_ended(conn, worker, column, stall)
        column = ""
    values: dict[str, Any] = {column: getattr(workers.c, column) + 1} if column else {}
    if failure is not None:
        values.update(last_failure=failure[:2000], last_failure_at=now_iso())
    if values:
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
    """Game slots of the workers whose heartbeat is younger than `stale_after` seconds and that
    take jobs (an offline worker does not; of a degraded worker, the slots it uses)."""
    now = conn.execute(sa.select(sa.func.now())).scalar_one()
    w = workers.c
    rows = conn.execute(
        sa.select(w.concurrency, w.heartbeat_at, w.recent).where(
            w.state == "running", w.name != SERVER_SLOTS
        )
    )
    return sum(
        degraded_slots(c) if is_degraded(recent) else c
        for c, hb, recent in rows
        if _age(now, hb) < stale_after
    )


def list_workers(conn: Connection, stale_after: float) -> list[dict[str, Any]]:
    """Every worker with its state (running; offline: it cannot reach the server for bots and
    takes no jobs; lost: no heartbeat for `stale_after` s; stopped),
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
        mine = playing.get(r.name, []) if state in (RUNNING, OFFLINE) else []
        stalls, n, rate = stall_rate(r.recent)
        degraded = is_degraded(r.recent)
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
                "stalls": r.stalls,
                "recent_games": n,
                "recent_stalls": stalls,
                "stall_rate": round(rate, 4),
                "degraded": degraded,
                # the server's own slots are shown degraded but keep their concurrency
                "slots": degraded_slots(r.concurrency)
                if degraded and r.name != SERVER_SLOTS
                else r.concurrency,
                "last_failure": neutral_paths(r.last_failure) if r.last_failure else None,
                "last_failure_at": r.last_failure_at,
            }
        )
    order = {"running": 0, "offline": 1, "lost": 2, "stopped": 3}
    out.sort(key=lambda w: (order.get(w["state"], 3), w["name"]))
    return out
