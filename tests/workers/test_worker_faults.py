"""Faults cross the process boundary as a field, not as prose (issue 20).

Every platform fault derives from `PlatformFault` (arena/errors.py) and names itself in
`fault`, one of the wire's `Fault` words; a referee worker's void reply (arena/workers/child.py
`play_one`) carries that word beside the text voids have always had, and the league maps the
word, never the text, to its void kind (arena/league/voids.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from arena.errors import PlatformFault
from arena.league.botcache import ServerUnreachable
from arena.league.db import schema
from arena.league.executors.inprocess import _outcome
from arena.league.voids import void_kind, void_of
from arena.referee import RefereeFault, TimeControl
from arena.referee.match import HostStall
from arena.sandbox import Limits, SandboxFault
from arena.workers.child import play_one
from arena.workers.process import WorkerDied
from arena.workers.wire import Fault

VoidKind = schema.VoidKind


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_subclasses(sub)}
    return out


def test_every_platform_fault_names_a_fault_of_the_wire() -> None:
    faults = _subclasses(PlatformFault)
    assert {SandboxFault, RefereeFault, HostStall, WorkerDied, ServerUnreachable} <= faults
    for cls in (PlatformFault, *faults):
        assert cls.fault in set(Fault), cls
    assert [SandboxFault.fault, RefereeFault.fault, HostStall.fault, WorkerDied.fault] == [
        Fault.SANDBOX,
        Fault.REFEREE,
        Fault.HOST_STALL,
        Fault.WORKER,
    ]


def _request() -> dict[str, Any]:
    return {
        "type": "play",
        "game_id": "g1",
        "match": {
            "game": "papagra",
            "options": {},
            "bots": [0, 1],
            "time_control": TimeControl().to_dict(),
            "seed": 1,
            "match_id": "t/g1",
            "opening": [],
            "cpu_affinity": [None, None],
            "isolation": "process",
            "limits": dataclasses.asdict(Limits()),
        },
    }


@pytest.mark.parametrize(
    ("error", "fault", "reason", "kind"),
    [
        (SandboxFault("no cgroup"), "sandbox", "SandboxFault: no cgroup", VoidKind.SANDBOX_FAULT),
        (RefereeFault("pipe"), "referee", "RefereeFault: pipe", VoidKind.REFEREE_FAULT),
        (
            HostStall("host_stall: seat 0 (a) turn 3: 0.5 s"),
            "host_stall",
            "HostStall: host_stall: seat 0 (a) turn 3: 0.5 s",
            VoidKind.HOST_STALL,
        ),
        (OSError("EMFILE"), "internal", "OSError: EMFILE", VoidKind.INTERNAL_ERROR),
        (KeyError("x"), "internal", "internal error KeyError: 'x'", VoidKind.INTERNAL_ERROR),
    ],
)
async def test_a_void_names_its_fault_and_the_league_reads_the_name(
    error: Exception, fault: str, reason: str, kind: VoidKind
) -> None:
    async def failing(config: Any, **_: Any) -> Any:
        raise error

    reply = await play_one([None, None], _request(), failing)
    # the text is what voids have always said; the fault is a field beside it
    assert reply == {"type": "void", "game_id": "g1", "fault": fault, "reason": reason}
    assert void_of(reply) == (kind, reason)
    assert _outcome(None, reply).void is kind  # type: ignore[arg-type]


def test_the_field_decides_not_the_text() -> None:
    """A reason that reads like another fault (a bot's name, a message) changes nothing."""
    reply = {"type": "void", "fault": "referee", "reason": "SandboxFault: HostStall"}
    assert void_of(reply)[0] is VoidKind.REFEREE_FAULT
    assert void_of({"type": "void", "reason": "HostStall: x"})[0] is VoidKind.INTERNAL_ERROR
    assert void_of({"type": "error", "message": "bot gone"}) == (
        VoidKind.INTERNAL_ERROR,
        "bot gone",
    )
    assert void_kind(Fault.WORKER) is VoidKind.WORKER_LOST
    assert void_kind("no such fault") is VoidKind.INTERNAL_ERROR
