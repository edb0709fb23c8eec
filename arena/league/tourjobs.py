"""Tournament games as jobs on the league's queue: what the runner and the workers share.

`arena tournament run --database URL` plays nothing itself (arena/tournaments/remote.py): it
stores each bot's archive in the database by content hash, defers one job per game attempt
(task `TASK`, on the league's queue, so the same `arena league worker`s play league and
tournament games), and waits for the attempt's outcome in the mailbox
(arena/league/db/mailbox.py: the archives, and each attempt's outcome inserted once per
(run, game, attempt) whatever the number of workers that played it). A worker's slot
(arena/league/slot.py) fetches the archives, verifies their hash, builds and caches them like
league versions (arena/league/botcache.py), plays the game with the tournament's time control
and limits, and inserts the outcome once.

The runner's SQLite results file stays the tournament's record: the mailbox is only the mailbox
between workers and runner. A runner stopped or killed while its games are in the queue finds
their outcomes there when it runs again, and defers again only attempts that have neither an
outcome nor a live job (`queue.live_run_jobs`, `queue.ended_run_jobs`).
"""

from __future__ import annotations

from typing import Any

import procrastinate

from arena.league import queue

#: the task of a tournament game's attempt (same queue as league games)
TASK = "arena.tournament.play_game"


def defer(
    app: procrastinate.App, conn: Any, run: str, game_id: str, attempt: int, job: dict
) -> int:
    """Queue one attempt of a tournament game inside the caller's transaction (a SQLAlchemy
    Connection on the league's PostgreSQL database); the job's id. `job` is {"bots": [archive
    sha256 x2], "entries": [bot entries x2], "match": payload}."""
    raw = conn.connection.driver_connection
    return app.configure_task(TASK, queue=queue.QUEUE, connection=raw).defer(
        run=run, game_id=game_id, attempt=attempt, job=job
    )
