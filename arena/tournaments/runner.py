"""Plays a tournament: the schedule minus what the results file already holds.

Resuming is not a special mode: every run computes the missing games from the database and
plays those, so a run that was stopped with Ctrl-C, killed with SIGKILL or crashed with the
machine continues where the file says it stopped. A finished game is committed (result and
full record in one transaction) before it counts, and a game in play when the run stops is
simply not recorded, so no game is lost and none is played twice.

Concurrency is a fixed number of slots pulling games from one channel in schedule order. Each
slot plays its games through a player (arena/workers/players.py): by default a referee worker
process of its own (arena/workers/child.py), so the Python referees of concurrent games run on
different cores instead of sharing one interpreter; this process only schedules, commits and
displays. With `pin_cores` a slot's worker and both its bots share one core (only one of them
works at a time), so games do not steal each other's CPU. A slot sends its worker the next game
while the current one plays (`PLAY_AHEAD`), so no round trip through this process stands
between two games of a slot. A worker that dies voids its game, which is played again. Played
elsewhere (`database`: the league's workers), every slot shares the player the caller hands in
(`play_elsewhere`; cli/tournament.py passes the league's queue), so the runner knows nothing
of the league.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import math
import os
import signal
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import trio

from arena.errors import ArenaError
from arena.oversubscription import check_concurrency
from arena.referee.bots import BotError, resolve_bot
from arena.referee.outcome import result_fields
from arena.referee.preflight import check_startable
from arena.sandbox import SandboxFault
from arena.tournaments.config import ConfigError, TournamentConfig
from arena.tournaments.formats import format_of
from arena.tournaments.openings import pick
from arena.tournaments.progress import Progress
from arena.tournaments.schedule import (
    ScheduledGame,
    build_schedule,
    game_id,
    knockout_games,
    knockout_state,
    random_opening,
)
from arena.tournaments.sprt import SprtState
from arena.tournaments.stopping import SprtRule
from arena.tournaments.store import AsyncStore, FinishedGame, GameRow, Store, StoreError
from arena.workers.players import InlinePlayer, Player, ProcessPlayer
from arena.workers.prelaunch import Prelaunched, slot_cores
from arena.workers.process import WorkerDied, WorkerProcess
from arena.workers.wire import void_of

#: games a slot keeps sent to its worker process: the one in play and the next
PLAY_AHEAD = 2
#: seconds a finished game waits for others to share its commit, when others are coming: the
#: previous game finished less than this before it (a group commit: a commit costs a trip to a
#: thread and back, about as much CPU here as the rest of a short game's handling, and at
#: hundreds of games a second the runner's CPU bounds what a second slot gains). A game with
#: no other finished lately is committed at once: its result is stored within a couple of
#: milliseconds of its last turn (benchmarks/versus.py; this window made it 8 ms for every
#: game, 363 turns or 4)
COMMIT_WINDOW = 0.005
#: games in one commit at most (the commit then starts without waiting out the window)
COMMIT_MAX = 64

#: opens the player every slot shares when the games are played elsewhere, given the config,
#: the bots' specs and their entries (`BotEntry.to_dict()`): the league's queue,
#: arena/league/tourjobs.py `queue_player`, for a config with a `database`
PlayElsewhere = Callable[
    [TournamentConfig, list[Any], list[dict[str, Any]]], AbstractAsyncContextManager[Player]
]


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
    sprt: SprtState | None = None  # the test's state at the end, with an [sprt] rule
    #: bots that could not start (with `drop_broken`): name -> why; their games were skipped
    dropped: dict[str, str] = field(default_factory=dict)
    skipped: int = 0  # pending games not played because a bot was dropped


def load_bot_specs(config: TournamentConfig) -> list[Any]:
    """Resolve every bot entry with the referee's manifest loader; names must be unique."""
    specs = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(config.bots):
        spec = resolve_bot(entry.to_dict())
        if spec.name in seen:
            raise ConfigError(
                f"{config.path or '<config>'}: key 'bots': bots[{seen[spec.name]}] and bots[{i}] "
                f"are both named {spec.name!r}; give one a distinct name "
                '(bots = [{ path = "...", name = "..." }])'
            )
        seen[spec.name] = i
        specs.append(spec)
    return specs


