"""Plays a tournament: the schedule minus what the results file already holds.

Resuming is not a special mode: every run computes the missing games from the database and
plays those, so a run that was stopped with Ctrl-C, killed with SIGKILL or crashed with the
machine continues where the file says it stopped. A finished game is committed (result and
full record in one transaction) before it counts, and a game in play when the run stops is
simply not recorded, so no game is lost and none is played twice.

Concurrency is a fixed number of worker tasks pulling games from one channel in schedule
order; with `pin_cores` each worker's two bots share one core (only one of them thinks at a
time), so games do not steal each other's CPU.
"""

from __future__ import annotations

import dataclasses
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from arena.tournaments.config import ConfigError, TournamentConfig
from arena.tournaments.progress import Progress
from arena.tournaments.schedule import ScheduledGame, build_schedule, random_opening
from arena.tournaments.store import AsyncStore, GameRow, Store


@dataclass
class RunOutcome:
    """What one invocation of the runner did."""

    status: str  # complete, stopped, incomplete (some games unplayable)
    scheduled: int
    pending_at_start: int
    played: int = 0
    voided: int = 0
    unplayable: list[str] = field(default_factory=list)
    results: str = ""


def arena_faults() -> tuple[type[BaseException], ...]:
    """Exceptions that mean the arena failed, not a bot: the game is voided and replayed."""
    from arena.sandbox import SandboxFault

    faults: list[type[BaseException]] = [SandboxFault, OSError]
    try:
        from arena.referee import RefereeFault

        faults.append(RefereeFault)
    except ImportError:
        pass
    return tuple(faults)


def load_bot_specs(config: TournamentConfig) -> list[Any]:
    """Resolve every bot entry with the referee's manifest loader; names must be unique."""
    from arena.referee import load_bot

    specs = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(config.bots):
        spec = load_bot(entry.source)
        if entry.alias:
            spec = dataclasses.replace(spec, name=entry.alias)
        if spec.name in seen:
            raise ConfigError(
                f"{config.path or '<config>'}: key 'bots': bots[{seen[spec.name]}] and bots[{i}] "
                f"are both named {spec.name!r}; give one a distinct name "
                '(bots = [{ path = "...", name = "..." }])'
            )
        seen[spec.name] = i
        specs.append(spec)
    return specs


def _cores() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def row_from_record(sg: ScheduledGame, record: dict[str, Any], attempt: int) -> GameRow:
    """The report row of a just-finished game, without reading it back from the database."""
    res = record["result"]
    bots = sorted(record["bots"], key=lambda b: b["seat"])
    scores = list(res.get("scores") or [None, None])
    return GameRow(
        game_id=sg.game_id,
        seq=sg.seq,
        round=sg.round,
        game=sg.game,
        game_name=record["game"],
        pair=sg.pair,
        seat_order=sg.seat_order,
        bots=(bots[0]["name"], bots[1]["name"]),
        winner=res.get("winner"),
        result=res.get("result", ""),
        reason=res.get("reason", ""),
        detail=res.get("detail", ""),
        forfeit=bool(res.get("forfeit")),
        loser_seat=res.get("loser_seat"),
        scores=(scores[0], scores[1]),
        turns=record.get("turn_count"),
        duration=record.get("duration"),
        attempt=attempt,
    )


class _Run:
    """State shared by the worker tasks of one run."""

    def __init__(
        self,
        config: TournamentConfig,
        specs: list[Any],
        store: AsyncStore,
        run_id: int,
        progress: Progress,
        void_counts: dict[str, int],
        play_match: Callable[..., Awaitable[Any]] | None = None,
    ) -> None:
        from arena.referee import MatchConfig
        from arena.referee import play_match as referee_play_match

        self.config = config
        self.specs = specs
        self.store = store
        self.run_id = run_id
        self.progress = progress
        self.void_counts = void_counts
        self.games = {g.label: g for g in config.games}
        self.openings: dict[tuple[int, str, int], tuple[tuple[str, ...], ...]] = {}
        self.time_control = config.time_control.to_referee()
        self.faults = arena_faults()
        self.MatchConfig = MatchConfig
        self.play_match = play_match or referee_play_match
        self.played = 0
        self.voided = 0
        self.unplayable: list[str] = []

    async def opening(self, sg: ScheduledGame) -> tuple[tuple[str, ...], ...]:
        key = sg.pair_key
        if key not in self.openings:
            entry = self.games[sg.game]
            self.openings[key] = await trio.to_thread.run_sync(
                random_opening,
                entry,
                self.config.seed,
                sg.round,
                sg.pair,
                self.config.opening_turns,
            )
        return self.openings[key]

    async def worker(
        self, games: trio.MemoryReceiveChannel[ScheduledGame], core: int | None
    ) -> None:
        async for sg in games:
            await self.play(sg, core)

    async def play(self, sg: ScheduledGame, core: int | None) -> None:
        entry = self.games[sg.game]
        affinity = ((core,), (core,)) if core is not None else (None, None)
        opening = await self.opening(sg)
        for _ in range(self.config.max_attempts):
            attempt = self.void_counts.get(sg.game_id, 0) + 1
            match = self.MatchConfig(
                game=entry.name,
                options=dict(entry.options),
                bots=(self.specs[sg.bots[0]], self.specs[sg.bots[1]]),
                time_control=self.time_control,
                seed=sg.seed,
                match_id=f"{self.config.name}/{sg.game_id}",
                opening=opening,
                cpu_affinity=affinity,
                isolation=self.config.isolation,
            )
            self.progress.game_started(sg.game_id)
            try:
                record = await self.play_match(match)
            except self.faults as e:
                reason = f"{type(e).__name__}: {e}"
                self.void_counts[sg.game_id] = attempt
                self.voided += 1
                with trio.CancelScope(shield=True):
                    await self.store.call("record_void", sg.game_id, attempt, reason, self.run_id)
                self.progress.game_voided(sg.game_id, attempt, reason)
                continue
            data = record.to_dict() if hasattr(record, "to_dict") else dict(record)
            # shielded: once a game has finished, stopping the run must not lose it
            with trio.CancelScope(shield=True):
                await self.store.call(
                    "record_game",
                    game_id=sg.game_id,
                    seq=sg.seq,
                    round_=sg.round,
                    game=sg.game,
                    pair=sg.pair,
                    seat_order=sg.seat_order,
                    attempt=attempt,
                    run_id=self.run_id,
                    record=data,
                )
            self.played += 1
            self.progress.game_finished(row_from_record(sg, data, attempt))
            return
        self.unplayable.append(sg.game_id)
        self.progress.message(
            f"unplayable: {sg.game_id} voided {self.config.max_attempts} times in this run"
        )


