"""The league's two kinds of failure, told apart once so every caller decides with one except.

`LeagueError` is the user's fault (a bad request, a malformed archive, a wrong token): it becomes
a one-line CLI error or a 4xx JSON answer naming the problem. `PlatformFault` (arena/errors.py,
the base of every platform fault: sandbox, referee, host stall, lost referee worker) is the
league's own fault while playing a game, or an archive it cannot serve: the game is voided, never
rated, and replayed. A bot's own misbehaviour is neither: it is a rated result with its reason.
"""

from __future__ import annotations

from arena.errors import ArenaError, PlatformFault


class LeagueError(ArenaError):
    """A request or input the league refuses; `status` is the HTTP status the API answers with."""

    status: int = 400

    def __init__(self, message: str, *, status: int | None = None, field: str | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status
        #: the request field or config key at fault, when there is one (for JSON errors)
        self.field = field


__all__ = ["LeagueError", "PlatformFault"]
