"""One moment of a recorded game asked of a bot: `arena replay FILE --at T.A --bot DIR`.

A bot author who lost a game wants to know what their bot (often a new build of it) plays in
the position that lost, without replaying the whole game. The bot is built and started as the
referee starts it (the same launcher, sandbox, limits and channel), sent the game's `hello`
for its seat and the `turn` request of the moment (arena/referee/moments.py: the messages the
referee's own builders make), and its answer is checked by the rules engine as the referee
checks a move. Then it is sent an `end` (the recorded game's result) and closed as after a
game, so no process outlives the probe. Every failure of the bot is a line of the result,
never an exception; the arena's own failures (the sandbox) raise as in a game.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import trio

from arena.errors import ArenaError
from arena.games import Result
from arena.referee.bots import BotSpec, BuildError
from arena.referee.channel import STDERR_SEPARATOR, BotChannel
from arena.referee.match import _crash_at_start, _silent_start, apply_move
from arena.referee.moments import Moment
from arena.referee.requests import end_message
from arena.referee.seat import BotFailure
from arena.sandbox import LaunchError, Limits, launcher_for
from protocol.framing import DEFAULT_MAX_MESSAGE_BYTES

#: seconds a bot has to exit after `end` (as in a game: MatchConfig.end_grace)
END_GRACE = 1.0


@dataclass
class ProbeResult:
    """What the bot did with the moment's request."""

    ready: dict[str, Any] | None = None
    reply: dict[str, Any] | None = None
    elapsed: float | None = None
    #: "" when the answer is legal; else what is wrong with it (the engine's words)
    illegal: str = ""
    #: the bot's failure (crash, time, protocol), one line; "" if it answered
    failure: str = ""
    #: the stderr lines a failure's detail carries (shown below it)
    stderr: str = ""
    logs: list[str] = field(default_factory=list)
    #: the request as sent (with `legal` if the bot asked for it)
    request: dict[str, Any] | None = None


async def probe(
    spec: BotSpec, moment: Moment, *, isolation: str | None = None, limits: Limits | None = None
) -> ProbeResult:
    """Start `spec`, ask it the moment's request, check its answer, end it."""
    out = ProbeResult()
    isolation = isolation or spec.isolation
    if isolation == "docker" and not spec.image:
        raise ArenaError(
            f"bot {spec.name}: docker isolation needs an image (`image` in its bot.toml)"
        )
    try:
        if spec.build and spec.needs_build():
            await trio.to_thread.run_sync(spec.ensure_built)
    except BuildError as e:
        out.failure = f"failed_start: {e}"
        return out
    tc = moment.time_control()
    ceiling = limits or Limits()
    if ceiling.cpu_seconds is None:
        ceiling = replace(ceiling, cpu_seconds=tc.cpu_budget())
    launch = spec.launch_spec(isolation=isolation, cpu_affinity=None, ceiling=ceiling)
    try:
        launcher = launcher_for(isolation)
    except ValueError as e:
        raise ArenaError(str(e)) from None
    async with trio.open_nursery() as nursery:
        t_launch = trio.current_time()
        try:
            proc = await launcher.start(launch, nursery)
        except LaunchError as e:
            out.failure = f"failed_start: could not start: {e}"
            return out
        channel = BotChannel(
            proc,
            seat=moment.seat,
            encoding=spec.encoding,
            max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES,
            on_log=lambda seat, t, message: out.logs.append(message),
        )
        channel.clock, channel.wall_cap = tc.clock, tc.wall_cap
        nursery.start_soon(channel.reader)
        try:
            await _ask(channel, moment, out, t_launch)
        finally:
            with trio.CancelScope(shield=True):
                await _end(channel, moment, out)
            nursery.cancel_scope.cancel()
    return out


async def _ask(channel: BotChannel, moment: Moment, out: ProbeResult, t_launch: float) -> None:
    tc = moment.time_control()
    remaining = max(0.0, tc.startup - (trio.current_time() - t_launch))
    try:
        try:
            reply, _ = await channel.request(moment.hello(), remaining, tc.margin)
        except BotFailure as f:
            if f.reason == "time_forfeit":
                raise _silent_start(channel, f, tc.startup) from None
            if f.reason == "crash":
                raise _crash_at_start(channel, f) from None
            raise
        out.ready = reply.msg
        request = moment.request(legal=bool(reply.msg.get("legal", False)))
        out.request = request
        reply, elapsed = await channel.request(request, moment.deadline, tc.margin)
    except BotFailure as f:
        detail, _, tail = f.detail.partition(STDERR_SEPARATOR)
        out.failure = f"{f.reason}: {detail}"
        out.stderr = tail
        return
    out.reply, out.elapsed = reply.msg, elapsed
    if reply.msg["type"] == "move":
        state = moment.state.clone()
        entries: list[dict[str, Any]] = []
        failure = apply_move(state, reply.msg["actions"], elapsed, moment.turn, entries)
        if failure is not None:
            out.illegal = failure.detail


async def _end(channel: BotChannel, moment: Moment, out: ProbeResult) -> None:
    """As after a game: `end` to a bot that said ready, its stdin closed, a grace period to
    exit, then killed and released (nothing it started outlives it)."""
    proc = channel.proc
    try:
        if out.ready is not None and proc.exit_info() is None and not out.failure:
            await channel.send_quietly(end_message(moment.seat, _result(moment)), 0.2)
            await channel.close_input()
            with trio.move_on_after(END_GRACE):
                await proc.wait()
        else:
            await channel.close_input()
    finally:
        await proc.aclose()


def _result(moment: Moment) -> Result:
    """The recorded game's result, as its `end` said it."""
    res = moment.record.result or {}
    scores = res.get("scores") or moment.state.scores()
    return Result(res.get("winner"), res.get("reason", ""), tuple(scores), res.get("detail", ""))  # type: ignore[arg-type]
