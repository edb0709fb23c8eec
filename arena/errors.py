"""The arena's two failures that are nobody's move: the user's input, and the platform's fault.

Anything a user can get wrong (a config key, a CLI argument, a bot manifest, a game option)
raises a subclass of `ArenaError` whose message names the problem; anything else escaping to
the CLI is a bug in the arena and keeps its traceback.

A `PlatformFault` is the arena's own failure while playing a game (the sandbox, the referee,
the host, a referee worker process, the league's archives): the game is voided, never rated or
scored, and played again. A bot's own misbehaviour is neither: it is a result with its reason
code (arena/referee/outcome.py). Each kind of fault names itself in `fault`, the word a referee
worker sends beside a void's text (arena/workers/wire.py `Fault`), so that the side that
receives it (the league's void kinds, arena/league/voids.py) never parses the text. One base,
so every "void this game" is one `except PlatformFault`.

This module imports nothing: the sandbox, at the bottom of the arena, derives from it.
"""


class ArenaError(Exception):
    """A problem with the user's input, reported as one line."""


class PlatformFault(Exception):
    """The platform, not a bot, failed a game: void it, do not rate it, play it again."""

    #: the fault's name on the wire (arena/workers/wire.py `Fault`): what failed
    fault: str = "internal"
