"""Errors raised by the rules engines.

`IllegalAction` carries a message written for bot authors (`e5 is occupied`); the referee copies
it verbatim into the game record, so it must say what was wrong in the game's own terms.
"""

from arena.errors import ArenaError


class GameError(ArenaError):
    """Base class for everything a rules engine rejects."""


class OptionError(GameError):
    """An unknown game option or a bad value; the message lists the valid ones."""


class IllegalAction(GameError):
    """An action that is not legal in the current position (or cannot be parsed)."""

    def __init__(self, action: str, message: str) -> None:
        super().__init__(message)
        self.action = action
        self.message = message


class GameOver(IllegalAction):
    """An action offered after the game has ended."""

    def __init__(self, action: str) -> None:
        super().__init__(action, "the game is over")
