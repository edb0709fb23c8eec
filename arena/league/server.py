"""`arena league serve`: the HTTP API, the scheduler and the executor in one trio nursery.

Lifecycle. At start, attempts left `running` by a previous server (killed, even by SIGKILL) are
voided and requeued: their games are played again and nothing recorded is touched. Then
Hypercorn's trio worker serves the app, the executor pulls games from the scheduler, and the
official ratings are refitted periodically. SIGINT/SIGTERM (or `stop`) cancel everything: games
in play are abandoned (their bots killed by the worker processes) and voided as
`server_stopped`, which never counts against a game's attempts; commits already started finish
(they run in threads trio does not abandon), so nothing is lost either way.

With a remote executor (`--no-local-games`, executors/remote.py) the games in flight belong to
the workers: the server neither voids them when it stops nor when it starts again, and the
workers go on recording while it is away.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from functools import partial

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve

from arena.league.db import fleet, ledger, schema
from arena.league.db.database import Database
from arena.league.executors.base import Executor
from arena.league.executors.inprocess import InProcessExecutor
from arena.league.migrations import check_current
from arena.league.scheduler import Scheduler
from arena.league.service import League
from arena.league.settings import SETTINGS_NAME, LeagueSettings
from arena.league.web.app import create_app
from arena.league.web.bodies import bounded_bodies
from arena.oversubscription import check_concurrency

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]

#: seconds between heartbeats of the server's own game slots (`fleet.SERVER_SLOTS`)
HEARTBEAT = 5.0


def hypercorn_config(host: str, port: int) -> HypercornConfig:
    config = HypercornConfig()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.graceful_timeout = 2.0
    return config


def quiet_closing_races(app: ASGIApp) -> ASGIApp:
    """The app, minus one false alarm of Hypercorn's trio server.

    When Hypercorn closes a connection (it ends every keep-alive connection after
    `keep_alive_max_requests` responses with `connection: close`, and a client that sends its
    next request before the last response is complete makes h11 raise "Got data when expected
    EOF"), its close sends EOF on the socket from the connection's reading task while the
    response's last write is under way in the app's task: that write then fails with
    `trio.BusyResourceError`, which Hypercorn logs as an "Error in ASGI Framework" with a
    traceback (see pgjones/hypercorn#203 and #227). Nothing of ours failed and the client is
    gone, so the rest of that response is dropped quietly. Broken or closed sockets are
    already handled by Hypercorn itself."""

    async def wrapped(scope: dict, receive: Callable, send: Callable) -> None:
        gone = False

        async def guarded(message: dict) -> None:
            nonlocal gone
            if gone:
                return
            try:
                await send(message)
            except trio.BusyResourceError:
                gone = True

        await app(scope, receive, guarded if scope.get("type") == "http" else send)

    return wrapped


async def serve(
    settings: LeagueSettings,
    *,
    unsafe: bool = False,
    handle_signals: bool = True,
    stop: trio.Event | None = None,
    on_ready: Callable[[list[str]], None] | None = None,
    executor: Executor | None = None,
) -> None:
    """Run the league until a signal or `stop`; `on_ready` gets the bound URLs."""
    db = Database(settings.database_url)
    try:
        await trio.to_thread.run_sync(check_current, db.engine)
        league = League(settings, db)
        executor = executor or InProcessExecutor(settings.concurrency, live=league.live)
        if executor.plays_here:
            check_concurrency(
                settings.concurrency,
                insist=settings.oversubscribe,
                way_out=f"set oversubscribe = true in {settings.root / SETTINGS_NAME}",
            )
        league.live.local = executor.plays_here
        if executor.plays_here:
            await trio.to_thread.run_sync(_recover, league)
        scheduler = Scheduler(db, settings)
        if executor.plays_here:  # the server's slots count their games as a worker does
            scheduler.slots_worker = fleet.SERVER_SLOTS
        token = trio.lowlevel.current_trio_token()
        league.on_activated = lambda: token.run_sync_soon(scheduler.wake)
        scheduler.on_recorded = league.recorded
        app = create_app(league)
        try:
            async with trio.open_nursery() as nursery:
                binds = await nursery.start(
                    partial(
                        hypercorn_serve,
                        quiet_closing_races(bounded_bodies(app)),
                        hypercorn_config(settings.host, settings.port),
                        mode="asgi",
                    )
                )
                executor.serving(binds)
                await nursery.start(executor.run, scheduler)
                nursery.start_soon(_refit_official, league)
                nursery.start_soon(_advance_finals, league, scheduler)
                if executor.plays_here:
                    nursery.start_soon(_heartbeats, league)
                nursery.start_soon(league.run_validations)
                if on_ready is not None:
                    on_ready(binds)
                if handle_signals:
                    nursery.start_soon(_watch_signals, nursery.cancel_scope, executor.plays_here)
                if stop is not None:
                    await stop.wait()
                    nursery.cancel_scope.cancel()
        finally:
            if executor.plays_here:
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(
                        _void_in_flight,
                        league,
                        schema.VoidKind.SERVER_STOPPED,
                        "the server stopped",
                    )
                    await trio.to_thread.run_sync(_slots_stopped, league)
    finally:
        db.dispose()


def _recover(league: League) -> None:
    n = _void_in_flight(league, schema.VoidKind.SERVER_STOPPED, "the server was killed")
    if n:
        print(f"arena league: replaying {n} game(s) in flight at the last stop", file=sys.stderr)
    with league.db.write() as conn:  # the server's own slots, in the fleet (their stalls)
        fleet.register(
            conn, fleet.SERVER_SLOTS, socket.gethostname(), os.getpid(), league.settings.concurrency
        )


async def _heartbeats(league: League) -> None:
    """The server's slots beat like a worker, so the fleet shows them running."""
    while True:
        await trio.sleep(HEARTBEAT)
        await trio.to_thread.run_sync(_beat, league)


def _beat(league: League) -> None:
    with league.db.write() as conn:
        fleet.heartbeat(conn, fleet.SERVER_SLOTS)


def _slots_stopped(league: League) -> None:
    with league.db.write() as conn:
        fleet.stopped(conn, fleet.SERVER_SLOTS)


def _void_in_flight(league: League, kind: schema.VoidKind, reason: str) -> int:
    with league.db.write() as conn:
        return ledger.void_running(conn, kind, reason, league.settings.max_attempts)


async def _watch_signals(scope: trio.CancelScope, plays_here: bool = True) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            what = "games in play will be replayed" if plays_here else "workers play on"
            print(f"arena league: stopping; {what}", file=sys.stderr)
            scope.cancel()
            return


async def _refit_official(league: League) -> None:
    while True:
        await trio.to_thread.run_sync(league.refit_official_sync)
        await trio.sleep(league.settings.official_every)


#: seconds between looks at the running finals (arena/league/db/finals.py)
FINALS_EVERY = 1.0


async def _advance_finals(league: League, scheduler: Scheduler) -> None:
    """Queue each running final's next games as its recorded games allow (its next round, a
    tie-break pair, a game that failed for good), and finish it once it has a champion."""
    while True:
        if await trio.to_thread.run_sync(league.advance_finals_sync):
            scheduler.wake()
        await trio.sleep(FINALS_EVERY)