def row_from_record(sg: ScheduledGame, record: Mapping[str, Any], attempt: int) -> GameRow:
    """The report row of a just-finished game, without reading it back from the database (the
    same reading of its result as the row committed: `result_fields`)."""
    res = result_fields(record)
    bots = sorted(record["bots"], key=lambda b: b["seat"])
    return GameRow(
        game_id=sg.game_id,
        seq=sg.seq,
        round=sg.round,
        game=sg.game,
        game_name=record["game"],
        pair=sg.pair,
        seat_order=sg.seat_order,
        bots=(bots[0]["name"], bots[1]["name"]),
        winner=res.winner,
        result=res.result,
        reason=res.reason,
        detail=res.detail,
        forfeit=res.forfeit,
        loser_seat=res.loser_seat,
        scores=res.scores,
        turns=res.turns,
        duration=res.duration,
        attempt=attempt,
    )


class _Run:
    """State shared by the slots of one run.

    Games are played in referee worker processes (one per concurrent game) unless a
    `play_match` is injected, in which case they are played in this process (tests use that to
    inject arena-side faults), or `shared` is set: the player of games played elsewhere.
    """

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
        self.config = config
        self.specs = specs
        self.store = store
        self.run_id = run_id
        self.progress = progress
        self.void_counts = void_counts
        self.games = {g.label: g for g in config.games}
        self.game_names = worker_games(config)
        self.openings: dict[tuple[int, str, int], tuple[tuple[str, ...], ...]] = {}
        self.play_match = play_match
        self.bots_payload = worker_bots(config)
        self._time_control = config.time_control.to_dict()
        self._limits = dataclasses.asdict(config.limits)
        self._seat_time_controls = [
            b.time_control.to_dict() if b.time_control else None for b in config.bots
        ]
        self._bot_options = [dict(b.options) or None for b in config.bots]
        self.played = 0
        self.voided = 0
        self.unplayable: list[str] = []
        self.sprt: SprtRule | None = None
        self.recorded: set[str] = set()  # game ids recorded before this run
        self.n_pairs = 1  # pairings per round, for numbering file openings
        #: called once when the SPRT decides: ends the run (games in play are abandoned)
        self.on_decided: Callable[[], None] = lambda: None
        #: where finished games are committed while their slot plays on (None: in line)
        self.commits: trio.Nursery | None = None
        #: finished games waiting for the next commit, and whether a commit task runs
        self.finished: list[tuple[ScheduledGame, FinishedGame]] = []
        self.committing = False
        #: set when COMMIT_MAX games wait, or the last game has finished: the commit need
        #: not wait out its window
        self.batch_full = trio.Event()
        #: when the game before the last one to finish finished (trio time): whether games
        #: come close together, so that the next commit waits for company
        self.previous_finish = -math.inf
        self.last_finish = -math.inf
        #: games of this run not finished (nor given up) yet
        self.remaining = 0
        #: the player every slot shares when the games are played elsewhere (the league's
        #: workers, for `config.database`: `play_elsewhere`)
        self.shared: Player | None = None
        #: worker processes launched at the run's start, with the core of their slot (None:
        #: not pinned), one taken by each slot's player (see `launch_workers`)
        self.launched: list[tuple[int | None, WorkerProcess]] = []

    async def opening(self, sg: ScheduledGame) -> tuple[tuple[str, ...], ...]:
        """The game pair's opening: the one its other game was recorded with, if it was
        (a pool that grew since may number openings differently), else the entry's openings
        file's, else random legal turns."""
        key = sg.pair_key
        if key not in self.openings:
            entry = self.games[sg.game]
            partner = game_id(sg.round, sg.game, sg.pair, 1 - sg.seat_order)
            if partner in self.recorded:
                record = await self.store.call("record", partner)
                opening = tuple(tuple(t) for t in record.get("opening", ()))
            elif entry.openings:
                index = (sg.round - 1) * self.n_pairs + sg.pair
                opening = pick(
                    entry.openings,
                    self.config.opening_order,
                    self.config.opening_seed,
                    entry.label,
                    index,
                )
            else:
                # a few random legal turns: less work than handing them to a thread
                opening = random_opening(
                    entry, self.config.seed, sg.round, sg.pair, self.config.opening_turns
                )
            self.openings[key] = opening
        return self.openings[key]

    def player(self, core: int | None) -> Player:
        """A slot's player: the shared one, or one of the slot's own (with a worker process
        launched ahead for it, if one is left: `launch_workers`)."""
        if self.shared is not None:
            return self.shared
        if self.play_match is not None:
            return InlinePlayer(self.specs, self.play_match)
        launched = next((w for c, w in self.launched if c == core), None)
        if launched is not None:
            self.launched.remove((core, launched))
        return ProcessPlayer(self.bots_payload, core, self.game_names, launched)

    async def slot(self, games: trio.MemoryReceiveChannel[ScheduledGame], core: int | None) -> None:
        """One unit of concurrency: plays one game at a time, through its player."""
        player = self.player(core)
        try:
            if isinstance(player, ProcessPlayer):
                await player.prepare()
                await self._play_ahead(games, player, core)
            else:
                async for sg in games:
                    await self.play(sg, player, core)
        finally:
            if player is not self.shared:  # the shared player ends with the run
                with trio.CancelScope(shield=True):
                    await player.aclose()

    def match_payload(self, sg: ScheduledGame, opening: Any, core: int | None) -> dict[str, Any]:
        """The `match` of a game's `play` request (the parts that are the same for every game
        are made once per run: they are only encoded, never changed)."""
        entry = self.games[sg.game]
        a, b = sg.bots
        return {
            "game": entry.name,
            "options": dict(entry.options),
            "bots": [a, b],
            "time_control": self._time_control,
            "seed": sg.seed,
            "match_id": f"{self.config.name}/{sg.game_id}",
            "opening": [list(t) for t in opening],
            "cpu_affinity": [[core], [core]] if core is not None else [None, None],
            "isolation": self.config.isolation,
            "seat_time_controls": [self._seat_time_controls[a], self._seat_time_controls[b]],
            "bot_options": [self._bot_options[a], self._bot_options[b]],
            "limits": self._limits,
            "reuse": self.config.reuse,
        }

    async def play(self, sg: ScheduledGame, player: Player, core: int | None) -> None:
        payload = self.match_payload(sg, await self.opening(sg), core)
        for _ in range(self.config.max_attempts):
            attempt = self.void_counts.get(sg.game_id, 0) + 1
            self.progress.game_started(sg.game_id)
            reply = await player.play(sg.game_id, attempt, payload)
            if await self._settle(sg, attempt, reply):
                return
        self._give_up(sg)

    async def _play_ahead(
        self,
        games: trio.MemoryReceiveChannel[ScheduledGame],
        player: ProcessPlayer,
        core: int | None,
    ) -> None:
        """`play` for a slot with a referee worker process, one game ahead: the slot's next
        game is sent while its current one plays, so the worker starts it the moment it has
        sent the current one's record, without waiting for this process to read that record,
        commit it and build the next request. The worker still plays one game at a time (it
        reads the next request only once it has answered the current one).

        A game sent but not started when the worker dies (or cannot be sent to) is sent again
        to a fresh worker without counting as an attempt; the game in play is voided."""
        inflight: collections.deque[tuple[ScheduledGame, dict[str, Any], int, int]]
        inflight = collections.deque()  # (game, payload, attempt, tries), in play then next
        retry: collections.deque[tuple[ScheduledGame, dict[str, Any], int]] = collections.deque()
        exhausted = broken = False
        while True:
            if broken and not inflight:
                await player.aclose()  # a fresh worker for what is sent next
                broken = False
            while not broken and len(inflight) < PLAY_AHEAD and (retry or not exhausted):
                if retry:
                    sg, payload, tries = retry.popleft()
                else:
                    left = games.statistics().current_buffer_used
                    if inflight and left < self.config.concurrency:
                        break  # the last games: one for each slot, none kept waiting behind
                    try:
                        sg = await games.receive()
                    except trio.EndOfChannel:
                        exhausted = True
                        continue
                    payload, tries = self.match_payload(sg, await self.opening(sg), core), 0
                attempt = self.void_counts.get(sg.game_id, 0) + 1
                if not inflight:
                    self.progress.game_started(sg.game_id)
                try:
                    await player.send(sg.game_id, payload)
                except WorkerDied as e:
                    if inflight:
                        # the game in play reports the death (its record may still be in the
                        # pipe: read first); this one never began
                        retry.appendleft((sg, payload, tries))
                        broken = True
                        break
                    await player.aclose()  # a fresh worker for the next attempt
                    reply = void_of(sg.game_id, e)
                    if not await self._settle(sg, attempt, reply):
                        self._again(retry, sg, payload, tries)
                    continue
                inflight.append((sg, payload, attempt, tries))
            if not inflight:
                return
            sg, payload, attempt, tries = inflight.popleft()
            try:
                reply = await player.receive()
            except WorkerDied as e:
                await player.aclose()
                reply = void_of(sg.game_id, e)
                retry.extendleft((g, p, t) for g, p, _, t in reversed(inflight))
                inflight.clear()
            if inflight:
                self.progress.game_started(inflight[0][0].game_id)
            if not await self._settle(sg, attempt, reply):
                self._again(retry, sg, payload, tries)

    def _again(
        self,
        retry: collections.deque[tuple[ScheduledGame, dict[str, Any], int]],
        sg: ScheduledGame,
        payload: dict[str, Any],
        tries: int,
    ) -> None:
        """A voided game: played again next, unless this run has tried it enough."""
        if tries + 1 < self.config.max_attempts:
            retry.appendleft((sg, payload, tries + 1))
        else:
            self._give_up(sg)

    async def _settle(self, sg: ScheduledGame, attempt: int, reply: dict[str, Any]) -> bool:
        """Act on an attempt's reply: True when the game is done with (its record goes to
        be committed), False when it was voided (recorded as such)."""
        if reply["type"] == "void":
            reason = reply["reason"]
            self.void_counts[sg.game_id] = attempt
            self.voided += 1
            with trio.CancelScope(shield=True):
                await self.store.call("record_void", sg.game_id, attempt, reason, self.run_id)
            self.progress.game_voided(sg.game_id, attempt, reason)
            return False
        if reply["type"] == "error":
            if reply.get("user"):
                raise ArenaError(f"{sg.game_id}: {reply['message']}")
            raise RuntimeError(f"referee worker failed on {sg.game_id}:\n{reply['message']}")
        finished = FinishedGame(
            sg.game_id,
            sg.seq,
            sg.round,
            sg.game,
            sg.pair,
            sg.seat_order,
            attempt,
            reply["record"],
            reply.get("record_json"),
        )
        self.finished.append((sg, finished))
        self.remaining -= 1
        self.previous_finish, self.last_finish = self.last_finish, trio.current_time()
        if len(self.finished) >= COMMIT_MAX or self.remaining <= 0:
            self.batch_full.set()  # no reason to wait: full, or no other game to come
        if self.commits is None:
            await self._commit_finished()
        elif not self.committing:
            # the slot's next game need not wait for the disk: the commit runs beside it
            # (shielded, in the run's nursery, which ends only when every commit has)
            self.committing = True
            self.commits.start_soon(self._commit_finished)
        return True

    def _give_up(self, sg: ScheduledGame) -> None:
        self.unplayable.append(sg.game_id)
        self.remaining -= 1
        if self.remaining <= 0:
            self.batch_full.set()
        self.progress.message(
            f"unplayable: {sg.game_id} voided {self.config.max_attempts} times in this run"
        )

    async def _commit_finished(self) -> None:
        """Record the finished games; only then does each count (played, progress, SPRT).

        A group commit: one transaction holds every game that finished while the previous
        transaction was being written and, when games come close together (the one before
        finished less than COMMIT_WINDOW earlier), every game that finishes within
        COMMIT_WINDOW of the first, so games that finish faster than single commits could
        keep up share them; a game that finished alone is committed at once. Shielded: once
        a game has finished, stopping the run must not lose it; a game that finished but is
        not committed when the process dies is not in the file, so the next run plays it
        again."""
        try:
            with trio.CancelScope(shield=True):
                while self.finished:
                    close_together = self.last_finish - self.previous_finish < COMMIT_WINDOW
                    if close_together and len(self.finished) < COMMIT_MAX and self.remaining > 0:
                        self.batch_full = trio.Event()
                        with trio.move_on_after(COMMIT_WINDOW):
                            await self.batch_full.wait()
                    batch = self.finished[:COMMIT_MAX]
                    self.finished = self.finished[COMMIT_MAX:]
                    try:
                        await self.store.call("record_games", [g for _, g in batch], self.run_id)
                    except StoreError as e:
                        # what finished meanwhile cannot be committed either: kept alike
                        batch += self.finished
                        self.finished = []
                        raise _kept(e, batch) from None
                    for sg, g in batch:
                        self.played += 1
                        row = row_from_record(sg, g.record, g.attempt)
                        self.progress.game_finished(row)
                        self.count_for_sprt(row)
        finally:
            self.committing = False

    def count_for_sprt(self, row: GameRow) -> None:
        if self.sprt is None:
            return
        state = self.sprt.add(row)
        if state is None:
            return
        self.progress.sprt(state)
        if state.decision:
            self.on_decided()


