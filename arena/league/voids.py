"""What a voided game's fault is to the league: the one mapping from a fault to a void kind.

A referee worker (arena/workers/child.py, also behind a worker's game slot) voids a game with
the fault that failed it as a field beside the text (arena/workers/wire.py `Fault`, the `fault`
of the PlatformFault, arena/errors.py). The league reads that word here, and only here, to
choose the attempt's void kind: what the pages say, what backs off (arena/league/backoff.py) and
what counts against a worker (`host_stall`, arena/league/fleet.py). The text is kept as the
void's reason for the people who read it; nothing parses it.
"""

from __future__ import annotations

from typing import Any

from arena.league.db.schema import VoidKind
from arena.workers.wire import Fault

#: the void kind of each fault a void reply can name
FAULT_VOIDS: dict[str, VoidKind] = {
    Fault.SANDBOX: VoidKind.SANDBOX_FAULT,
    Fault.REFEREE: VoidKind.REFEREE_FAULT,
    Fault.HOST_STALL: VoidKind.HOST_STALL,
    Fault.WORKER: VoidKind.WORKER_LOST,
    Fault.INTERNAL: VoidKind.INTERNAL_ERROR,
}


def void_kind(fault: str | None) -> VoidKind:
    """The void kind of a fault; an internal error for anything else (a bug of the arena)."""
    return FAULT_VOIDS.get(str(fault), VoidKind.INTERNAL_ERROR)


def void_of(reply: dict[str, Any]) -> tuple[VoidKind, str]:
    """The void kind and reason of a reply that is not a record: a void names its fault; an
    error (a bot that no longer loads, though it passed validation) or anything unexpected is
    the platform's internal error."""
    kind = reply.get("type")
    reason = str(reply.get("reason") or reply.get("message") or f"unexpected reply {kind!r}")
    if kind == "void":
        return void_kind(reply.get("fault")), reason
    return VoidKind.INTERNAL_ERROR, reason
