"""The scheduler keeps the executor full: it is the executors' `JobSource`.

When a slot frees up the executor asks for the next game. Games already queued (voided attempts
being replayed) come first; otherwise a new rated game is made on demand, so pairings always use
the latest ratings and a lost worker costs one game, never a precomputed schedule. Choosing and
claiming happen in one write transaction, and the outcome goes back through the store's
exactly-once rule.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import trio

from arena.league import store
from arena.league.executors.base import GameJob, JobSource, Outcome, job_from_claim
from arena.league.settings import LeagueSettings, Matchmaking
from arena.tournaments.schedule import random_opening

#: how long an idle scheduler waits before looking again when nothing woke it
IDLE_POLL = 2.0


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
    pool: Mapping[str, list[store.Candidate]],
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


def _least(rng: random.Random, cands: list[store.Candidate], key) -> store.Candidate:
    best = min(key(c) for c in cands)
    return rng.choice([c for c in cands if key(c) == best])


class Scheduler(JobSource):
    """Claims games for the executors and records their outcomes."""

    def __init__(
        self, db: store.Database, settings: LeagueSettings, *, seed: int | None = None
    ) -> None:
        self.db = db
        self.settings = settings
        self.rng = random.Random(seed)
        self._wake = trio.Event()
        self.recorded = 0
        #: called (in the trio thread) after every outcome recorded (the API's cache drops)
        self.on_recorded: Callable[[], None] = lambda: None
        self.stale = 0
        self.voided = 0

    def wake(self) -> None:
        """Something changed (a version activated, a game requeued): look again now."""
        self._wake.set()

    async def next_job(self) -> GameJob:
        while True:
            wake = self._wake
            claim = await trio.to_thread.run_sync(self._claim_next)
            if claim is not None:
                return job_from_claim(claim, self.settings)
            with trio.move_on_after(IDLE_POLL):
                await wake.wait()
            if self._wake is wake and wake.is_set():
                self._wake = trio.Event()

    async def finished(self, outcome: Outcome) -> None:
        ok = await trio.to_thread.run_sync(self.record, outcome)
        if ok:
            self.on_recorded()
        if not ok:
            self.stale += 1
        elif outcome.record is not None:
            self.recorded += 1
        else:
            self.voided += 1
            self.wake()

    def record(self, outcome: Outcome) -> bool:
        """Blocking: record an outcome; False when it was stale (dropped)."""
        job = outcome.job
        with self.db.write() as conn:
            if outcome.record is not None:
                return store.record_result(conn, job.game_id, job.attempt, outcome.record)
            assert outcome.void is not None
            return store.void_attempt(
                conn,
                job.game_id,
                job.attempt,
                outcome.void,
                outcome.reason,
                self.settings.max_attempts,
            )

    def _claim_next(self) -> store.Claim | None:
        with self.db.write() as conn:
            for gid in store.queued_game_ids(conn, 1):
                claim = store.claim_game(conn, gid)
                if claim is not None:
                    return claim
            pairing = self._plan(conn)
            if pairing is None:
                return None
            gid = store.create_game(conn, self._new_game(pairing))
            return store.claim_game(conn, gid)

    def _plan(self, conn) -> Pairing | None:
        labels = [g.label for g in self.settings.games]
        pool = {v: store.candidates(conn, v) for v in labels}
        return plan_game(
            self.rng, self.settings.matchmaking, labels, store.games_per_variant(conn), pool
        )

    def _new_game(self, p: Pairing) -> store.NewGame:
        entry = self.settings.game(p.variant)
        seed = self.rng.getrandbits(63)
        opening = random_opening(entry, seed, 0, 0, self.settings.opening_turns)
        return store.NewGame(
            kind=store.GameKind.RATED,
            variant=entry.label,
            game_name=entry.name,
            options=dict(entry.options),
            seed=seed,
            opening=opening,
            time_control=self.settings.time_control.to_dict(),
            version0=p.seats[0],
            version1=p.seats[1],
        )
