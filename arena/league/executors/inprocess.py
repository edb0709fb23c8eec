"""The default executor: referee worker processes on this machine, one per slot.

It reuses the tournament runner's `WorkerProcess` (arena/tournaments/runner.py): the referee of
each concurrent game runs in a process of its own, so games use every core, and a worker that
dies voids its game (`worker_lost`) and is replaced for the next one. A void reply from the
worker is the platform's fault too; an error reply (a bot directory that no longer loads) is
treated the same way, since the version passed validation when it was submitted.

Given the league's `LiveGames` (arena/league/live.py), each slot asks its worker for a `turn`
message after every turn and hands it over as it arrives, for the pages' live view; a game is
taken off the live list once its outcome is recorded, so a page that then reloads finds the
record.
"""

from __future__ import annotations

import trio

from arena.league.executors.base import Executor, GameJob, JobSource, Outcome
from arena.league.live import LiveGames
from arena.league.store import VoidKind
from arena.tournaments.runner import WorkerDied, WorkerProcess


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
        worker: WorkerProcess | None = None
        try:
            job = await source.next_job()
            while True:
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
                    outcome = _outcome(job, reply)
                with trio.CancelScope(shield=True):
                    following = await source.finished_then_next(outcome)
                if self.live is not None:
                    self.live.end(job.game_id)
                job = following or await source.next_job()
        finally:
            if worker is not None:
                with trio.CancelScope(shield=True):
                    await worker.close()

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


def _outcome(job: GameJob, reply: dict) -> Outcome:
    kind = reply.get("type")
    if kind == "record":
        return Outcome(job, record=reply["record"])
    reason = str(reply.get("reason") or reply.get("message") or f"unexpected reply {kind!r}")
    if reason.startswith("SandboxFault"):
        return Outcome(job, void=VoidKind.SANDBOX_FAULT, reason=reason)
    if reason.startswith("RefereeFault"):
        return Outcome(job, void=VoidKind.REFEREE_FAULT, reason=reason)
    return Outcome(job, void=VoidKind.INTERNAL_ERROR, reason=reason)