def _kept(error: StoreError, batch: list[tuple[ScheduledGame, FinishedGame]]) -> StoreError:
    """Finished games whose commit failed (the results file became unwritable) are not
    lost: each record goes to a JSON file in the temporary directory, and the error that
    stops the run says where (`arena tournament` cannot import it back yet; `arena replay`
    reads it)."""
    notes = []
    for _, g in batch:
        try:
            fd, spare = tempfile.mkstemp(prefix=f"arena-{g.game_id}-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                # the text as the worker sent it (its `record` may be only its head)
                if g.record_json is not None:
                    f.write(g.record_json)
                else:
                    json.dump(g.record, f, indent=1)
            kept = f"its record was saved to {spare}"
        except OSError as oe:
            kept = f"its record could not be saved either: {oe.strerror or oe}"
        notes.append(f"game {g.game_id} finished but was not recorded, {kept}")
    return StoreError(f"{error}; {'; '.join(notes)}")


async def run_tournament(
    config: TournamentConfig,
    *,
    progress: Progress | None = None,
    handle_signals: bool = False,
    stop: trio.Event | None = None,
    play_match: Callable[..., Awaitable[Any]] | None = None,
    drop_broken: bool = False,
    play_elsewhere: PlayElsewhere | None = None,
    prelaunched: Sequence[Prelaunched] = (),
) -> RunOutcome:
    """Play every game of the schedule that the results file does not hold yet.

    A concurrency above the CPUs available is refused before anything starts, unless the config
    insists (`oversubscribe`; arena/oversubscription.py). Every bot is checked once first
    (`check_startable`: build, program, image): one that cannot start is an ArenaError before
    any game, or with `drop_broken` it is out of this run: its games are skipped (still
    missing, played by a later run once it is fixed).

    With `handle_signals`, SIGINT and SIGTERM stop the run cleanly: games in play are
    abandoned (their bots killed, nothing recorded), finished ones are all committed, and the
    run is marked `stopped`; running again resumes. `stop` does the same from code.
    `play_match` replaces the referee's (tests inject arena-side faults with it).

    A config with a `database` is played elsewhere: `play_elsewhere` opens the player every
    slot shares (cli/tournament.py passes the league's queue, arena/league/tourjobs.py
    `queue_player`), once there are games to play; the results file stays here.

    `prelaunched`: the slots' worker processes, started before trio ran (`arena tournament
    run`: arena/workers/prelaunch.py); the run takes them over and closes them. Otherwise
    the run launches its own first thing (`launch_workers`).
    """
    progress = progress or Progress()
    if (config.database is None) != (play_elsewhere is None):
        raise ValueError("a config with a database is played through play_elsewhere, and only it")
    if play_elsewhere is None:  # the league's workers guard their own CPUs; ours play here
        check_concurrency(
            config.concurrency,
            insist=config.oversubscribe,
            way_out="pass --force (or set oversubscribe = true in the config)",
        )
    launched: list[tuple[int | None, WorkerProcess]] = []
    for pre in prelaunched:
        pre.adopted = True
        launched.append((pre.core, WorkerProcess.adopt(pre.popen)))
    if not prelaunched and play_elsewhere is None and play_match is None:
        launched = await launch_workers(config)
    try:
        return await _run(
            config,
            progress,
            handle_signals,
            stop,
            play_match,
            drop_broken,
            play_elsewhere,
            launched,
        )
    finally:
        with trio.CancelScope(shield=True):
            for _, worker in launched:  # the ones no slot took
                await worker.close()


async def _run(
    config: TournamentConfig,
    progress: Progress,
    handle_signals: bool,
    stop: trio.Event | None,
    play_match: Callable[..., Awaitable[Any]] | None,
    drop_broken: bool,
    play_elsewhere: PlayElsewhere | None,
    launched: list[tuple[int | None, WorkerProcess]],
) -> RunOutcome:
    """`run_tournament` once its worker processes are launched."""
    specs = await trio.to_thread.run_sync(load_bot_specs, config)
    broken = await check_bots(specs, config.isolation)
    if broken and not drop_broken:
        raise ArenaError(
            "; ".join(broken.values()) + " (fix it, or run with --drop-broken to play without it)"
        )
    names = [s.name for s in specs]
    fmt = format_of(config.format, config.bots)
    wanted = [(names[i], names[j]) for i, j in fmt.pairings()]
    tested = fmt.tested_bot()
    sprt_meta = None
    if config.sprt is not None and tested is not None:
        sprt_meta = {**config.sprt.to_dict(), "bot": names[tested]}
    table: list[tuple[str, str]] = []

    # the launched workers set their bots and games up while the results file opens (its
    # first write syncs SQLite's log: tens of milliseconds of the start-up before the first
    # game, benchmarks/versus.py): `init` goes now, and each slot reads its answer
    for _, worker in launched:
        with contextlib.suppress(WorkerDied):  # the slot's first game reports it
            await worker.send_init(worker_bots(config), worker_games(config))

    def open_store() -> Store:
        nonlocal table
        store = Store(config.results, create=True)
        try:
            store.lock_for_writing()
            # bind writes: an unwritable results file fails here, before any game is played
            table = store.bind(
                config.identity(names),
                config.to_dict(),
                names,
                wanted,
                config.fingerprint(names),
                extra={"sprt": sprt_meta},
            )
        except (sqlite3.Error, OSError) as e:
            store.close()
            why = e.strerror if isinstance(e, OSError) and e.strerror else e
            raise StoreError(f"{config.results}: cannot write the results file: {why}") from None
        except BaseException:
            store.close()
            raise
        return store

    store = await trio.to_thread.run_sync(open_store)
    astore = AsyncStore(store)
    elsewhere = contextlib.AsyncExitStack()  # the shared player's, when there is one
    try:
        index = {n: i for i, n in enumerate(names)}
        recorded = await astore.call("recorded_ids")
        rows = await astore.call("games")
        if fmt.staged:
            # a knockout: the stage the recorded games have reached, and what it still needs
            state = knockout_state(names, config.knockout, rows)
            schedule = knockout_games(config, state.wanted)
            scheduled = len(rows) + state.least_games_left()
        else:
            schedule = build_schedule(config, [(index[a], index[b]) for a, b in table])
            scheduled = len(schedule)
        pending = [g for g in schedule if g.game_id not in recorded]
        playable = [g for g in pending if not broken.keys() & set(g.bots)]
        skipped = len(pending) - len(playable)
        pending = playable
        for i, why in broken.items():
            progress.message(f"dropped {names[i]}: {why}")
        void_counts = await astore.call("void_counts")
        run = _Run(config, specs, astore, 0, progress, void_counts, play_match)
        run.launched = launched  # the slots take theirs from the caller's list
        if play_elsewhere is not None and pending:
            opened = play_elsewhere(config, specs, run.bots_payload)
            run.shared = await elsewhere.enter_async_context(opened)
        run.recorded, run.n_pairs = recorded, max(1, len(table))
        if sprt_meta is not None and config.sprt is not None:
            run.sprt = SprtRule.from_rows(config.sprt, sprt_meta["bot"], rows)
            if run.sprt.state().decision:  # decided by an earlier run: nothing left to test
                pending = []
        run.run_id = run_id = await astore.call("start_run", scheduled, len(pending))
        outcome = RunOutcome("complete", scheduled, len(pending), results=str(config.results))
        outcome.dropped = {names[i]: why for i, why in broken.items()}
        outcome.skipped = skipped
        # SIGINT/SIGTERM are caught from before the start line on: a Ctrl-C as soon as the run
        # says it has started is a clean stop (status `stopped`), not an interrupt mid-set-up
        signals = contextlib.ExitStack()
        receiver = (
            signals.enter_context(trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM))
            if handle_signals
            else None
        )
        status = "failed"
        try:
            progress.start(scheduled, rows, names, len(pending))
            stopped = await _play_all(run, pending, receiver, stop)
            while fmt.staged and not stopped and not run.unplayable:
                # the next stage of a knockout, from what is recorded now (a run killed
                # between stages resumes at the same point: it reads the same games)
                rows = await astore.call("games")
                run.recorded = {r.game_id for r in rows}
                state = knockout_state(names, config.knockout, rows)
                stage = [
                    g
                    for g in knockout_games(config, state.wanted)
                    if g.game_id not in run.recorded and not broken.keys() & set(g.bots)
                ]
                if not stage:
                    break
                pending += stage
                outcome.pending_at_start = len(pending)  # a knockout's stages add up
                stopped = await _play_all(run, stage, receiver, stop)
            outcome.played, outcome.voided = run.played, run.voided
            outcome.unplayable = list(run.unplayable)
            outcome.sprt = run.sprt.state() if run.sprt else None
            if outcome.sprt is not None and outcome.sprt.decision:
                status = "complete"
            elif stopped and run.played + len(run.unplayable) < len(pending):
                status = "stopped"
            elif run.unplayable or skipped:
                status = "incomplete"
            else:
                status = "complete"
            outcome.status = status
        finally:
            signals.close()
            progress.close()
            # an unwritable results file (the error in flight says so) cannot take the
            # run's status either; the next run marks this one killed
            with trio.CancelScope(shield=True), contextlib.suppress(StoreError):
                await astore.call("finish_run", run_id, status)
        return outcome
    finally:
        try:
            await elsewhere.aclose()
        finally:
            await trio.to_thread.run_sync(store.close)