async def run_tournament(
    config: TournamentConfig,
    *,
    progress: Progress | None = None,
    handle_signals: bool = False,
    stop: trio.Event | None = None,
    play_match: Callable[..., Awaitable[Any]] | None = None,
) -> RunOutcome:
    """Play every game of the schedule that the results file does not hold yet.

    With `handle_signals`, SIGINT and SIGTERM stop the run cleanly: games in play are
    abandoned (their bots killed, nothing recorded), finished ones are all committed, and the
    run is marked `stopped`; running again resumes. `stop` does the same from code.
    `play_match` replaces the referee's (tests inject arena-side faults with it).
    """
    progress = progress or Progress()
    specs = await trio.to_thread.run_sync(load_bot_specs, config)
    for spec in specs:  # build C bots etc. once, before any game needs them
        await trio.to_thread.run_sync(spec.ensure_built)
    names = [s.name for s in specs]

    def open_store() -> Store:
        store = Store(config.results, create=True)
        try:
            store.lock_for_writing()
            store.bind(config.fingerprint(names), config.to_dict(), names)
        except BaseException:
            store.close()
            raise
        return store

    store = await trio.to_thread.run_sync(open_store)
    astore = AsyncStore(store)
    try:
        schedule = build_schedule(config)
        recorded = await astore.call("recorded_ids")
        pending = [g for g in schedule if g.game_id not in recorded]
        void_counts = await astore.call("void_counts")
        rows = await astore.call("games")
        run_id = await astore.call("start_run", len(schedule), len(pending))
        outcome = RunOutcome("complete", len(schedule), len(pending), results=str(config.results))
        run = _Run(config, specs, astore, run_id, progress, void_counts, play_match)
        progress.start(len(schedule), rows, names, len(pending))
        status = "failed"
        try:
            stopped = await _play_all(run, pending, handle_signals, stop)
            outcome.played, outcome.voided = run.played, run.voided
            outcome.unplayable = list(run.unplayable)
            if stopped:
                status = "stopped"
            elif run.unplayable:
                status = "incomplete"
            else:
                status = "complete"
            outcome.status = status
        finally:
            progress.close()
            with trio.CancelScope(shield=True):
                await astore.call("finish_run", run_id, status)
        return outcome
    finally:
        await trio.to_thread.run_sync(store.close)


async def _play_all(
    run: _Run, pending: list[ScheduledGame], handle_signals: bool, stop: trio.Event | None
) -> bool:
    """Run the workers over the pending games; True if stopped before the end."""
    concurrency = max(1, min(run.config.concurrency, len(pending) or 1))
    cores = _cores() if run.config.pin_cores else []
    send, receive = trio.open_memory_channel[ScheduledGame](len(pending) or 1)
    for g in pending:
        send.send_nowait(g)
    send.close()
    stopped = False
    async with trio.open_nursery() as outer:
        scope = trio.CancelScope()

        async def watch_signals() -> None:
            nonlocal stopped
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    stopped = True
                    run.progress.message(
                        "stopping: games in play are abandoned; run again to resume"
                    )
                    scope.cancel()
                    return

        async def watch_event() -> None:
            nonlocal stopped
            assert stop is not None
            await stop.wait()
            stopped = True
            scope.cancel()

        if handle_signals:
            outer.start_soon(watch_signals)
        if stop is not None:
            outer.start_soon(watch_event)
        with scope:
            async with trio.open_nursery() as workers:
                for k in range(concurrency):
                    core = cores[k % len(cores)] if cores else None
                    workers.start_soon(run.worker, receive.clone(), core)
                receive.close()
        outer.cancel_scope.cancel()
    return stopped
