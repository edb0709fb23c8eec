"""A referee worker process: plays the games its runner sends it, one at a time.

Run as `python -m arena.workers.child` by `WorkerProcess` (arena/workers/process.py), for the
tournament runner (one per slot) and the league's in-process executor (one per slot); a league
worker's game slot (arena/league/slot.py) plays its games with the same `play_one`.

Why processes: the referee is Python, and with instant-reply bots its per-turn work (rules
engine, encoding, pipe wake-ups) is most of a game's cost. In one process all games share one
interpreter and one event loop, so two concurrent games interfere; one worker process per
concurrent game lets the operating system spread the referees over the cores.

Protocol with the runner, JSON Lines over the worker's stdin/stdout (arena/workers/wire.py):
- runner -> worker: `{"type": "init", "bots": [BotEntry.to_dict(), ...], "games": [...]}`
  once (`games` optional, names or `{"name", "options"}`: the worker imports their engines,
  sets each game up once, and imports the referee and the process sandbox before it answers,
  so that this start-up is not charged to the first game), then
  `{"type": "play", "game_id", "match": {...}}` (the MatchConfig fields, bots by index). A
  `play` may carry its own `"bots"` list (the league: different bots every game), each entry
  optionally with `"build": false` (built already, at submission, in the build sandbox: never
  build at play time).
- worker -> runner: `{"type": "record", "game_id", "head": {...}, "size": N}` for a finished
  game, followed by a line of the record's JSON text (N bytes): the head holds the record's
  small fields (wire.py `encode_reply`), so the runner stores the text without parsing it.
  A record is preceded, when the `play` asked for `"progress": true` (the league's live
  pages), by one
  `{"type": "turn", "game_id", "entry": {...}}` per completed turn (the record's turn entry);
  `{"type": "void", "game_id", "fault", "reason"}` when the arena failed (the game is
  replayed; `fault` names what failed, wire.py `Fault`: the `fault` of the PlatformFault),
  `{"type": "error", "game_id", "user": bool, "message"}` for a user error such as a bad
  manifest (stops the run); an unexpected exception in the referee voids the game like a
  sandbox fault does.

The worker lives in its own session, so a Ctrl-C in the terminal reaches only the runner, which
then closes the workers. When its stdin closes (the runner stopped or was killed, even by
SIGKILL) the worker cancels the game in play, which kills its bots, and exits.
"""

from __future__ import annotations

import contextlib
import math
import sys
import traceback
from collections.abc import Callable
from typing import Any

import trio

from arena.errors import ArenaError, PlatformFault
from arena.games import GAME_NAMES, game_class, make_game
from arena.referee import MatchConfig, TimeControl
from arena.referee import play_match as referee_play_match
from arena.referee.bots import BotSpec, resolve_bot
from arena.referee.record import GameRecord
from arena.referee.sessions import SessionPool
from arena.sandbox import Limits
from arena.sandbox.process import capabilities
from arena.sandbox.spawner import start_spawner
from arena.workers.wire import Fault, encode, encode_reply, requests_on_stdin, void, void_of


def prepare_sandbox() -> None:
    """Start the bot spawner and probe what the process sandbox can use (tens of
    milliseconds): what every worker does before its first game, whatever its bots and
    games, so a worker does it as soon as it starts, while its runner prepares its `init`
    (arena/tournaments/runner.py launches the workers first). Done once (each is)."""
    start_spawner()
    capabilities()


def warm_up(games: Any, specs: Any = ()) -> None:
    """Set each game up now, at the worker's start, rather than during its first game (the
    referee, the process sandbox and the games' registry are imported with this module; the
    JSON encoder of bots and pipe is imported here; `prepare_sandbox` if not done yet).
    `games` holds names, or `{"name", "options"}`: that game is also set up once, so what
    its engine computes once per board is ready. The executables of `specs` (the bots) are
    hashed, as every game records them (the hash is remembered while the file stays the
    same)."""
    import orjson  # noqa: F401

    prepare_sandbox()
    for spec in specs:
        spec.executable_hash()

    for game in games:
        name = game.get("name") if isinstance(game, dict) else game
        if name not in GAME_NAMES:
            continue
        game_class(name)
        if isinstance(game, dict):
            with contextlib.suppress(Exception):  # bad options are the first game's to report
                make_game(name, game.get("options") or {}).new_initial_state()


def load_specs(bots: list[dict[str, Any]]) -> list[BotSpec]:
    return [resolve_bot(b) for b in bots]


def match_config(specs: list[Any], m: dict[str, Any], sessions: Any = None) -> MatchConfig:
    """The referee's MatchConfig for a `play` request; `sessions` (this worker's SessionPool)
    is used when the tournament allows reuse (`reuse = true`)."""
    return MatchConfig(
        game=m["game"],
        options=m["options"],
        bots=(specs[m["bots"][0]], specs[m["bots"][1]]),
        time_control=TimeControl(**m["time_control"]),
        seed=m["seed"],
        match_id=m["match_id"],
        opening=tuple(tuple(t) for t in m["opening"]),
        cpu_affinity=tuple(None if a is None else tuple(a) for a in m["cpu_affinity"]),  # type: ignore[arg-type]
        isolation=m["isolation"],
        seat_time_controls=tuple(  # type: ignore[arg-type]
            None if t is None else TimeControl(**t)
            for t in m.get("seat_time_controls", (None, None))
        ),
        bot_options=tuple(m.get("bot_options", (None, None))),  # type: ignore[arg-type]
        limits=Limits(**m["limits"]),
        sessions=sessions if m.get("reuse") else None,
    )


