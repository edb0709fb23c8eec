"""The referee: plays one game between two bot programs over protocol v1 (docs/protocol.md).

Public surface used by the CLI and the tournament runner: describe bots with `load_bot`,
configure a game with `MatchConfig` and `TimeControl`, play it with `play_match`, and keep or
replay the resulting `GameRecord` (docs/record.md).
"""

from arena.referee.bots import BotError, BotSpec, BuildError, bot_from_command, load_bot
from arena.referee.channel import BotFailure
from arena.referee.clock import Clocks, TimeControl, TimeControlError
from arena.referee.match import LogEvent, MatchConfig, RefereeFault, TurnEvent, play_match
from arena.referee.record import FORFEIT_REASONS, RECORD_FORMAT, GameRecord, RecordError

__all__ = [
    "FORFEIT_REASONS",
    "RECORD_FORMAT",
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
    "TimeControl",
    "TimeControlError",
    "TurnEvent",
    "bot_from_command",
    "load_bot",
    "play_match",
]
