"""Tournament games as jobs on the league's queue: both sides of the mailbox.

`arena tournament run --database URL` plays nothing itself. The runner keeps everything that
makes a tournament a tournament: the schedule, the openings, the attempts, the SQLite results
file and its commits, resuming. Only the playing moves, through the player the CLI hands the
runner (`queue_player`, a `Player` of arena/workers/players.py, shared by every slot): it
stores each bot's archive in the database by content hash (`tournament_blobs`), defers one job
per game attempt (task `TASK`, on the league's queue, so the same `arena league worker`s play
league and tournament games), and waits for the attempt's outcome in the mailbox
(arena/league/db/mailbox.py; one poller for all games in flight), which it hands to the runner
as if a local referee worker had replied, so the commit, the report, the status and resuming
are the same code.

A worker's slot (arena/league/slot.py) fetches the archives, verifies their hash, builds and
caches them like league versions (arena/league/botcache.py), plays the game with the
tournament's time control and limits, and inserts the outcome once: the row is keyed by
(run, game, attempt) and inserted with `ON CONFLICT DO NOTHING`, so a job run twice (a stalled
job retried while its first worker was merely slow) gives one outcome, the first.

The bots travel by content hash: each bot directory is packed deterministically
(`pack_bot_dir`); a bot given as a command has no directory to ship and is refused
(`check_sendable`, before the results file or the database is touched).

Durability: the runner's SQLite results file stays the tournament's record: this table is only
the mailbox between workers and runner, and an outcome in it survives the runner. A runner
stopped or killed while its games are in the queue finds their outcomes here when it runs
again, and defers again only attempts that have neither an outcome nor a live job. A worker's
death stalls its job, which the league workers' sweep retries; a late second outcome for the
same attempt is dropped. A job that ends without an outcome (failed, cancelled, deleted) voids
its attempt, which the runner plays again, so no run waits for ever on a job nobody will play.
"""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import procrastinate
import trio

from arena.errors import ArenaError
from arena.league import queue
from arena.league.db import mailbox
from arena.league.db.database import Database
from arena.workers.wire import Fault, void

if TYPE_CHECKING:
    from arena.tournaments.config import BotEntry, TournamentConfig

#: the task of a tournament game's attempt (same queue as league games)
TASK = "arena.tournament.play_game"
#: seconds between the runner's looks for the outcomes of the games in flight
POLL = 0.2


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


# --- the runner's side: a player of the tournament runner ---------------------------------


def run_key(identity: dict[str, Any], results: Path) -> str:
    """Names this tournament's jobs and outcomes: its identity and results file, on this host
    (two results files of one config are two tournaments)."""
    blob = json.dumps(
        {"identity": identity, "results": str(results.resolve()), "host": socket.gethostname()},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def check_sendable(entries: Sequence[BotEntry]) -> None:
    """A bot given as a command has no directory to ship: refused before the results file or
    the database is touched."""
    for entry in entries:
        if entry.is_command:
            raise ArenaError(
                f"bot {entry.alias or entry.source!r}: a bot given as a command cannot be sent to "
                "workers; give it as a directory with a bot.toml (path = ...)"
            )


@asynccontextmanager
async def queue_player(
    config: TournamentConfig, specs: list[Any], entries: list[dict[str, Any]]
) -> AsyncIterator[QueuePlayer]:
    """The runner's player for a config with a `database` (`play_elsewhere` of
    arena/tournaments/runner.py): the database checked, the bots published, and one poller
    for the outcomes of every game in flight while the run lasts."""
    assert config.database is not None
    key = run_key(config.identity([s.name for s in specs]), config.results)
    player = QueuePlayer(config.database, key, specs, entries)
    await trio.to_thread.run_sync(player.open)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(player.poll)
            yield player
            nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await player.aclose()


class QueuePlayer:
    """Plays attempts through the queue; `poll` (in a nursery) fetches their outcomes."""

    def __init__(self, url: str, run: str, specs: list[Any], entries: list[dict[str, Any]]):
        self.url = url
        self.run_name = run
        self.specs = specs
        self.entries = entries
        self.shas: list[str] = []
        self.db: Database | None = None
        self.app: Any = None
        self.waiting: dict[tuple[str, int], trio.Event] = {}
        self.outcomes: dict[tuple[str, int], dict[str, Any]] = {}
        #: attempts whose job is committed to the queue (or was already there)
        self.queued: set[tuple[str, int]] = set()

    def open(self) -> None:
        """Blocking: check the database, publish the bots' archives."""
        # Imported here, not with the module: a league worker and each of its game slots
        # import this module for the mailbox, and the archive packer would add to every
        # one's start (python -X importtime).
        from arena.league.archives import pack_bot_dir

        self.db = db = Database(self.url, pool_size=2)
        try:
            queue.require_ready(db.engine, "first")
            with db.write() as conn:
                self.shas = [mailbox.put_blob(conn, pack_bot_dir(s.workdir)) for s in self.specs]
        except BaseException:
            db.dispose()
            self.db = None
            raise
        self.app = queue.deferrer()

    async def aclose(self) -> None:
        if self.db is not None:
            db, self.db = self.db, None
            await trio.to_thread.run_sync(db.dispose)

    def _submit(self, game_id: str, attempt: int, payload: dict[str, Any]) -> dict | None:
        """Blocking: the attempt's outcome if already stored, else make sure a job is queued."""
        assert self.db is not None
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
            live = key in queue.live_run_jobs(conn, TASK, self.run_name)
            done = mailbox.outcomes(conn, self.run_name, [key])
            if key in done:
                return done[key]
            if not live:
                defer(self.app, conn, self.run_name, game_id, attempt, job)
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
        assert self.db is not None
        with self.db.read() as conn:
            # the live jobs first: an outcome is committed before its job ends, so a job not
            # live here whose outcome is missing below ended without one
            live = queue.live_run_jobs(conn, TASK, self.run_name) if queued else set()
            found = mailbox.outcomes(conn, self.run_name, keys)
            lost = [k for k in queued if k not in found and k not in live]
            ended = queue.ended_run_jobs(conn, TASK, self.run_name) if lost else {}
        for key in lost:
            how = ended.get(key, "job is gone")
            found[key] = void(key[0], Fault.WORKER, f"WorkerFault: its {how} without an outcome")
        return found

    async def poll(self) -> None:
        """Hand each attempt waited for its outcome, as soon as the database holds it."""
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
