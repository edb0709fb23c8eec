"""Oversubscription: no more bots thinking at once than the CPUs the arena may use.

A bot's clock runs on the wall. When more bots think at once than there are CPUs, some of them
wait for a CPU while their clock runs, and they lose games on time that they did not use
(cutechess reported 940 such losses at 240 concurrent games; measured here: 8 false time
forfeits in 3,657 turns at concurrency 4 on 2 cores, issue 19). fastchess refuses a
`-concurrency` above the hardware threads unless told `-force-concurrency`; the arena does the
same, and says why.

The rule. In the arena's games the players alternate, so a game has one bot thinking at a time
(the other waits for its turn; its pondering is not on its clock), and the referee of a game
sleeps while its bot thinks. A run of `concurrency` games at once therefore has up to
`concurrency` bots thinking at once, and that may not exceed the CPUs this process may run on
(`os.sched_getaffinity`, which `taskset`, cpusets and container runtimes narrow; the CPU count
where the platform has no affinity). The referee's own work between replies and bot start-ups
come on top; they are short, and the referee's clock does not charge them to a bot.

The operator may insist (`--force`, or `oversubscribe = true` in a tournament config or
league.toml): then the games run, and a game the host made late is the referee's to judge
(with a fair clock, a host stall voids the game rather than flagging the bot; docs/protocol.md).
"""

from __future__ import annotations

import os

from arena.errors import ArenaError


class OversubscribedError(ArenaError):
    """More games at once than CPUs to think on, and the operator did not insist."""


def available_cpus() -> int:
    """The CPUs this process (and the bots it starts, which inherit its affinity) may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 1


def check_concurrency(
    concurrency: int, *, insist: bool, way_out: str, cpus: int | None = None
) -> None:
    """Refuse `concurrency` games at once when their thinking bots would outnumber the CPUs.

    `way_out` names how the operator insists where the caller is (a flag, a config key)."""
    cpus = available_cpus() if cpus is None else cpus
    if insist or concurrency <= cpus:
        return
    raise OversubscribedError(
        f"concurrency {concurrency} is more than the {cpus} CPU(s) this machine gives the arena: "
        f"up to {concurrency} bots would think at once, some of them waiting for a CPU while "
        f"their clocks run, and lose games on time they did not use; use a concurrency of at "
        f"most {cpus}, or {way_out} to run anyway"
    )
