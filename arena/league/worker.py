"""`arena league worker`: plays a league's games on any machine that can reach its database.

Two runtimes, each where it belongs. The outer loop is procrastinate's worker, which is asyncio:
it takes jobs from PostgreSQL (`FOR UPDATE SKIP LOCKED`), beats the worker's heart, and puts the
jobs of workers that stopped beating back in the queue. It plays nothing itself: each job goes
to a slot process (arena/league/slot.py), where claiming, fetching the bots, the game and the
recording run under trio like every other game of the arena. So the asyncio side is plumbing
(no arena logic, no game state), a referee crash costs one slot process, and the only threads
are `asyncio.to_thread` around the blocking database calls of the heartbeat, as trio's
`to_thread` elsewhere.

Faults, told apart:
- a bot's failure is inside the game record: rated, recorded like any result;
- a slot process dies, or its job errors (database unreachable): the job is retried after
  `retry_wait` seconds, possibly elsewhere; the retry finds the game `running` and voids that
  attempt as `worker_lost` before replaying it, so a worker's failure is never rated;
- the worker dies (SIGKILL, power, network): its procrastinate heartbeat stops; after
  `stalled_after` seconds any live worker's sweep retries its jobs (same path as above);
  if the lost attempt's result ever arrives it updates zero rows and is dropped;
- at start a worker removes what a dead predecessor on this machine left: bot cgroups and
  scratch directories of dead referee processes, their Docker containers, half-fetched bots.

SIGINT/SIGTERM stop taking jobs and let the games in play finish for up to `grace` seconds;
then they are abandoned and their jobs retried elsewhere.

A worker that cannot fetch bots from the server (down, unreachable, failing, or refusing the
worker secret) is not a game's fault: the job that found out gives its game back unclaimed and
is retried after `retry_wait` seconds, by whichever worker takes it; this worker logs why, shows
`offline` (and why) in the workers table, stops taking jobs (the games in play finish), looks
for the server every few seconds, and takes jobs again once it answers.

A worker whose games keep being voided as host stalls (its machine makes replies late; see
arena/league/db/fleet.py) is told so by its heartbeat and plays fewer games at once while it is
degraded: a job one of its other slots takes goes straight back to the queue (`Deferred`,
retried after `retry_wait`, by whichever worker takes it first), before the game is claimed,
so nothing is voided or counted.

A slot takes its next game while the last one's record is committed (arena/league/slot.py:
it answers `free`, then `done`): so the worker runs up to two jobs per slot, one playing and
one whose record is being stored (or waiting for a slot), and its job completes with the
`done`, after the commit, as before. The next job is then fetched while a game plays, not
after it. The slots bound the games in play (`SlotPool`); the jobs fetched beyond them wait
unclaimed (their games stay queued: a worker that dies with them loses no attempt, and its
stalled jobs are retried elsewhere).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import procrastinate
from procrastinate import exceptions as pq_exceptions

from arena.errors import ArenaError
from arena.league import queue, tourjobs
from arena.league.db import fleet
from arena.league.db.database import Database
from arena.oversubscription import check_concurrency

_ROOT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class WorkerConfig:
    database: str
    concurrency: int = 1
    name: str | None = None
    server: str | None = None  # default: the URL the server published in the database
    shared: Path | None = None  # a BlobStore directory to read archives from first
    cache: Path = Path("~/.cache/arena-worker")
    heartbeat: float = 5.0  # seconds between heartbeats
    stalled_after: float = 30.0  # a worker silent this long has lost its jobs
    retry_wait: float = 1.0  # seconds before a failed job is tried again
    grace: float = 30.0  # seconds games in play may finish after SIGTERM
    unsafe: bool = False  # play even if this machine cannot confine bots
    force: bool = False  # play a concurrency above this machine's CPUs (oversubscription)

    def worker_name(self) -> str:
        return self.name or f"{socket.gethostname()}-{os.getpid()}"


class Replay(Exception):
    """The game was voided and requeued: have procrastinate run the job again, once the game's
    backoff is over (`retry_in` seconds; arena/league/backoff.py)."""

    def __init__(self, message: str, retry_in: float = 0.0) -> None:
        super().__init__(message)
        self.retry_in = retry_in


class JobRetry(procrastinate.BaseRetryStrategy):
    """Retry a job that raised one of `exceptions` after `wait` seconds, or after its own
    `retry_in` when it names a longer wait (a voided game's backoff); never give up (the game
    row counts the attempts and fails the game after max_attempts)."""

    def __init__(self, exceptions: tuple[type[BaseException], ...], wait: float) -> None:
        self.exceptions = exceptions
        self.wait = wait

    def get_retry_decision(self, *, exception: BaseException, job: Any) -> Any:
        if not isinstance(exception, self.exceptions):
            return None
        wait = max(self.wait, float(getattr(exception, "retry_in", 0.0)))
        return procrastinate.RetryDecision(retry_in={"seconds": wait})


class Offline(Exception):
    """The slot could not fetch the bots from the server: the job goes back to the queue
    untouched (no attempt was claimed) and this worker stops taking jobs."""


@dataclass
class Availability:
    """Whether this worker can fetch bots: set by a job that could not, cleared when the
    server answers again; read by the heartbeat (the worker's state in the database)."""

    offline: asyncio.Event = field(default_factory=asyncio.Event)
    reason: str = ""
    server: str | None = None

    @property
    def state(self) -> str:
        return fleet.OFFLINE if self.offline.is_set() else fleet.RUNNING


class SlotLost(Exception):
    """The slot process died or failed mid-job: the retry voids its attempt and replays."""


class Deferred(Exception):
    """A degraded worker took a job beyond the games it plays at once: back to the queue."""


@dataclass
class Gate:
    """How many games this worker plays at once: all its slots, or fewer while its heartbeat
    says it is degraded (`fleet.degraded_slots`). One asyncio loop: no lock needed."""

    concurrency: int
    degraded: bool = False
    playing: int = 0

    @property
    def limit(self) -> int:
        return fleet.degraded_slots(self.concurrency) if self.degraded else self.concurrency

    @contextlib.contextmanager
    def game(self, what: str) -> Iterator[None]:
        if self.playing >= self.limit:
            raise Deferred(f"{what}: degraded, this worker plays {self.limit} game(s) at once")
        self.playing += 1
        try:
            yield
        finally:
            self.playing -= 1


@dataclass
class _Request:
    """A request sent to a slot: `free` is set when the slot takes its next request (the game
    is over, its record is being stored; or the reply came), `reply` is the request's reply."""

    free: asyncio.Future[None]
    reply: asyncio.Future[dict[str, Any]]


class SlotProcess:
    """One slot process (arena/league/slot.py) and its JSON Lines pipe, on asyncio: requests
    numbered (`rid`), their replies read by a task of its own and matched by number."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.rids = itertools.count()
        self.waiting: dict[int, _Request] = {}
        #: why the slot can take no more requests (its pipe failed, it ended), once it is so
        self.lost: SlotLost | None = None
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, init: dict[str, Any]) -> SlotProcess:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
        env["ARENA_LEAGUE_WORKER"] = init["worker"]  # names the slot's processes in ps/proc
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "arena.league.slot",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,  # Ctrl-C reaches the worker only; it closes the slots
            env=env,
            limit=1 << 26,
        )
        slot = cls(proc)
        try:
            reply = await slot.request(init)
        except BaseException:
            await asyncio.shield(slot.close())
            raise
        if reply.get("type") != "ready":
            await slot.close()
            raise SlotLost(f"slot process did not start: {reply}")
        return slot

    async def submit(self, msg: dict[str, Any]) -> _Request:
        """Send a request; its `_Request` says when the slot is free again and its reply."""
        assert self.proc.stdin is not None
        if self.lost is not None:
            raise self.lost
        loop = asyncio.get_running_loop()
        rid = next(self.rids)
        request = _Request(loop.create_future(), loop.create_future())
        self.waiting[rid] = request
        try:
            self.proc.stdin.write(
                json.dumps({**msg, "rid": rid}, separators=(",", ":")).encode() + b"\n"
            )
            await self.proc.stdin.drain()
        except (OSError, ValueError) as e:
            self.waiting.pop(rid, None)
            raise SlotLost(f"slot process pipe failed: {e}") from None
        return request

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        return await (await self.submit(msg)).reply

    async def _read(self) -> None:
        """Match the slot's replies with their requests until its pipe ends; then every
        request still waiting fails with SlotLost."""
        assert self.proc.stdout is not None
        try:
            while True:
                try:
                    line = await self.proc.stdout.readline()
                except (OSError, ValueError) as e:
                    raise SlotLost(f"slot process pipe failed: {e}") from None
                if not line:
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self.proc.wait(), 2)
                    raise SlotLost(f"slot process ended (exit status {self.proc.returncode})")
                try:
                    reply = json.loads(line)
                    request = self.waiting[reply["rid"]]
                except (ValueError, TypeError, KeyError):
                    raise SlotLost(f"slot process sent garbage: {line[:200]!r}") from None
                if not request.free.done():
                    request.free.set_result(None)
                if reply.get("type") != "free":
                    del self.waiting[reply["rid"]]
                    request.reply.set_result(reply)
        except SlotLost as e:
            self._fail(e)
        except BaseException:
            self._fail(SlotLost("slot process closed"))
            raise

    def _fail(self, lost: SlotLost) -> None:
        self.lost = lost
        for request in self.waiting.values():
            for fut in (request.free, request.reply):
                if not fut.done():
                    fut.set_exception(lost)
                    fut.exception()  # retrieved: a request abandoned meanwhile logs nothing
        self.waiting.clear()

    async def close(self) -> None:
        """Close the pipe (the slot abandons its game, kills its bots, exits), then reap."""
        if self.proc.stdin is not None:
            with contextlib.suppress(Exception):
                self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except (TimeoutError, asyncio.CancelledError):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()
        with contextlib.suppress(BaseException):
            await self.reader


class SlotPool:
    """At most `size` slot processes, started on demand and replaced when one dies; at most
    `size` games in play. A slot is given its next game once the last one is over (`free`),
    while that game's record is stored."""

    def __init__(self, size: int, init: dict[str, Any]) -> None:
        self.init = init
        self.idle: list[SlotProcess] = []
        self.busy: set[SlotProcess] = set()
        self.free = asyncio.Semaphore(size)

    async def request(
        self,
        msg: dict[str, Any],
        admit: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> dict[str, Any]:
        """Play `msg` on a free slot; its reply (`done`), which comes once its record is
        committed. `admit` is entered once a slot is free and left when the game is over (the
        worker's `Gate`: it may refuse the game)."""
        async with self.free:
            with admit():
                slot = await self._take()
                self.busy.add(slot)
                try:
                    request = await slot.submit(msg)
                    await request.free
                except BaseException:
                    self.busy.discard(slot)
                    await asyncio.shield(slot.close())
                    raise
                self.busy.discard(slot)
                if slot.lost is None:
                    self.idle.append(slot)  # its next game, while this one's record is stored
        return await request.reply

    async def _take(self) -> SlotProcess:
        while self.idle:
            slot = self.idle.pop()
            if slot.lost is None:
                return slot
            await asyncio.shield(slot.close())  # died while idle (its jobs got SlotLost)
        return await SlotProcess.start(self.init)

    async def close(self) -> None:
        slots = [*self.idle, *self.busy]
        self.idle.clear()
        self.busy.clear()
        await asyncio.gather(*(s.close() for s in slots), return_exceptions=True)


def sweep_leftovers(cache: Path) -> list[str]:
    """Remove what dead arena processes of this machine left; a line per kind removed."""
    from arena.league.botcache import BotCache
    from arena.sandbox import cgroups, docker, hostres

    done = []
    n = cgroups.sweep_stale(cgroups.CgroupSystem.detect())
    n += hostres.sweep_stale_scratch(Path(os.environ.get("TMPDIR", "/tmp")))
    if n:
        done.append(f"{n} bot cgroup(s) or scratch dir(s)")
    if docker.docker_available() is None:
        client = docker._client()
        try:
            if m := docker.sweep_stale(client):
                done.append(f"{m} bot container(s)")
        finally:
            client.close()
    if k := BotCache(cache, None, None).sweep():
        done.append(f"{k} half-fetched bot(s)")
    return done


def _log(message: str) -> None:
    print(f"arena league worker: {message}", file=sys.stderr, flush=True)


def run(config: WorkerConfig) -> int:
    """Run the worker until SIGINT/SIGTERM (blocking)."""
    if not queue.is_postgres(config.database):
        raise ArenaError("a league worker needs the league's PostgreSQL database (--database)")
    if config.worker_name() == fleet.SERVER_SLOTS:
        raise ArenaError(f"--name: {fleet.SERVER_SLOTS!r} names the server's own game slots")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    asyncio.run(_main(config))
    return 0


def _prepare(config: WorkerConfig, name: str) -> dict[str, Any]:
    """Blocking start-up: check the database, register, read what the server published."""
    from arena.league.confinement import confinement_problem

    db = Database(config.database, pool_size=1)
    try:
        queue.require_ready(db.engine, "on the server")
        with db.write() as conn:
            secret = fleet.worker_secret(conn)
            server = config.server or fleet.get_meta(conn, fleet.SERVER_URL)
            isolation = fleet.get_meta(conn, "isolation") or "process"
            insist = config.force or fleet.get_meta(conn, fleet.OVERSUBSCRIBE) == "true"
        check_concurrency(
            config.concurrency,
            insist=insist,
            way_out="pass --force (or set oversubscribe = true in the league's league.toml)",
        )
        problem = confinement_problem(isolation)
        if problem and not config.unsafe:
            raise ArenaError(f"{problem}; refusing to play (--unsafe plays anyway)")
        with db.write() as conn:
            fleet.register(conn, name, socket.gethostname(), os.getpid(), config.concurrency)
    finally:
        db.dispose()
    return {
        "type": "init",
        "database": config.database,
        "server": server,
        "secret": secret,
        "cache": str(config.cache.expanduser()),
        "shared": str(config.shared) if config.shared else None,
        "worker": name,
    }


def _taken_over(exc: BaseException | None) -> str | None:
    """The job id, if `exc` is procrastinate failing to save the status of a job that is no
    longer this worker's: it stalled (frozen, cut off), the job was retried on another worker
    and finished there, and the result this worker sent late was refused as stale. Expected
    after a partition; not a fault of this worker's now."""
    cause = getattr(exc, "__cause__", None)
    if not isinstance(exc, pq_exceptions.ConnectorException) or cause is None:
        return None
    m = re.search(
        r'Job was not found or not in "doing" or "todo" status \(job id: (\d+)\)', str(cause)
    )
    return m.group(1) if m else None


def _forgotten(exc: BaseException) -> bool:
    """Is `exc` procrastinate unable to take a job because this worker's registration is
    gone? Live workers prune a worker whose heartbeat stopped for `stalled_after` (it was
    frozen or cut off, and its jobs were retried elsewhere): when it comes back, it has to
    register again to go on."""
    return "procrastinate_jobs_worker_id_fkey" in str(getattr(exc, "__cause__", None))


def _loop_errors(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """One line for a job taken over by another worker (see `_taken_over`), where asyncio would
    print procrastinate's traceback; anything else as asyncio does."""
    job = _taken_over(context.get("exception"))
    if job is None:
        loop.default_exception_handler(context)
        return
    _log(
        f"job {job}: its status was not saved here: after this worker stalled it was retried"
        " and finished elsewhere"
    )


async def _main(config: WorkerConfig) -> None:
    asyncio.get_running_loop().set_exception_handler(_loop_errors)
    name = config.worker_name()
    gate = Gate(config.concurrency)
    swept = await asyncio.to_thread(sweep_leftovers, config.cache.expanduser())
    if swept:
        _log("removed leftovers of a dead worker: " + ", ".join(swept))
    init = await asyncio.to_thread(_prepare, config, name)
    pool = SlotPool(config.concurrency, init)
    available = Availability()
    db = Database(config.database, pool_size=1)
    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(
            conninfo=queue.conninfo(config.database),
            kwargs={"options": queue.ASYNC_COMMIT_OPTIONS},
        )
    )

    @app.task(
        name=queue.TASK,
        queue=queue.QUEUE,
        pass_context=True,
        retry=JobRetry((Replay, SlotLost, Offline, Deferred), max(0.0, config.retry_wait)),
    )
    async def play_game(context: Any, game_id: int, params: dict[str, Any]) -> None:
        reply = await pool.request(
            {"type": "play", "game_id": game_id, "params": params},
            lambda: gate.game(f"game {game_id}"),
        )
        status = reply.get("status")
        if status == "offline":
            if not available.offline.is_set():
                available.reason = str(reply.get("detail"))
                available.server = reply.get("server") or init["server"]
                available.offline.set()
            raise Offline(f"game {game_id}: {reply.get('detail')}")
        if status == "requeued":
            raise Replay(f"game {game_id}: {reply.get('detail')}", float(reply.get("retry_in", 0)))
        if status == "error":
            raise SlotLost(f"game {game_id}: {reply.get('detail')}")
        if status == "stale":
            _log(f"game {game_id}: result of a stale attempt dropped ({reply.get('detail')})")

    @app.task(
        name=tourjobs.TASK,
        queue=queue.QUEUE,
        retry=procrastinate.RetryStrategy(
            retry_exceptions={SlotLost, Deferred}, wait=int(max(0, config.retry_wait))
        ),
    )
    async def play_tournament_game(run: str, game_id: str, attempt: int, job: dict) -> None:
        """One attempt of a local tournament's game (arena/league/tourjobs.py)."""
        msg = {"type": "tplay", "run": run, "game_id": game_id, "attempt": attempt, "job": job}
        reply = await pool.request(msg, lambda: gate.game(f"tournament game {game_id}"))
        if reply.get("status") == "error":
            raise SlotLost(f"tournament game {game_id}: {reply.get('detail')}")
        if reply.get("status") == "stale":
            _log(f"tournament game {game_id}: outcome dropped ({reply.get('detail')})")

    _log(f"{name} started: {config.concurrency} slot(s), server {init['server'] or '(none)'}")
    try:
        async with app.open_async():
            tasks = [
                asyncio.create_task(_heartbeats(db, name, config.heartbeat, available, gate)),
                asyncio.create_task(_sweep_stalled(app, config)),
            ]
            try:
                while True:
                    taking = asyncio.create_task(
                        app.run_worker_async(
                            queues=[queue.QUEUE],
                            name=name,
                            # a job per slot playing, and one whose record is stored
                            # or that waits for a slot (SlotPool bounds the games in play)
                            concurrency=2 * config.concurrency,
                            update_heartbeat_interval=config.heartbeat,
                            stalled_worker_timeout=config.stalled_after,
                            shutdown_graceful_timeout=config.grace,
                            delete_jobs="successful",
                            install_signal_handlers=True,
                        )
                    )
                    went = asyncio.create_task(available.offline.wait())
                    await asyncio.wait({taking, went}, return_when=asyncio.FIRST_COMPLETED)
                    went.cancel()
                    if not taking.done():
                        # a job could not fetch its bots: stop taking jobs (the games in play
                        # finish, for up to --grace s), wait for the server, then take again
                        if not await _offline(taking, available, db, name, config):
                            break
                        continue
                    try:
                        taking.result()
                        break
                    except pq_exceptions.ConnectorException as e:
                        if not _forgotten(e):
                            raise
                        _log(
                            "the queue took this worker for dead while it stalled (frozen or"
                            " cut off for longer than --stalled-after); registered again"
                        )
            finally:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await pool.close()
        with contextlib.suppress(Exception):
            await asyncio.to_thread(_stopped, db, name)
        db.dispose()
        _log(f"{name} stopped")


#: seconds between two looks at an unreachable server
PROBE_EVERY = 2.0


async def _offline(
    taking: asyncio.Task[Any],
    available: Availability,
    db: Database,
    name: str,
    config: WorkerConfig,
) -> bool:
    """Stop taking jobs until the server answers; False if SIGINT/SIGTERM came meanwhile."""
    where = available.server or "(no server published)"
    _log(
        f"cannot fetch bots from the server {where}: {available.reason}; taking no jobs until "
        "it answers"
    )
    with contextlib.suppress(Exception):
        await asyncio.to_thread(_set_offline, db, name, available.reason)
    taking.cancel()  # procrastinate stops fetching jobs and lets the games in play finish
    with contextlib.suppress(asyncio.CancelledError):
        await taking
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        while not stop.is_set():
            server = available.server or await asyncio.to_thread(_published_server, db)
            if server and await _answers(server):
                available.server = server
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), min(PROBE_EVERY, config.heartbeat * 4))
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    if stop.is_set():
        return False
    _log(f"the server {available.server} answers again; taking jobs again")
    available.offline.clear()
    with contextlib.suppress(Exception):
        await asyncio.to_thread(_beat, db, name, fleet.RUNNING)
    return True


