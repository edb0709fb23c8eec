"""Can a bot start at all? Asked once per bot before any game, not learnt from its games.

A bot whose program is missing, whose build fails or whose docker image was never built
would lose every one of its games by `failed_start`, and a tournament would show nothing but
a column of losses. `check_startable` asks what can be known without playing: the manifest
was loaded already (`load_bot`), then the build step, the isolation mode's requirements (an
image for docker) and the launcher's own check (the program exists and is executable, the
image is present). `arena match`, `arena check` and tournaments call it before their first
game; the league calls it to validate a submission.
"""

from __future__ import annotations

from arena.referee.bots import BotError, BotSpec
from arena.sandbox import LaunchError, launcher_for


class BotCannotStart(BotError):
    """The bot cannot be started as described; the message says why (one line)."""


def check_startable(spec: BotSpec, *, isolation: str | None = None, build: bool = True) -> None:
    """Raise BotError (BuildError, BotCannotStart) if `spec` cannot start in `isolation`
    (default: its own). Runs the build step first when `build` (the league builds in the
    sandbox itself and passes False). Blocking: call it via `trio.to_thread.run_sync`.
    SandboxFault when the arena cannot tell (the Docker engine does not answer)."""
    mode = isolation or spec.isolation
    if build:
        spec.ensure_built()
    try:
        launcher = launcher_for(mode)
    except ValueError as e:
        raise BotCannotStart(f"bot {spec.name}: {e}") from None
    try:
        launcher.check(spec.launch_spec(isolation=mode))
    except LaunchError as e:
        raise BotCannotStart(str(e)) from None
