"""The scheduler keeps the executor full: it is the executors' `JobSource`.

When a slot needs a game the executor asks for the next one. Games already queued (voided
attempts being replayed, once their backoff is over: arena/league/backoff.py) come first;
otherwise a new rated game is made on demand (the in-process executor asks one game ahead of
the one it plays), so pairings use recent ratings and a lost worker costs one game, never a
precomputed schedule. A game waiting out its backoff holds no slot: the slots play other games,
or the scheduler sleeps until the first backoff ends. Choosing and claiming happen in one write
transaction, the same one that records the slot's finished game (`finished_then_next`), and the
outcome goes back through the ledger's exactly-once rule (arena/league/db/ledger.py).

New games come from two sources: rated matchmaking (`plan_game`) and the candidate tests of
new versions (arena/league/candidates.py, unrated), interleaved at `[sprt] share` by
`CandidateSource`; `new_game` is the one place both executors take a new game from.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

import trio

from arena.league.backoff import Backoff
from arena.league.candidates import CandidateSource
from arena.league.db import fleet, ledger, schema, seasons
from arena.league.db.database import Database, QueryError
from arena.league.executors.base import GameJob, JobSource, Outcome, job_from_claim
from arena.league.matchmaking import Pairing, plan_game
from arena.league.settings import LeagueSettings
from arena.tournaments.schedule import random_opening

#: how long an idle scheduler waits before looking again when nothing woke it
IDLE_POLL = 2.0
#: seconds between recounts of the rated games per variant (see `Scheduler._games_per_variant`)
PLAYED_REFRESH = 30.0


# Matchmaking (which two versions play next) is a pure policy of its own module, chosen by
# league.toml's [matchmaking] policy: arena/league/matchmaking.py (re-exported here).
__all__ = ["Pairing", "Scheduler", "plan_game"]


class Scheduler(JobSource):
    """Claims games for the executors and records their outcomes."""

    def __init__(
        self,
        db: Database,
        settings: LeagueSettings,
        *,
        seed: int | None = None,
        backoff: Backoff | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = db
        self.settings = settings
        self.rng = random.Random(seed)
        #: the waits of voided games before their next attempt, and their jitter's own draws
        #: (matchmaking's stay as they were)
        self.backoff = backoff or Backoff()
        self.jitter = random.Random(None if seed is None else seed + 1)
        #: the wall clock of `not_before` times (a test's own)
        self.clock = clock
        self._wake = trio.Event()
        self.recorded = 0
        #: called (in the trio thread) after every outcome recorded (the API's cache drops)
        self.on_recorded: Callable[[], None] = lambda: None
        self.stale = 0
        self.voided = 0
        #: the fleet row the outcomes recorded here count against (`fleet.SERVER_SLOTS` when
        #: the server plays its games itself: their host stalls; None counts nothing)
        self.slots_worker: str | None = None
        self._played: dict[str, int] | None = None
        self._played_at = 0.0
        #: the candidate tests' games, interleaved with the rated ones
        self.candidates = CandidateSource(settings)

    def wake(self) -> None:
        """Something changed (a version activated, a game requeued): look again now."""
        self._wake.set()

    async def next_job(self) -> GameJob:
        while True:
            wake = self._wake
            claim, retry_in = await trio.to_thread.run_sync(self._claim_next)
            if claim is not None:
                return job_from_claim(claim, self.settings)
            # nothing to play now: sleep until woken, a voided game's backoff ends, or the poll
            with trio.move_on_after(min(IDLE_POLL, max(0.01, retry_in))):
                await wake.wait()
            if self._wake is wake and wake.is_set():
                self._wake = trio.Event()

    async def finished(self, outcome: Outcome) -> None:
        await self.finished_then_next(outcome, claim=False)

    async def finished_then_next(self, outcome: Outcome, *, claim: bool = True) -> GameJob | None:
        """Record the outcome and, in the same transaction and thread hop, claim the slot's
        next game: a game costs the server one write transaction, not two."""
        ok, following = await trio.to_thread.run_sync(self._record_and_claim, outcome, claim)
        if ok:
            self.on_recorded()
        if not ok:
            self.stale += 1
        elif outcome.record is not None:
            self.recorded += 1
        else:
            self.voided += 1
            self.wake()
        return None if following is None else job_from_claim(following, self.settings)

    def record(self, outcome: Outcome) -> bool:
        """Blocking: record an outcome; False when it was stale (dropped)."""
        return self._record_and_claim(outcome, False)[0]

    def _record_and_claim(self, outcome: Outcome, claim: bool) -> tuple[bool, ledger.Claim | None]:
        # compressed before the transaction, which holds the rating rows locked
        data = (
            None
            if outcome.record is None
            else ledger.stored_record(outcome.record, outcome.record_json)
        )
        if claim:
            try:
                with self.db.write() as conn:
                    return self._record_in(conn, outcome, data), self._claim_in(conn)
            except QueryError:
                # the claim must never cost the outcome: that transaction rolled back whole,
                # the outcome is recorded alone (the slot then asks again through next_job,
                # where an error that persists surfaces)
                pass
        with self.db.write() as conn:
            return self._record_in(conn, outcome, data), None

    def _record_in(self, conn, outcome: Outcome, data: bytes | None = None) -> bool:
        job = outcome.job
        if outcome.record is not None:
            ok = ledger.record_result(
                conn, job.game_id, job.attempt, outcome.record, outcome.record_json, data
            )
        else:
            assert outcome.void is not None
            wait = self.backoff.after(outcome.void, job.attempt, self.jitter)
            ok = ledger.void_attempt(
                conn,
                job.game_id,
                job.attempt,
                outcome.void,
                outcome.reason,
                self.settings.max_attempts,
                retry_at=ledger.iso_at(self.clock() + wait) if wait > 0 else None,
            )
        if self.slots_worker is not None and outcome.void != schema.VoidKind.SERVER_STOPPED:
            column = "stale" if not ok else "played" if outcome.record is not None else "voided"
            stall = outcome.void == schema.VoidKind.HOST_STALL
            fleet.game_ended(conn, self.slots_worker, column, stall)
        return ok

    def _claim_next(self) -> tuple[ledger.Claim | None, float]:
        """A claim, or None and the seconds until a queued game's backoff ends (inf: none)."""
        with self.db.write() as conn:
            claim = self._claim_in(conn)
            if claim is not None:
                return claim, 0.0
            at = ledger.next_retry_at(conn)
        return None, math.inf if at is None else ledger.seconds_until(at, self.clock())

    def _claim_in(self, conn) -> ledger.Claim | None:
        for gid in ledger.queued_game_ids(conn, 1, ledger.iso_at(self.clock())):
            claim = ledger.claim_game(conn, gid)
            if claim is not None:
                return claim
        new = self.new_game(conn)
        return None if new is None else ledger.start_game(conn, new)

    def new_game(self, conn) -> ledger.NewGame | None:
        """The next new game to create in the caller's transaction: a candidate test's or a
        rated one (arena/league/candidates.py says which); None if neither has one."""

        def rated() -> ledger.NewGame | None:
            pairing = self._plan(conn)
            return None if pairing is None else self._new_game(pairing)

        return self.candidates.next_game(conn, rated)

    def _plan(self, conn) -> Pairing | None:
        if not seasons.ladder_open(conn):  # between seasons: no rated games
            return None
        labels = [g.label for g in self.settings.games]
        pool = {v: ledger.candidates(conn, v) for v in labels}
        played = self._games_per_variant(conn)
        pairing = plan_game(self.rng, self.settings.matchmaking, labels, played, pool)
        if pairing is not None:  # the caller creates it in this transaction
            played[pairing.variant] = played.get(pairing.variant, 0) + 1
        return pairing

    def _games_per_variant(self, conn) -> dict[str, int]:
        """The rated games per variant, counted over the games table only every
        PLAYED_REFRESH seconds (a full scan, which at a million games takes longer than a
        game) and kept up to date in between by `_plan`, which makes every new rated game.
        Only a game failing for good or a rolled-back plan makes the count drift, until the
        next refresh; the count only balances variants."""
        now = time.monotonic()
        if self._played is None or now - self._played_at > PLAYED_REFRESH:
            self._played = ledger.games_per_variant(conn)
            self._played_at = now
        return self._played

    def _new_game(self, p: Pairing) -> ledger.NewGame:
        entry = self.settings.game(p.variant)
        seed = self.rng.getrandbits(63)
        opening = random_opening(entry, seed, 0, 0, self.settings.opening_turns)
        return ledger.NewGame(
            kind=schema.GameKind.RATED,
            variant=entry.label,
            game_name=entry.name,
            options=dict(entry.options),
            seed=seed,
            opening=opening,
            time_control=self.settings.time_control.to_dict(),
            version0=p.seats[0],
            version1=p.seats[1],
        )
