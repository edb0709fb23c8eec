"""How long a game the platform voided waits before its next attempt.

A platform fault is often transient: a machine briefly out of processes or memory ("Resource
temporarily unavailable"), a worker restarting, the server unreachable for a moment. Replaying
at once spends the game's `max_attempts` within milliseconds on the same fault, and every
game in flight fails together. So a voided game goes back to the queue with a not-before time
(`games.not_before`) and waits there, not in a sleeping slot: slots play other games meanwhile,
and the scheduler and the workers skip it until its time.

The wait doubles with each attempt, from `BASE` up to `CAP` seconds, and half of it is random
("equal jitter"), so games voided together do not all come back together. A server stop is not
the game's trouble: it is replayed at once, as before.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from arena.league.db.schema import VoidKind

BASE = 2.0
#: no wait is longer than this
CAP = 60.0


@dataclass(frozen=True)
class Backoff:
    base: float = BASE
    cap: float = CAP

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds before the attempt after `attempt` (1 for the first voided one)."""
        ceiling = min(self.cap, self.base * 2.0 ** max(0, attempt - 1))
        return ceiling / 2 + rng.uniform(0.0, ceiling / 2)

    def after(self, kind: VoidKind, attempt: int, rng: random.Random) -> float:
        """The wait after an attempt voided as `kind`: none after a server stop."""
        if kind == VoidKind.SERVER_STOPPED:
            return 0.0
        return self.delay(attempt, rng)
