"""The executor contract: how a claimed game is handed over and how its outcome comes back.

The scheduler is the `JobSource`: an executor asks it for the next game whenever it has a free
slot (`next_job`, which claims the game row with a new attempt number) and hands every outcome
back (`finished`), which records it under the ledger's exactly-once rule
(arena/league/db/ledger.py: a conditional update on game, attempt and state running; a stale
outcome changes nothing). So an executor never writes to the database itself and never decides
what is rated: it reports a game record (the bot's fault is inside it, a rated result) or a
platform fault (`void`, unrated, replayed). Pulling rather than pushing keeps the queue in the
database, where the API shows it, and means a lost executor loses only the games it was
playing, which `void_running` or a stalled job's retry requeue.

Implementations: `InProcessExecutor` (referee worker processes on this machine, the default)
and `QueueExecutor` (executors/remote.py: procrastinate jobs played by `arena league worker`s
on any machine, which record through the same conditional update).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import trio

from arena.league.db.ledger import Claim
from arena.league.db.schema import VoidKind
from arena.league.settings import LeagueSettings


@dataclass(frozen=True)
class GameJob:
    """One attempt at one game, in the referee worker's terms (arena/workers/child.py):
    `match` holds the MatchConfig fields with the bots by index into `bots`."""

    game_id: int
    attempt: int
    match: dict[str, Any]
    bots: tuple[dict[str, Any], dict[str, Any]]
    #: the league's label of the game's variant (for the pages)
    variant: str = ""

    def worker_request(self) -> dict[str, Any]:
        return {
            "type": "play",
            "game_id": self.game_id,
            "match": self.match,
            "bots": list(self.bots),
        }


@dataclass(frozen=True)
class Outcome:
    """What became of an attempt: a game record, or a platform fault (void) with its reason."""

    job: GameJob
    record: dict[str, Any] | None = None
    void: VoidKind | None = None
    reason: str = ""
    #: the record as the worker encoded it (compact JSON), when known: stored compressed as
    #: is, rather than encoded again
    record_json: bytes | None = None

    def __post_init__(self) -> None:
        if (self.record is None) == (self.void is None):
            raise ValueError("an outcome is either a record or a void")


class JobSource(ABC):
    """The scheduler side of the contract."""

    @abstractmethod
    async def next_job(self) -> GameJob:
        """Wait until there is a game to play, claim it and return it."""

    @abstractmethod
    async def finished(self, outcome: Outcome) -> None:
        """Record an outcome (exactly once; a stale one is dropped). Call it shielded."""

    async def finished_then_next(self, outcome: Outcome) -> GameJob | None:
        """`finished`, then the next job if one can be claimed at once (else None: wait for it
        with `next_job`). A source may do both in one step, which saves a slot a round trip
        to the database per game. Call it shielded."""
        await self.finished(outcome)
        return None


class Executor(ABC):
    """Plays games pulled from a JobSource, `slots` at a time, until cancelled.

    On cancellation the games in play are abandoned (their bots killed) without an outcome:
    their rows stay `running` and the next start voids and replays them.
    """

    slots: int
    #: whether the games in play live and die with the server: if so, a server that stops or
    #: was killed voids them; if not (remote workers play them), it leaves them alone
    plays_here: bool = True

    def serving(self, urls: list[str]) -> None:
        """The server listens on `urls` (called before `run`; remote executors tell workers)."""
        return None

    @abstractmethod
    async def run(
        self, source: JobSource, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Start, report started through `task_status`, then play until cancelled."""


def job_from_claim(claim: Claim, settings: LeagueSettings) -> GameJob:
    """The worker's view of a claimed game: bots by directory, built at submission (never at
    play time), the league's limits as the referee's ceiling."""
    bots = [
        {
            "source": claim.paths[seat],
            "alias": claim.manifests[seat].get("league_name"),
            "build": False,
        }
        for seat in (0, 1)
    ]
    match = {
        "game": claim.game_name,
        "options": claim.options,
        "bots": [0, 1],
        "time_control": claim.time_control,
        "seed": claim.seed,
        "match_id": f"{settings.name}/{claim.game_id}",
        "opening": [list(t) for t in claim.opening],
        "cpu_affinity": [None, None],
        "isolation": settings.isolation,
        # the league's limits are the ceiling of every manifest (Limits.capped_by, referee)
        "limits": dataclasses.asdict(settings.limits),
        # bot sessions where the league allows them: the slot's pool keeps each version's
        # process for its next game (arena/referee/sessions.py)
        "reuse": settings.reuse,
    }
    return GameJob(claim.game_id, claim.attempt, match, (bots[0], bots[1]), claim.variant)