def worker_games(config: TournamentConfig) -> tuple[dict[str, Any], ...]:
    """What each worker sets up before the first game (arena/workers/child.py warm_up)."""
    warm: list[dict[str, Any]] = []
    for g in config.games:
        entry = {"name": g.name, "options": dict(g.options)}
        if entry not in warm:
            warm.append(entry)
    return tuple(warm)


def worker_bots(config: TournamentConfig) -> list[dict[str, Any]]:
    """The bots as a worker's `init` and the league's queue carry them (BotEntry.to_dict)."""
    return [b.to_dict() for b in config.bots]


async def launch_workers(config: TournamentConfig) -> list[tuple[int | None, WorkerProcess]]:
    """The referee worker processes of the run's slots, launched before anything else the run
    does (checking and building the bots, opening the results file, the schedule): each
    imports the referee and probes the sandbox meanwhile, on another core, so that this is
    not added to the start-up before the first game (benchmarks/versus.py). Each slot's
    player initialises its own (`ProcessPlayer.prepare`); the ones no slot took (fewer games
    pending than slots) are closed when the run ends. Worker processes that could not be
    launched are left for the slots to start as usual. (`arena tournament run` starts them
    earlier still, before it imports trio: arena/workers/prelaunch.py.)"""
    launched: list[tuple[int | None, WorkerProcess]] = []
    for core in slot_cores(config.concurrency, config.pin_cores):
        try:
            launched.append((core, await WorkerProcess.launch(core)))
        except OSError:
            break
    return launched


