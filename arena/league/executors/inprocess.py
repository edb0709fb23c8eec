"""The default executor: referee worker processes on this machine, one per slot.

It drives referee worker processes through `WorkerProcess` (arena/workers/process.py), as the
tournament runner does: the referee of each concurrent game runs in a process of its own, so
games use every core, and a worker that dies voids its game (`worker_lost`) and is replaced for
the next one. A void reply from the worker is the platform's fault too, of the kind its fault
names (arena/league/voids.py); an error reply (a bot directory that no longer loads) is an
internal error, since the version passed validation when it was submitted.

Given the league's `LiveGames` (arena/league/live.py), each slot asks its worker for a `turn`
message after every turn and hands it over as it arrives, for the pages' live view; a game is
taken off the live list once its outcome is recorded, so a page that then reloads finds the
record.
"""

from __future__ import annotations

import math

import trio

from arena.league.db.schema import VoidKind
from arena.league.executors.base import Executor, GameJob, JobSource, Outcome
from arena.league.live import LiveGames
from arena.league.voids import void_of
from arena.workers.process import WorkerDied, WorkerProcess
from arena.workers.wire import record_text


class InProcessExecutor(Executor):
    def __init__(self, slots: int, live: LiveGames | None = None) -> None:
        self.slots = slots
        self.live = live

    async def run(
        self, source: JobSource, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(self.slots):
                nursery.start_soon(self._slot, source)
            task_status.started()

    async def _slot(self, source: JobSource) -> None:
        """Plays the slot's games back to back, with the next game always claimed already.

        A finished game's outcome is recorded (and the game after next claimed, in the same
        transaction) by a task of its own while the worker goes on with the game claimed
        ahead, so the worker never waits for the database. The game claimed ahead is `running`
        like any game in play: a stop voids it (`server_stopped`) and it is replayed."""
        send, jobs = trio.open_memory_channel[GameJob](math.inf)
        worker: WorkerProcess | None = None
        try:
            async with trio.open_nursery() as nursery:
                send.send_nowait(await source.next_job())
                nursery.start_soon(self._claim_ahead, source, send)
                async for job in jobs:
                    try:
                        if worker is None:
                            worker = await WorkerProcess.start([], None)
                        reply = await self._play(worker, job)
                    except WorkerDied as e:
                        if worker is not None:
                            await worker.close()
                        worker = None
                        outcome = Outcome(job, void=VoidKind.WORKER_LOST, reason=str(e))
                    else:
                        outcome = _outcome(job, reply, worker.last_line)
                    nursery.start_soon(self._finish, source, outcome, send)
        finally:
            if worker is not None:
                with trio.CancelScope(shield=True):
                    await worker.close()

    async def _claim_ahead(self, source: JobSource, send: trio.MemorySendChannel[GameJob]) -> None:
        send.send_nowait(await source.next_job())

    async def _finish(
        self, source: JobSource, outcome: Outcome, send: trio.MemorySendChannel[GameJob]
    ) -> None:
        with trio.CancelScope(shield=True):
            following = await source.finished_then_next(outcome)
        if self.live is not None:
            self.live.end(outcome.job.game_id)
        send.send_nowait(following or await source.next_job())

    async def _play(self, worker: WorkerProcess, job: GameJob) -> dict:
        live = self.live
        if live is None:
            return await worker.request(job.worker_request())
        names = [str(b.get("alias") or f"seat {i}") for i, b in enumerate(job.bots)]
        live.start(job.game_id, job.variant, job.match, names)
        try:
            return await worker.request(
                {**job.worker_request(), "progress": True},
                lambda msg: live.turn(job.game_id, msg.get("entry")),
            )
        except BaseException:
            live.end(job.game_id)  # no outcome to wait for (the worker died, or we stop)
            raise


def _outcome(job: GameJob, reply: dict, line: bytes = b"") -> Outcome:
    kind = reply.get("type")
    if kind == "record":
        # the record's text as the worker sent it (its `record`: its head, wire.py
        # `encode_reply`), or cut from a one-line reply
        text = reply.get("record_json")
        if text is None:
            text = record_text(reply, line)
        return Outcome(job, record=reply["record"], record_json=text)
    void, reason = void_of(reply)
    return Outcome(job, void=void, reason=reason)
