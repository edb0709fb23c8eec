"""The job queue: procrastinate on the league's PostgreSQL database.

Why procrastinate: jobs are rows in the database the league already needs, taken with
`SELECT ... FOR UPDATE SKIP LOCKED`; workers heartbeat, and the jobs of a worker that stopped
beating are found by `get_stalled_jobs` and put back with `retry_job`; and a job can be deferred
on a connection the caller owns (`configure(connection=...)`, SyncPsycopgConnector), so a game
row and its job are created in one transaction: both commit or neither does.

The queue is not the source of truth about games: the games table is. A job says only "see that
game N gets played"; the worker that runs it claims the game row (a new attempt number) and
records through the ledger's conditional update (arena/league/db/ledger.py), so a job run twice
(a stalled job retried while its first worker was merely slow) costs a replay, never a second
result. Whatever a job's fate
(failed, aborted, deleted by hand), `orphans` finds games queued or running with no live job and
the server defers a new one.

Durability. Only the result must survive a crash of the database; everything before it can be
done again. So the steps before the record commit without waiting for the disk
(`synchronous_commit = off`: `fast_commit`, and the worker's procrastinate connections): the
game and its job, procrastinate's fetch and finish, the worker's claim. PostgreSQL's log is
sequential, so the record's own synchronous commit makes every earlier step durable too; a crash
before it loses only work that is redone (a planned game, a claim whose job is retried). That
takes the queue's path from five disk flushes per game to one, the record's.

Schema: procrastinate's own (`procrastinate_jobs`, `_workers`, `_events`, functions), installed
by `install_schema` from `arena league init` / `migrate` on PostgreSQL; it is procrastinate's
release, not an arena revision.
"""

from __future__ import annotations

from typing import Any

import procrastinate
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from arena.errors import ArenaError
from arena.league.db.schema import GameKind, GameState, games

#: the task every game job runs, and the queue its jobs wait in
TASK = "arena.league.play_game"
QUEUE = "arena-games"


def is_postgres(url: str) -> bool:
    return url.startswith("postgresql")


def conninfo(url: str) -> str:
    """A libpq connection string (what procrastinate's psycopg connectors take) from the
    league's SQLAlchemy URL."""
    u = sa.engine.make_url(url).set(drivername="postgresql")
    return u.render_as_string(hide_password=False)


#: what a worker's procrastinate connections set: their commits need not wait for the disk
ASYNC_COMMIT_OPTIONS = "-c synchronous_commit=off"


def fast_commit(conn: Connection) -> None:
    """This transaction's commit does not wait for the disk (PostgreSQL only; see above)."""
    conn.exec_driver_sql("SET LOCAL synchronous_commit = off")


def deferrer() -> procrastinate.App:
    """An app that only defers, on connections its caller passes (it is never opened)."""
    return procrastinate.App(connector=procrastinate.SyncPsycopgConnector())


def schema_installed(conn: Connection) -> bool:
    return bool(
        conn.execute(sa.text("SELECT to_regclass('procrastinate_jobs') IS NOT NULL")).scalar()
    )


def require_ready(engine: Engine, hint: str) -> None:
    """What a worker or a tournament on workers checks before it uses the league's database:
    the schema is current and the job queue is installed; else one ArenaError, ending with
    `hint` (where to run the migration)."""
    # imported here: alembic adds 60-90 ms, and the slots that import this module never check
    from arena.league.migrations import check_current

    try:
        check_current(engine)
    except ArenaError:
        raise
    except Exception as e:
        raise ArenaError(f"cannot use the database: {str(e).splitlines()[0]}") from None
    with engine.connect() as conn:
        if not schema_installed(conn):
            raise ArenaError(
                f"the database has no job queue; run 'arena league migrate DIR' {hint}"
            )


def install_schema(engine: Engine) -> bool:
    """Install procrastinate's schema unless present; True if it was installed now."""
    with engine.begin() as conn:
        if schema_installed(conn):
            return False
        sql = deferrer().schema_manager.get_schema()
        conn.connection.driver_connection.execute(sql)  # type: ignore[union-attr]
    return True


def defer_game(app: procrastinate.App, conn: Connection, game_id: int, params: dict) -> int:
    """Queue a job for game `game_id` inside the caller's transaction; the job's id."""
    raw = conn.connection.driver_connection
    return app.configure_task(TASK, queue=QUEUE, connection=raw).defer(
        game_id=game_id, params=params
    )


_LIVE_JOBS = sa.text(
    "SELECT DISTINCT (args->>'game_id')::bigint FROM procrastinate_jobs "
    "WHERE task_name = :task AND status IN ('todo', 'doing')"
)


def orphans(conn: Connection) -> list[int]:
    """Games queued or running with no job waiting or in progress for them (challenges,
    which the server plays itself, never have one)."""
    live = {gid for (gid,) in conn.execute(_LIVE_JOBS, {"task": TASK})}
    rows = conn.execute(
        sa.select(games.c.id)
        .where(
            games.c.state.in_([GameState.QUEUED, GameState.RUNNING]),
            # a person's game is played by the server itself, never by a job
            games.c.kind != GameKind.CHALLENGE,
        )
        .order_by(games.c.id)
    )
    return [gid for (gid,) in rows if gid not in live]


def job_counts(conn: Connection) -> dict[str, Any]:
    rows = conn.execute(
        sa.text(
            "SELECT status::text, count(*) FROM procrastinate_jobs WHERE task_name = :task "
            "GROUP BY status"
        ),
        {"task": TASK},
    )
    return {s: int(n) for s, n in rows}


# A local tournament's jobs (arena/league/tourjobs.py): one per game attempt, its arguments
# naming the run, the game and the attempt.
_LIVE_RUN_JOBS = sa.text(
    "SELECT args->>'game_id', (args->>'attempt')::int FROM procrastinate_jobs "
    "WHERE task_name = :task AND status IN ('todo', 'doing') AND args->>'run' = :run"
)


def live_run_jobs(conn: Connection, task: str, run: str) -> set[tuple[str, int]]:
    """(game, attempt) of this run's jobs waiting or in play."""
    return {(g, int(a)) for g, a in conn.execute(_LIVE_RUN_JOBS, {"task": task, "run": run})}


_ENDED_RUN_JOBS = sa.text(
    "SELECT args->>'game_id', (args->>'attempt')::int, id, status::text FROM procrastinate_jobs "
    "WHERE task_name = :task AND status NOT IN ('todo', 'doing') AND args->>'run' = :run"
)


def ended_run_jobs(conn: Connection, task: str, run: str) -> dict[tuple[str, int], str]:
    """(game, attempt) of this run's jobs that ended and are still listed (a worker's error,
    one without this task, an operator's cancel): how, e.g. `job 12 failed`."""
    return {
        (g, int(a)): f"job {i} {status}"
        for g, a, i, status in conn.execute(_ENDED_RUN_JOBS, {"task": task, "run": run})
    }