async def check_bots(specs: list[Any], isolation: str | None) -> dict[int, str]:
    """Each bot checked once (and built), one at a time: index -> why it cannot start."""
    broken: dict[int, str] = {}
    for i, spec in enumerate(specs):
        try:
            await trio.to_thread.run_sync(
                lambda spec=spec: check_startable(spec, isolation=isolation)
            )
        except BotError as e:
            broken[i] = str(e).splitlines()[0]
        except SandboxFault as e:
            raise ArenaError(f"cannot check bot {spec.name}: the sandbox failed: {e}") from None
    return broken


async def _play_all(
    run: _Run,
    pending: list[ScheduledGame],
    signals: AsyncIterator[int] | None,
    stop: trio.Event | None,
) -> bool:
    """Run the workers over the pending games; True if stopped before the end (a signal from
    `signals`, or `stop`)."""
    concurrency = max(1, min(run.config.concurrency, len(pending) or 1))
    cores = slot_cores(concurrency, run.config.pin_cores and run.shared is None)
    run.remaining = len(pending)
    send, receive = trio.open_memory_channel[ScheduledGame](len(pending) or 1)
    for g in pending:
        send.send_nowait(g)
    send.close()
    stopped = False
    async with trio.open_nursery() as outer:
        scope = trio.CancelScope()

        async def watch_signals() -> None:
            nonlocal stopped
            assert signals is not None
            async for _ in signals:
                stopped = True
                run.progress.message("stopping: games in play are abandoned; run again to resume")
                scope.cancel()
                return

        async def watch_event() -> None:
            nonlocal stopped
            assert stop is not None
            await stop.wait()
            stopped = True
            scope.cancel()

        if signals is not None:
            outer.start_soon(watch_signals)
        if stop is not None:
            outer.start_soon(watch_event)
        run.on_decided = scope.cancel
        with scope:
            async with trio.open_nursery() as workers:
                run.commits = workers
                for core in cores:
                    workers.start_soon(run.slot, receive.clone(), core)
                receive.close()
        outer.cancel_scope.cancel()
    return stopped
