"""A tournament's games played by a league's workers (`arena tournament run --database URL`).

The runner keeps everything that makes a tournament a tournament: the schedule, the openings,
the attempts, the SQLite results file and its commits, resuming. Only the playing moves: an
attempt becomes a job on the league's procrastinate queue (arena/league/tourjobs.py), any
`arena league worker` that reaches the database plays it in its sandbox with the tournament's
time control and limits, and inserts the outcome into PostgreSQL once per (run, game, attempt).
This process waits for the outcomes (one poller for all games in flight) and hands each to the
runner as if a local referee worker had replied, so the commit, the report, the status and
resuming are the same code.

The bots travel by content hash: each bot directory is packed deterministically
(`pack_bot_dir`) into the database's `tournament_blobs`, and workers verify, build and cache it
like a league version. A bot given as a command has no directory to ship and is refused.

Durability: an outcome in PostgreSQL survives this process. A runner stopped or killed while
games are queued leaves their jobs; the next run (same results file) finds their outcomes, or
their live jobs, and defers only attempts with neither. A worker's death stalls its job, which
the league workers' sweep retries; a late second outcome for the same attempt is dropped.
A job that ends without an outcome (failed, cancelled, deleted) voids its attempt, which the
runner plays again, so no run waits for ever on a job nobody will play.
"""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path
from typing import Any

import trio

from arena.errors import ArenaError

#: seconds between looks for the outcomes of the games in flight
POLL = 0.2


def run_key(identity: dict[str, Any], results: Path) -> str:
    """Names this tournament's jobs and outcomes: its identity and results file, on this host
    (two results files of one config are two tournaments)."""
    blob = json.dumps(
        {"identity": identity, "results": str(results.resolve()), "host": socket.gethostname()},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def check_sendable(entries: list[Any]) -> None:
    """A bot given as a command has no directory to ship: refused before the results file or
    the database is touched."""
    for entry in entries:
        if entry.is_command:
            raise ArenaError(
                f"bot {entry.alias or entry.source!r}: a bot given as a command cannot be sent to "
                "workers; give it as a directory with a bot.toml (path = ...)"
            )


class RemotePlayer:
    """Plays attempts through the queue; `run` (in a nursery) polls for their outcomes."""

    def __init__(self, url: str, run: str, specs: list[Any], entries: list[dict[str, Any]]):
        self.url = url
        self.run_name = run
        self.specs = specs
        self.entries = entries
        self.shas: list[str] = []
        self.db: Any = None
        self.app: Any = None
        self.waiting: dict[tuple[str, int], trio.Event] = {}
        self.outcomes: dict[tuple[str, int], dict[str, Any]] = {}
        #: attempts whose job is committed to the queue (or was already there)
        self.queued: set[tuple[str, int]] = set()

    def open(self) -> None:
        """Blocking: check the database, publish the bots' archives."""
        from arena.league import queue
        from arena.league.archives import pack_bot_dir
        from arena.league.db import mailbox
        from arena.league.db.database import Database
        from arena.league.migrations import check_current

        self.db = Database(self.url, pool_size=2)
        try:
            try:
                check_current(self.db.engine)
            except ArenaError:
                raise
            except Exception as e:
                raise ArenaError(f"cannot use the database: {str(e).splitlines()[0]}") from None
            with self.db.write() as conn:
                if not queue.schema_installed(conn):
                    raise ArenaError(
                        "the database has no job queue; run 'arena league migrate DIR' first"
                    )
                self.shas = [mailbox.put_blob(conn, pack_bot_dir(s.workdir)) for s in self.specs]
        except BaseException:
            self.db.dispose()
            raise
        self.app = queue.deferrer()

    def close(self) -> None:
        if self.db is not None:
            self.db.dispose()

    def _submit(self, game_id: str, attempt: int, payload: dict[str, Any]) -> dict | None:
        """Blocking: the attempt's outcome if already stored, else make sure a job is queued."""
        from arena.league import queue, tourjobs
        from arena.league.db import mailbox

        i, j = payload["bots"]
        job = {
            "bots": [self.shas[i], self.shas[j]],
            "entries": [self.entries[i], self.entries[j]],
            "match": {**payload, "bots": [0, 1], "cpu_affinity": [None, None]},
        }
        key = (game_id, attempt)
        with self.db.write() as conn:
            # the live jobs first: a job's outcome is committed before the job ends, so a job
            # ending between the two reads leaves its outcome for the second (the other order
            # could see neither and queue the attempt a second time)
            live = key in queue.live_run_jobs(conn, tourjobs.TASK, self.run_name)
            done = mailbox.outcomes(conn, self.run_name, [key])
            if key in done:
                return done[key]
            if not live:
                tourjobs.defer(self.app, conn, self.run_name, game_id, attempt, job)
        return None

    async def play(self, game_id: str, attempt: int, payload: dict[str, Any]) -> dict[str, Any]:
        """The outcome of one attempt, as a referee worker's reply (record, void or error)."""
        key = (game_id, attempt)
        event = self.waiting.setdefault(key, trio.Event())
        try:
            done = await trio.to_thread.run_sync(self._submit, game_id, attempt, payload)
            if done is None:
                self.queued.add(key)
                await event.wait()
                done = self.outcomes.pop(key)
        finally:
            self.waiting.pop(key, None)
            self.outcomes.pop(key, None)
            self.queued.discard(key)
        return done

    def _fetch(
        self, keys: list[tuple[str, int]], queued: list[tuple[str, int]]
    ) -> dict[tuple[str, int], dict]:
        """The outcomes of these attempts; a queued attempt whose job ended without one (it
        failed, was cancelled, or is gone) is a void, so the runner plays the game again
        instead of waiting for ever."""
        from arena.league import queue, tourjobs
        from arena.league.db import mailbox

        with self.db.read() as conn:
            # the live jobs first: an outcome is committed before its job ends, so a job not
            # live here whose outcome is missing below ended without one
            live = queue.live_run_jobs(conn, tourjobs.TASK, self.run_name) if queued else set()
            found = mailbox.outcomes(conn, self.run_name, keys)
            lost = [k for k in queued if k not in found and k not in live]
            ended = queue.ended_run_jobs(conn, tourjobs.TASK, self.run_name) if lost else {}
        for key in lost:
            how = ended.get(key, "job is gone")
            reason = f"WorkerFault: its {how} without an outcome"
            found[key] = {"type": "void", "game_id": key[0], "reason": reason}
        return found

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            await trio.sleep(POLL)
            keys = list(self.waiting)
            if not keys:
                continue
            queued = list(self.queued)
            for key, outcome in (await trio.to_thread.run_sync(self._fetch, keys, queued)).items():
                if key in self.waiting:
                    self.outcomes[key] = outcome
                    self.waiting[key].set()
