"""The queue executor: games become procrastinate jobs, played by `arena league worker`s.

With `arena league serve --no-local-games` the server plays nothing: this executor keeps the job
queue (arena/league/queue.py) stocked and the workers, on any machines that reach the database,
claim, play and record the games (arena/league/slot.py). Each new game is planned by the
scheduler's matchmaking, then created (`queued`) and its job deferred in one write transaction:
a game never exists without its job, nor a job without its game.

How many: enough queued to keep every live worker's slots busy until the next look, and no
more, so pairings still use recent ratings. The depth is `live capacity x headroom` (at least the
league's `concurrency`): headroom starts at 2 jobs per slot, doubles (up to MAX_HEADROOM) when a
look finds the queue ran dry (short games drained it within one poll, and slots sat idle), and
shrinks back when more than half of it is still waiting. Long games keep two per slot; games of
a few tens of milliseconds get the depth one poll of play needs.

Every `poll` seconds the executor also defers a new job for any game left queued or running
with no live job (a job deleted by hand, or failed for good), so the queue
heals from whatever the jobs table went through.

The games in flight belong to the workers, not to this process: a server that stops or is killed
leaves them alone (`plays_here` is False), and they are recorded while it is away.

The workers record without the server, so nothing here hears of a result as the in-process
executor's scheduler does. Each look already reads the finished games' running total (the
`tallies` row the recording transaction bumps), so when it has moved the executor tells the
scheduler (`on_recorded`): the read cache drops and the pages following a candidate verdict
read it again within a poll, instead of at their 15 s keep-alive.
"""

from __future__ import annotations

import trio

from arena.league import queue
from arena.league.db import fleet, ledger, schema, views
from arena.league.db.database import Database
from arena.league.executors.base import Executor, JobSource
from arena.league.scheduler import Scheduler
from arena.league.settings import LeagueSettings
from arena.league.slot import PlayParams

#: seconds between looks at the queue when nothing else wakes the executor
POLL = 0.25
#: jobs per live slot kept in flight: the start, and the most when short games drain the queue
HEADROOM, MAX_HEADROOM = 2.0, 32.0


class QueueExecutor(Executor):
    plays_here = False

    def __init__(
        self,
        settings: LeagueSettings,
        *,
        public_url: str | None = None,
        stalled_after: float = 30.0,
        poll: float = POLL,
    ) -> None:
        self.settings = settings
        self.slots = settings.concurrency
        self.public_url = public_url
        self.stalled_after = stalled_after
        self.poll = poll
        self.app = queue.deferrer()
        self.enqueued = 0
        #: the finished games' total as the last look read it
        self.finished = 0
        self.headroom = HEADROOM
        #: the last fill reached its target (not stopped for want of a pairing)
        self._filled = False
        self.params = PlayParams(
            name=settings.name,
            isolation=settings.isolation,
            limits=settings.limits,
            max_attempts=settings.max_attempts,
            reuse=settings.reuse,
        ).to_dict()

    def serving(self, urls: list[str]) -> None:
        if self.public_url is None and urls:
            self.public_url = urls[0]

    async def run(
        self, source: JobSource, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        if not isinstance(source, Scheduler):
            raise TypeError("the queue executor plans games with the league's Scheduler")
        # the finished total as the executor starts: what the workers record from then on is
        # told (it is read before `started`, so nothing recorded after the start is missed)
        seen = await trio.to_thread.run_sync(self._publish, source.db)
        task_status.started()
        while True:
            await trio.to_thread.run_sync(self.fill, source)
            if self.finished != seen:  # the workers recorded something since the last look
                source.on_recorded()
                seen = self.finished
            await trio.sleep(self.poll)

    def _publish(self, db: Database) -> int:
        """Blocking: publish what workers need to know; the finished games' total now."""
        with db.write() as conn:
            fleet.worker_secret(conn)
            fleet.set_meta(conn, "stalled_after", str(self.stalled_after))
            fleet.set_meta(conn, "isolation", self.settings.isolation)
            fleet.set_meta(conn, fleet.OVERSUBSCRIBE, str(self.settings.oversubscribe).lower())
            if self.public_url:
                fleet.set_meta(conn, fleet.SERVER_URL, self.public_url)
            self.finished = views.counts(conn).get(schema.GameState.FINISHED, 0)
        return self.finished

    def fill(self, scheduler: Scheduler) -> int:
        """Blocking: re-defer orphaned games, then create and defer new ones up to the target;
        how many jobs were deferred."""
        db = scheduler.db
        n = 0
        with db.write() as conn:
            for gid in queue.orphans(conn):
                queue.defer_game(self.app, conn, gid, self.params)
                n += 1
            capacity = fleet.live_capacity(conn, self.stalled_after)
            counts = views.counts(conn)
        self.finished = counts.get(schema.GameState.FINISHED, 0)
        queued = counts.get(schema.GameState.QUEUED, 0)
        in_flight = queued + counts.get(schema.GameState.RUNNING, 0)
        if self._filled:  # a queue that was short of games to plan says nothing of its depth
            self.headroom = adapt_headroom(self.headroom, queued, capacity)
        target = max(self.settings.concurrency, round(self.headroom * capacity))
        self._filled = True
        while in_flight < target:
            with db.write() as conn:
                queue.fast_commit(conn)  # redone if lost: see arena/league/queue.py
                new = scheduler.new_game(conn)
                if new is None:
                    self._filled = False
                    break
                gid = ledger.create_game(conn, new)
                queue.defer_game(self.app, conn, gid, self.params)
            in_flight += 1
            n += 1
        self.enqueued += n
        return n


def adapt_headroom(headroom: float, queued: int, capacity: int) -> float:
    """The next headroom (jobs per live slot), from what one look finds still queued: a queue
    that ran dry let slots idle, so it doubles; one more than half full shrinks back by a
    third, so slow games keep pairings fresh. Within [HEADROOM, MAX_HEADROOM]."""
    if capacity <= 0:
        return headroom
    if queued == 0:
        return min(MAX_HEADROOM, headroom * 2)
    if queued > headroom * capacity / 2:
        return max(HEADROOM, headroom / 1.5)
    return headroom
