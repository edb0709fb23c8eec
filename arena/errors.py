"""The one exception family the CLI turns into a one-line error instead of a traceback.

Anything a user can get wrong (a config key, a CLI argument, a bot manifest, a game option)
raises a subclass of `ArenaError` whose message names the problem; anything else escaping to
the CLI is a bug in the arena and keeps its traceback.
"""


class ArenaError(Exception):
    """A problem with the user's input, reported as one line."""