async def play_one(
    specs: list[Any],
    msg: dict[str, Any],
    play_match: Callable[..., Any] | None = None,
    sessions: Any = None,
    observer: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """Play one game; the reply message for the runner (the same in a worker and inline).
    `play_match` replaces the referee's (tests inject arena-side faults with it); `observer`
    is the referee's: it sees every completed turn (a TurnEvent)."""
    gid = msg["game_id"]
    play = play_match or referee_play_match
    extra = {} if observer is None else {"observer": observer}
    try:
        record = await play(match_config(specs, msg["match"], sessions), **extra)
    except PlatformFault as e:
        return void_of(gid, e)
    except OSError as e:
        # the host's (a pipe, a file, a process table): the arena's failure, voided like a
        # platform fault, without the traceback of a bug
        return void_of(gid, e)
    except ArenaError as e:
        return {"type": "error", "game_id": gid, "user": True, "message": str(e)}
    except Exception as e:
        # a bug in the arena is the arena's failure, never a bot's: void the game (it is played
        # again, up to max_attempts) and keep the traceback for the operator
        traceback.print_exc(file=sys.stderr)
        return void(gid, Fault.INTERNAL, f"internal error {type(e).__name__}: {e}")
    if isinstance(record, GameRecord):
        data = record.to_dict(copy=False)  # encoded at once: no copy needed
    else:
        data = record.to_dict() if hasattr(record, "to_dict") else dict(record)
    return {"type": "record", "game_id": gid, "record": data}


async def main() -> None:
    async with requests_on_stdin() as (nursery, incoming, stdout):
        prepare_sandbox()  # before the runner's `init` comes: it may take a while
        # bots kept between games (tournaments with `reuse`): one game at a time in a worker
        sessions = SessionPool(nursery)
        try:
            await _serve(incoming, stdout, sessions)
        finally:
            await sessions.aclose()


async def _serve(
    incoming: trio.MemoryReceiveChannel[dict[str, Any]], stdout: Any, sessions: Any
) -> None:
    """Answer the runner's requests in order, one game at a time."""
    specs: list[Any] = []
    async with incoming:
        async for msg in incoming:
            if msg["type"] == "init":
                try:
                    specs = load_specs(msg["bots"])
                    warm_up(msg.get("games", ()), specs)
                    reply = {"type": "ready"}
                except ArenaError as e:
                    reply = {"type": "error", "game_id": None, "user": True, "message": str(e)}
            elif msg["type"] == "play" and "bots" in msg:
                try:
                    game_specs = load_specs(msg["bots"])
                except ArenaError as e:
                    reply = {
                        "type": "error",
                        "game_id": msg["game_id"],
                        "user": True,
                        "message": str(e),
                    }
                else:
                    play = _play_reporting if msg.get("progress") else _play_quietly
                    reply = await play(game_specs, msg, stdout, sessions)
            elif msg["type"] == "play":
                reply = await play_one(specs, msg, sessions=sessions)
            else:
                reply = {
                    "type": "error",
                    "game_id": None,
                    "user": False,
                    "message": f"unknown request {msg.get('type')!r}",
                }
            await stdout.send_all(encode_reply(reply))


async def _play_quietly(
    specs: list[Any], msg: dict[str, Any], stdout: Any, sessions: Any
) -> dict[str, Any]:
    return await play_one(specs, msg, sessions=sessions)


#: seconds between the turn reports' writes: turns played in between go in one write
REPORT_EVERY = 0.05


async def _play_reporting(
    specs: list[Any], msg: dict[str, Any], stdout: Any, sessions: Any
) -> dict[str, Any]:
    """`play_one`, with a `turn` message to the runner for every completed turn.

    The referee's observer is synchronous and must not wait: it encodes the turn and keeps it;
    at most every REPORT_EVERY seconds the turns kept so far go, in one piece, to a channel
    that a task of its own writes to the pipe (a game of instant bots plays hundreds of turns
    a second, a page needs a few updates a second). The channel holds at most one game's
    turns, and the runner reads its pipe all the time. The last turns are written before the
    game's reply."""
    gid = msg["game_id"]
    send, receive = trio.open_memory_channel[bytes](math.inf)
    kept: list[bytes] = []
    last = [trio.current_time()]

    def observer(event: Any) -> None:
        kept.append(encode({"type": "turn", "game_id": gid, "entry": event.entry}))
        now = trio.current_time()
        if now - last[0] >= REPORT_EVERY:
            send.send_nowait(b"".join(kept))
            kept.clear()
            last[0] = now

    async def pump() -> None:
        async with receive:
            async for lines in receive:
                await stdout.send_all(lines)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(pump)
        with send:
            reply = await play_one(specs, msg, sessions=sessions, observer=observer)
    if kept:
        await stdout.send_all(b"".join(kept))
    return reply


if __name__ == "__main__":
    trio.run(main)