async def _answers(server: str) -> bool:
    """Does the league's server answer (any status below 500)?"""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=5.0) as client:
            r = await client.get(f"{server.rstrip('/')}/api/v1")
    except httpx.HTTPError:
        return False
    return r.status_code < 500


def _published_server(db: Database) -> str | None:
    with db.read() as conn:
        return fleet.get_meta(conn, fleet.SERVER_URL)


def _set_offline(db: Database, name: str, reason: str) -> None:
    with db.write() as conn:
        fleet.set_offline(conn, name, reason)


def _beat(db: Database, name: str, state: str) -> bool:
    """Beat; whether the worker is degraded."""
    with db.write() as conn:
        return fleet.heartbeat(conn, name, state)


def _stopped(db: Database, name: str) -> None:
    with db.write() as conn:
        fleet.stopped(conn, name)


async def _heartbeats(
    db: Database, name: str, every: float, available: Availability, gate: Gate
) -> None:
    while True:
        try:
            degraded = await asyncio.to_thread(_beat, db, name, available.state)
        except Exception as e:  # the database is away: keep trying, the games go on
            _log(f"heartbeat failed: {str(e).splitlines()[0]}")
        else:
            if degraded != gate.degraded:
                gate.degraded = degraded
                _log(
                    f"degraded: host stalls in {fleet.DEGRADED_RATE:.0%} or more of its last "
                    f"games; playing at most {gate.limit} game(s) at once"
                    if degraded
                    else f"no longer degraded: playing up to {gate.limit} game(s) at once"
                )
        await asyncio.sleep(every)


async def _sweep_stalled(app: procrastinate.App, config: WorkerConfig) -> None:
    """Put back in the queue the jobs of workers silent for `stalled_after` seconds. Every live
    worker sweeps; two sweeping the same job is harmless (the second retry is refused)."""
    while True:
        try:
            stalled = await app.job_manager.get_stalled_jobs(
                queue=queue.QUEUE, seconds_since_heartbeat=config.stalled_after
            )
            for job in stalled:
                with contextlib.suppress(pq_exceptions.ConnectorException):
                    await app.job_manager.retry_job(job)
                    _log(
                        f"job {job.id} (game {job.task_kwargs.get('game_id')}) was stalled: retried"
                    )
        except pq_exceptions.ConnectorException as e:
            _log(f"stalled-job sweep failed: {e}")
        await asyncio.sleep(config.heartbeat)
