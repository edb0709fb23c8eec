"""One game slot of a league worker: a trio process that plays the games of the jobs it is given.

The worker (arena/league/worker.py) runs procrastinate's asyncio loop and keeps one of these
processes per slot; everything about a game happens here, under trio, as in a referee worker
process (arena/workers/child.py, whose `play_one` plays the game and whose line protocol,
arena/workers/wire.py, this speaks). A crash here (a
referee bug, the OOM killer) takes down one slot, not the worker: the worker sees the pipe die
and hands the job back to the queue.

One job, `play(game_id)`:
1. get both bots by archive hash, verified (arena/league/botcache.py), before anything is
   claimed: if the server cannot be reached the answer is `offline` and the game is left as it
   was (no attempt spent; the worker stops taking jobs until the server answers);
2. claim, in one transaction with the game row locked: a finished or failed game is left alone
   (the job ran twice), and so is a game still waiting out its backoff (the job is retried
   then); a game still `running` belongs to an attempt whose worker died or stalled
   (procrastinate runs a job on one worker at a time, so that attempt has no live owner any
   more): it is voided as `worker_lost` (unrated; counts towards max_attempts), then the game
   is claimed with a new attempt number, and the attempt logged against this worker. An
   archive that could not be verified or built voids that attempt (`archive_fault`);
3. play the game in the league's sandbox and limits (the referee, in this process);
4. record with the ledger's conditional update on (game, attempt, running), in the same
   transaction as the attempt's log row: zero rows means a newer attempt owns the game (this
   one was declared lost while it was still playing) and nothing is written. A platform fault
   voids the attempt; the reply says whether the game went back to the queue, so the worker
   has the job retried (perhaps on another machine), or failed for good.

Protocol (JSON Lines on stdin/stdout): `{"type": "init", "database", "server", "secret",
"cache", "shared", "worker"}` once, answered `{"type": "ready"}`; then `{"type": "play",
"game_id", "params"}` answered `{"type": "done", "game_id", "status", "detail"}` with status
`recorded`, `stale`, `offline` (with `server`: the bots could not be fetched), `requeued`
(with `retry_in`, the seconds the game's backoff lasts: the worker has its job retried then),
`failed` or `nothing`. `{"type": "tplay", "run", "game_id",
"attempt", "job"}` plays an attempt of a local tournament's game (arena/league/tourjobs.py),
answered the same way (`recorded` or `stale`). When stdin closes the game in play is
abandoned (its bots killed) and the process exits.

A game's record is stored while the slot plays its next game: storing it (compressing the
record, one transaction with the ratings) took milliseconds between two games of the slot,
and the worker's next job waited for it. So a game that ends with a record is answered twice:
first `{"type": "free", "rid"}` as soon as the record is handed to the slot's recorder (a task
of its own): the slot takes its next request now; then `{"type": "done", ...}` once the record
is committed, which is when the job completes (procrastinate's job ends with the commit, as
before). At most one record is in flight: the next game's record waits until the previous one
is committed before the slot says `free` again. Exactly once holds as for any game in play: if
the slot dies between the game's end and the commit, the record is lost with it, the job is
retried and the retry voids the attempt (`worker_lost`) and replays the game; if it dies after
the commit, the retry finds the game finished and does nothing. Every request may carry a
`"rid"`, echoed in each of its replies (`free` comes before or after other requests'
replies; `done` answers its own request only).

Where the league (or a tournament) allows sessions (`reuse`), the slot keeps the processes of
bot versions that offer them between its games (arena/referee/sessions.py): a slot plays one
game at a time, as a session pool requires, and closes the pool when it exits.
"""

from __future__ import annotations

import dataclasses
import random
import sys
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import trio

from arena.league import queue
from arena.league.backoff import Backoff
from arena.league.botcache import BotCache, ServerUnreachable
from arena.league.db import fleet, ledger, mailbox, schema
from arena.league.db.database import Database
from arena.league.errors import PlatformFault
from arena.league.executors.base import job_from_claim
from arena.league.voids import void_of
from arena.referee.sessions import SessionPool
from arena.sandbox import Limits
from arena.workers.child import load_specs, play_one
from arena.workers.wire import Fault, encode, requests_on_stdin, void


