"""The referee: plays one game between two bot programs over protocol v1 (docs/protocol.md).

Public surface used by the CLI and the tournament runner: describe bots with `load_bot`,
configure a game with `MatchConfig` and `TimeControl`, play it with `play_match`, and keep or
replay the resulting `GameRecord` (docs/record.md). A player that is not a program (a person) is
a `SeatSpec` whose `Seat` the referee plays against exactly as against a bot's `BotChannel`.
"""

from arena.referee.bots import BotError, BotSpec, BuildError, bot_from_command, load_bot
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
from arena.referee.record import FORFEIT_REASONS, RECORD_FORMAT, GameRecord, RecordError
from arena.referee.seat import BotFailure, Reply, Seat, SeatSpec

__all__ = [
    "FORFEIT_REASONS",
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
    "RecordError",
    "RefereeFault",
    "Reply",
    "Seat",
    "SeatSpec",
    "TimeControl",
    "TimeControlError",
    "TurnEvent",
    "bot_from_command",
    "check_seed",
    "load_bot",
    "play_match",
]
