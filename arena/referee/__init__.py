"""The referee: plays one game between two bot programs over protocol v1 (docs/protocol.md).

Public surface used by the CLI and the tournament runner: describe bots with `load_bot`,
configure a game with `MatchConfig` and `TimeControl`, play it with `play_match`, and keep or
replay the resulting `GameRecord` (docs/record.md), whose result reads the same everywhere
through `result_fields` (arena/referee/outcome.py, with the arena's `Reason` codes). A player
that is not a program (a person) is a `SeatSpec` whose `Seat` the referee plays against exactly
as against a bot's `BotChannel`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.referee.bots import (
        BotError,
        BotSpec,
        BuildError,
        bot_from_command,
        load_bot,
        resolve_bot,
    )
    from arena.referee.channel import BotChannel
    from arena.referee.clock import Clocks, TimeControl, TimeControlError
    from arena.referee.match import (
        LogEvent,
        MatchConfig,
        RefereeFault,
        TurnEvent,
        check_seed,
        play_match,
    )
    from arena.referee.outcome import Reason, ResultFields, result_fields
    from arena.referee.record import RECORD_FORMAT, GameRecord, RecordError
    from arena.referee.seat import BotFailure, Reply, Seat, SeatSpec

# The names are imported on first use (PEP 562), so that a command which only needs a manifest
# or a record (`arena --help`, `arena replay`) does not import trio and the whole referee.
_WHERE = {
    "bots": ("BotError", "BotSpec", "BuildError", "bot_from_command", "load_bot", "resolve_bot"),
    "channel": ("BotChannel",),
    "clock": ("Clocks", "TimeControl", "TimeControlError"),
    "match": ("LogEvent", "MatchConfig", "RefereeFault", "TurnEvent", "check_seed", "play_match"),
    "outcome": ("Reason", "ResultFields", "result_fields"),
    "record": ("RECORD_FORMAT", "GameRecord", "RecordError"),
    "seat": ("BotFailure", "Reply", "Seat", "SeatSpec"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "RECORD_FORMAT",
    "BotChannel",
    "BotError",
    "BotFailure",
    "BotSpec",
    "BuildError",
    "Clocks",
    "GameRecord",
    "LogEvent",
    "MatchConfig",
    "Reason",
    "RecordError",
    "RefereeFault",
    "Reply",
    "ResultFields",
    "Seat",
    "SeatSpec",
    "TimeControl",
    "TimeControlError",
    "TurnEvent",
    "bot_from_command",
    "check_seed",
    "load_bot",
    "play_match",
    "resolve_bot",
    "result_fields",
]