@dataclasses.dataclass(frozen=True)
class PlayParams:
    """What a job carries besides its game: the league's play settings when it was queued
    (the names `job_from_claim` reads from LeagueSettings)."""

    name: str
    isolation: str
    limits: Limits
    max_attempts: int
    reuse: bool = False

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlayParams:
        # `reuse` is absent from the jobs a server of an older version queued
        return cls(
            d["name"],
            d["isolation"],
            Limits(**d["limits"]),
            int(d["max_attempts"]),
            bool(d.get("reuse", False)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "isolation": self.isolation,
            "limits": dataclasses.asdict(self.limits),
            "max_attempts": self.max_attempts,
            "reuse": self.reuse,
        }


@dataclasses.dataclass(frozen=True)
class Recording:
    """A played game whose outcome is still to be stored: `store` (blocking: run in a thread)
    stores it, exactly once, and gives the job's reply. The slot's recorder runs it while the
    slot plays its next game (`main`)."""

    store: Callable[[], dict[str, Any]]

    async def commit(self) -> dict[str, Any]:
        return await trio.to_thread.run_sync(self.store)


class Slot:
    def __init__(
        self,
        db: Database,
        cache: BotCache,
        worker: str,
        sessions: SessionPool | None = None,
    ) -> None:
        self.db = db
        self.cache = cache
        self.worker = worker
        #: the bot processes kept between games where the league or tournament allows
        #: sessions (`reuse`); this slot plays one game at a time, as a pool requires (None:
        #: every game starts its bots)
        self.sessions = sessions
        #: how long a game this slot voided waits before its next attempt
        self.backoff = Backoff()
        self.jitter = random.Random()

    async def play(self, game_id: int, params: PlayParams) -> dict[str, Any] | Recording:
        """The job's reply, or the game's record still to be stored (`Recording`)."""
        # the bots first, before the game is claimed: a worker that cannot reach the server
        # gives the job back as it found it, with no attempt spent
        shas = await trio.to_thread.run_sync(self._seated_archives, game_id)
        if shas is None:
            return {"status": "nothing", "detail": ""}
        fault: PlatformFault | None = None
        paths: list[str] = []
        try:
            paths = [str(await self.cache.path(sha)) for sha in shas]
        except ServerUnreachable as e:
            return {"status": "offline", "detail": str(e), "server": e.server}
        except PlatformFault as e:
            fault = e  # the archive's trouble (corrupt, refused, unbuildable): void the attempt
        claimed = await trio.to_thread.run_sync(self._claim, game_id, params)
        if isinstance(claimed, float):  # the job came before the game's backoff ended
            return {"status": "requeued", "detail": "waiting out its backoff", "retry_in": claimed}
        if isinstance(claimed, str):
            return {"status": claimed, "detail": ""}
        claim, _ = claimed
        if fault is not None:
            return await self._void(claim, params, schema.VoidKind.ARCHIVE_FAULT, str(fault))
        job = job_from_claim(dataclasses.replace(claim, paths=tuple(paths)), params)  # type: ignore[arg-type]
        reply = await _play(job.worker_request(), self.sessions)
        if reply["type"] == "record":
            return Recording(partial(self._record, claim, reply["record"]))
        kind, reason = void_of(reply)
        return await self._void(claim, params, kind, reason)

    async def play_tournament(
        self, run: str, game_id: str, attempt: int, job: dict[str, Any]
    ) -> Recording:
        """Play one attempt of a local tournament's game (arena/league/tourjobs.py); its
        outcome, to be inserted once; a bot's failure is in the record, a platform fault is a
        void (the runner plays the game again as a new attempt)."""
        try:
            paths = [str(await self.cache.path(sha)) for sha in job["bots"]]
        except PlatformFault as e:  # the archives: named as the sandbox's, as they always were
            reply: dict[str, Any] = void(game_id, Fault.SANDBOX, f"SandboxFault: {e}")
        else:
            entries = [
                {**entry, "source": path, "build": False}
                for entry, path in zip(job["entries"], paths, strict=True)
            ]
            msg = {"type": "play", "game_id": game_id, "match": job["match"]}
            reply = await _play({"bots": entries, **msg}, self.sessions)
        if reply["type"] == "record":
            kind, payload = "record", reply["record"]
        elif reply["type"] == "void":
            kind, payload = "void", str(reply.get("reason"))
        else:
            kind, payload = "error", {"message": reply.get("message"), "user": reply.get("user")}

        stall = kind == "void" and void_of(reply)[0] == schema.VoidKind.HOST_STALL

        def insert() -> dict[str, Any]:
            with self.db.write() as conn:
                ok = mailbox.record(conn, run, game_id, attempt, kind, payload, self.worker)
                if ok:  # the worker's stall rate counts its tournament games too
                    fleet.game_ended(conn, self.worker, stall=stall)
            if ok:
                return {"status": "recorded", "detail": kind}
            return {"status": "stale", "detail": f"attempt {attempt} already has an outcome"}

        return Recording(insert)

    def _seated_archives(self, game_id: int) -> list[str] | None:
        """The archive hashes of the game's two versions; None if it needs no playing."""
        with self.db.read() as conn:
            return ledger.seated_archives(conn, game_id)

    def _claim(
        self, game_id: int, params: PlayParams
    ) -> str | float | tuple[ledger.Claim, list[str]]:
        """The claim and the seats' archive hashes; or what to answer instead: "nothing" (the
        game is over), "failed", or the seconds its backoff still lasts."""
        with self.db.write() as conn:
            if not self.db.is_sqlite:
                queue.fast_commit(conn)  # redone if lost: see arena/league/queue.py
            row = ledger.lock_game(conn, game_id)
            if row is None or row.state in (schema.GameState.FINISHED, schema.GameState.FAILED):
                return "nothing"
            if row.state == schema.GameState.QUEUED and row.not_before is not None:
                wait = ledger.seconds_until(row.not_before, time.time())
                if wait > 0:
                    return wait
            if row.state == schema.GameState.RUNNING:
                who = fleet.attempt_worker(conn, game_id, row.attempt) or "its worker"
                reason = f"attempt {row.attempt} lost: {who} stopped before recording it"
                ledger.void_attempt(
                    conn,
                    game_id,
                    row.attempt,
                    schema.VoidKind.WORKER_LOST,
                    reason,
                    params.max_attempts,
                )
                fleet.end_attempt(conn, game_id, row.attempt, fleet.LOST, reason)
            claim = ledger.claim_game(conn, game_id)
            if claim is None:
                return "failed"  # the lost attempt was its last
            fleet.begin_attempt(conn, game_id, claim.attempt, self.worker)
            sha = ledger.archives(conn, claim.versions)
            return claim, [sha[claim.versions[0]], sha[claim.versions[1]]]

    def _record(self, claim: ledger.Claim, record: dict[str, Any]) -> dict[str, Any]:
        # compressed before the transaction, which holds the rating rows locked
        data = ledger.stored_record(record)
        with self.db.write() as conn:
            # the rating rows first, in id order (see `ledger.lock_ratings`)
            ledger.lock_ratings(conn, claim.variant, claim.versions)
            ok = ledger.record_result(conn, claim.game_id, claim.attempt, record, compressed=data)
            fleet.end_attempt(
                conn, claim.game_id, claim.attempt, fleet.RECORDED if ok else fleet.STALE
            )
        if ok:
            return {"status": "recorded", "detail": ""}
        return {"status": "stale", "detail": f"attempt {claim.attempt} was no longer current"}

    async def _void(
        self, claim: ledger.Claim, params: PlayParams, kind: schema.VoidKind, reason: str
    ) -> dict[str, Any]:
        wait = self.backoff.after(kind, claim.attempt, self.jitter)

        def run() -> dict[str, Any]:
            with self.db.write() as conn:
                ok = ledger.void_attempt(
                    conn,
                    claim.game_id,
                    claim.attempt,
                    kind,
                    reason,
                    params.max_attempts,
                    retry_at=ledger.iso_at(time.time() + wait) if wait > 0 else None,
                )
                fleet.end_attempt(
                    conn,
                    claim.game_id,
                    claim.attempt,
                    fleet.VOIDED if ok else fleet.STALE,
                    reason,
                    stall=kind == schema.VoidKind.HOST_STALL,
                )
                state = ledger.game_state(conn, claim.game_id)
            if not ok:
                return {"status": "stale", "detail": reason}
            if state == schema.GameState.QUEUED:
                return {"status": "requeued", "detail": reason, "retry_in": wait}
            return {"status": "failed", "detail": reason}

        return await trio.to_thread.run_sync(run)


def _blob(db: Database, sha: str) -> bytes | None:
    with db.read() as conn:
        return mailbox.get_blob(conn, sha)


def _published(db: Database) -> tuple[str | None, str | None]:
    with db.read() as conn:
        return fleet.get_meta(conn, fleet.SERVER_URL), fleet.get_meta(conn, fleet.WORKER_SECRET)


async def _play(request: dict[str, Any], sessions: SessionPool | None) -> dict[str, Any]:
    try:
        specs = load_specs(request["bots"])
    except Exception as e:  # a cached bot that no longer loads: the worker's fault
        reason = f"SandboxFault: cached bot does not load: {e}"
        return void(request.get("game_id"), Fault.SANDBOX, reason)
    return await play_one(specs, request, sessions=sessions)


class _Replies:
    """The slot's stdout, written by its request loop and its recorder: one line at a time."""

    def __init__(self, stdout: trio.lowlevel.FdStream) -> None:
        self.stdout = stdout
        self.lock = trio.Lock()

    async def send(self, reply: dict[str, Any]) -> None:
        async with self.lock:
            await self.stdout.send_all(encode(reply))


async def main() -> None:
    slot: Slot | None = None
    db: Database | None = None
    try:
        async with requests_on_stdin() as (nursery, incoming, stdout), incoming:
            # closed before the nursery ends: no kept bot process outlives the slot
            sessions = SessionPool(nursery)
            replies = _Replies(stdout)
            try:
                async with trio.open_nursery() as recording:
                    # capacity 0: a record is handed over only once the recorder is done with
                    # the previous one (at most one record in flight)
                    to_store, to_recorder = trio.open_memory_channel[tuple[dict, Recording]](0)
                    recording.start_soon(_recorder, to_recorder, replies)
                    async with to_store:
                        async for msg in incoming:
                            rid = msg.get("rid")
                            if msg["type"] == "init":
                                db = Database(msg["database"], pool_size=2)
                                cache = BotCache(
                                    Path(msg["cache"]),
                                    msg.get("server"),
                                    msg.get("secret"),
                                    Path(msg["shared"]) if msg.get("shared") else None,
                                    lookup=partial(_published, db),
                                    blobs=partial(_blob, db),
                                )
                                slot = Slot(db, cache, msg["worker"], sessions)
                                reply: dict[str, Any] = {"type": "ready"}
                            elif msg["type"] in ("play", "tplay") and slot is not None:
                                try:
                                    out = await _job(slot, msg)
                                except Exception as e:  # the database or the machine: retried
                                    traceback.print_exc(file=sys.stderr)
                                    out = {"status": "error", "detail": f"{type(e).__name__}: {e}"}
                                if isinstance(out, Recording):
                                    await to_store.send((msg, out))
                                    await replies.send({"type": "free", "rid": rid})
                                    continue
                                reply = {"type": "done", "game_id": msg["game_id"], **out}
                            else:
                                reply = {
                                    "type": "error",
                                    "message": f"unexpected {msg.get('type')!r}",
                                }
                            await replies.send({**reply, "rid": rid})
            finally:
                await sessions.aclose()
    finally:
        if db is not None:
            db.dispose()


async def _recorder(
    records: trio.MemoryReceiveChannel[tuple[dict, Recording]], replies: _Replies
) -> None:
    """Store the slot's records one at a time, each answered `done` once committed."""
    async with records:
        async for msg, recording in records:
            try:
                out = await recording.commit()
            except Exception as e:  # the database or the machine: the job is retried
                traceback.print_exc(file=sys.stderr)
                out = {"status": "error", "detail": f"{type(e).__name__}: {e}"}
            await replies.send(
                {"type": "done", "game_id": msg["game_id"], **out, "rid": msg.get("rid")}
            )


async def _job(slot: Slot, msg: dict[str, Any]) -> dict[str, Any] | Recording:
    if msg["type"] == "play":
        return await slot.play(msg["game_id"], PlayParams.from_dict(msg["params"]))
    return await slot.play_tournament(msg["run"], msg["game_id"], int(msg["attempt"]), msg["job"])


if __name__ == "__main__":
    trio.run(main)
