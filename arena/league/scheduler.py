"""The scheduler keeps the executor full: it is the executors' `JobSource`.

When a slot needs a game the executor asks for the next one. Games already queued (voided
attempts being replayed, once their backoff is over: arena/league/backoff.py) come first;
otherwise a new rated game is made on demand (the in-process executor asks one game ahead of
the one it plays), so pairings use recent ratings and a lost worker costs one game, never a
precomputed schedule. A game waiting out its backoff holds no slot: the slots play other games,
or the scheduler sleeps until the first backoff ends. Choosing and claiming happen in one write
transaction, the same one that records the slot's finished game (`finished_then_next`), and the
outcome goes back through the ledger's exactly-once rule (arena/league/db/ledger.py).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import trio

from arena.league import seasons
from arena.league.backoff import Backoff
from arena.league.db import fleet, ledger, schema
from arena.league.db.database import Database, QueryError
from arena.league.executors.base import GameJob, JobSource, Outcome, job_from_claim
from arena.league.settings import LeagueSettings, Matchmaking
from arena.tournaments.schedule import random_opening

#: how long an idle scheduler waits before looking again when nothing woke it
IDLE_POLL = 2.0
#: seconds between recounts of the rated games per variant (see `Scheduler._games_per_variant`)
PLAYED_REFRESH = 30.0


@dataclass(frozen=True)
class Pairing:
    variant: str
    seats: tuple[int, int]  # version ids, seat 0 moves first


# Matchmaking, after Halite's coordinator (see docs/league.md):
# 1. the variant with the fewest rated games so far, so every variant's table fills evenly;
# 2. the first bot: a version still in placement (fewer than `placement_games` games in that
#    variant) with the fewest games; otherwise, 70% of the time the one with the fewest
#    games and 30% the one idle longest, so no bot starves;
# 3. the opponent: the others sorted by distance in mu, then one drawn uniformly among the
#    nearest k, k itself drawn from 1..window, except with probability `wide_window_chance`
#    when it is drawn among all; this keeps games informative (similar strength) while every
#    pair can still meet;
# 4. seats alternate with the first bot's game count.
def plan_game(
    rng: random.Random,
    mm: Matchmaking,
    variants: Sequence[str],
    played: Mapping[str, int],
    pool: Mapping[str, list[ledger.Candidate]],
) -> Pairing | None:
    playable = [v for v in variants if len({c.bot_id for c in pool.get(v, [])}) >= 2]
    if not playable:
        return None
    fewest = min(played.get(v, 0) for v in playable)
    variant = rng.choice([v for v in playable if played.get(v, 0) == fewest])
    cands = pool[variant]
    placing = [c for c in cands if c.games < mm.placement_games]
    if placing:
        first = _least(rng, placing, lambda c: c.games)
    elif rng.random() < 0.7:
        first = _least(rng, cands, lambda c: c.games)
    else:
        first = _least(rng, cands, lambda c: c.last_game_at or "")
    others = [c for c in cands if c.bot_id != first.bot_id]
    rng.shuffle(others)  # ties in distance broken at random
    others.sort(key=lambda c: abs(c.mu - first.mu))
    if rng.random() < mm.wide_window_chance:
        k = len(others)
    else:
        k = min(len(others), rng.randint(1, mm.window))
    opponent = rng.choice(others[:k])
    seats = (first.version_id, opponent.version_id)
    if first.games % 2:
        seats = (seats[1], seats[0])
    return Pairing(variant, seats)


def _least(rng: random.Random, cands: list[ledger.Candidate], key) -> ledger.Candidate:
    best = min(key(c) for c in cands)
    return rng.choice([c for c in cands if key(c) == best])


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
        if claim:
            try:
                with self.db.write() as conn:
                    return self._record_in(conn, outcome), self._claim_in(conn)
            except QueryError:
                # the claim must never cost the outcome: that transaction rolled back whole,
                # the outcome is recorded alone (the slot then asks again through next_job,
                # where an error that persists surfaces)
                pass
        with self.db.write() as conn:
            return self._record_in(conn, outcome), None

    def _record_in(self, conn, outcome: Outcome) -> bool:
        job = outcome.job
        if outcome.record is not None:
            ok = ledger.record_result(
                conn, job.game_id, job.attempt, outcome.record, outcome.record_json
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
        pairing = self._plan(conn)
        if pairing is None:
            return None
        return ledger.start_game(conn, self._new_game(pairing))

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
