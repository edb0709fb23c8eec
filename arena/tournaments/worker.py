"""A referee worker process: plays the games the tournament runner sends it, one at a time.

Why processes: the referee is Python, and with instant-reply bots its per-turn work (rules
engine, encoding, pipe wake-ups) is most of a game's cost. In one process all games share one
interpreter and one event loop, so two concurrent games interfere; one worker process per
concurrent game lets the operating system spread the referees over the cores.

Protocol with the runner, JSON Lines over the worker's stdin/stdout:
- runner -> worker: `{"type": "init", "bots": [BotEntry.to_dict(), ...], "games": [...]}`
  once (`games` optional, names or `{"name", "options"}`: the worker imports their engines,
  sets each game up once, and imports the referee and the process sandbox before it answers,
  so that this start-up is not charged to the first game), then
  `{"type": "play", "game_id", "match": {...}}` (the MatchConfig fields, bots by index). A
  `play` may carry its own `"bots"` list (the league: different bots every game), each entry
  optionally with `"build": false` (built already, at submission, in the build sandbox: never
  build at play time).
- worker -> runner: `{"type": "record", "game_id", "record": {...}}` for a finished game,
  preceded, when the `play` asked for `"progress": true` (the league's live pages), by one
  `{"type": "turn", "game_id", "entry": {...}}` per completed turn (the record's turn entry);
  `{"type": "void", "game_id", "reason"}` when the arena failed (the game is replayed),
  `{"type": "error", "game_id", "user": bool, "message"}` for a user error such as a bad
  manifest (stops the run); an unexpected exception in the referee voids the game like a
  sandbox fault does.

The worker lives in its own session, so a Ctrl-C in the terminal reaches only the runner, which
then closes the workers. When its stdin closes (the runner stopped or was killed, even by
SIGKILL) the worker cancels the game in play, which kills its bots, and exits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import re
import sys
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import trio

from arena.errors import ArenaError


class LineReader:
    """Splits a byte stream into lines; `None` at end of stream."""

    def __init__(self, stream: trio.abc.ReceiveStream) -> None:
        self.stream = stream
        self.buf = bytearray()

    async def readline(self) -> bytes | None:
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[: i + 1]
                return line
            chunk = await self.stream.receive_some(1 << 16)
            if not chunk:
                return None
            self.buf += chunk


def encode(msg: Any) -> bytes:
    """One line of the pipe: compact JSON, UTF-8. orjson writes it (a game record takes the
    standard library ten times longer, a cost of every game with instant bots); what orjson
    refuses (integers beyond 64 bits, keys that are not strings) the standard library
    writes. Like the protocol's own encoder, orjson writes a NaN as null: no message of the
    arena carries one. (Imported here: orjson's import costs milliseconds of every command
    that loads the runner.)"""
    import orjson

    try:
        return orjson.dumps(msg, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


#: a run of digits that may be an integer orjson would read as a float (see `decode`)
_LONG_DIGITS = re.compile(rb"[0-9]{19,}")
_INT64_MAX = 2**63 - 1


def decode(line: bytes) -> Any:
    """A line of the pipe (`encode`'s output), ValueError if it is not JSON: orjson where it
    can, the standard library where orjson refuses (NaN) or would be wrong: orjson reads an
    integer beyond 64 bits as a float, so a line with a run of digits that long (in a string,
    most likely) is read by the standard library."""
    import orjson

    for m in _LONG_DIGITS.finditer(line):
        digits = m.group()
        if len(digits) > 19 or int(digits) > _INT64_MAX:
            return json.loads(line)
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def record_text(reply: dict[str, Any], line: bytes) -> bytes | None:
    """The record's own JSON text inside a worker's reply line, which `encode` writes as
    `{"type":"record","game_id":<id>,"record":{...}}` (compact, like the stores' own
    encoding): with that exact start and no other key, the rest up to the final brace is the
    record, so the receiver need not encode it again. None otherwise."""
    gid = reply.get("game_id")
    if set(reply) != {"type", "game_id", "record"} or not isinstance(gid, int | str):
        return None
    head = b'{"type":"record","game_id":' + encode(gid).rstrip() + b',"record":'
    body = line.rstrip(b"\r\n")
    if not (body.startswith(head) and body.endswith(b"}")):
        return None
    return body[len(head) : -1]


@asynccontextmanager
async def requests_on_stdin() -> AsyncIterator[
    tuple[trio.Nursery, trio.MemoryReceiveChannel[dict[str, Any]], trio.lowlevel.FdStream]
]:
    """The JSON Lines pipe of a worker process (this one's and the league's game slots'):
    a nursery, the requests read from stdin, and the stream to answer on.

    The protocol gets a private copy of stdout and fd 1 itself goes to stderr, so a stray print
    anywhere in the referee or a library can never corrupt the pipe. A task reads the requests
    ahead (one waits at most), so that the end of stdin is seen while a game is played: the
    peer is gone, and the nursery, with the game in play and its bots, is cancelled."""
    sys.stdout.flush()
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    reader = LineReader(trio.lowlevel.FdStream(os.dup(sys.stdin.fileno())))
    stdout = trio.lowlevel.FdStream(proto_fd)
    async with trio.open_nursery() as nursery:
        requests, incoming = trio.open_memory_channel[dict[str, Any]](1)

        async def read_requests() -> None:
            async with requests:
                while (line := await reader.readline()) is not None:
                    await requests.send(decode(line))
            nursery.cancel_scope.cancel()

        nursery.start_soon(read_requests)
        yield nursery, incoming, stdout
        nursery.cancel_scope.cancel()


def resolve_bot(entry: dict[str, Any]) -> Any:
    """A config's bot entry (BotEntry.to_dict()) as the BotSpec that plays: the manifest with
    the entry's name, extra arguments and environment applied (and, for the league, no build
    at play time)."""
    from arena.referee import load_bot

    spec = load_bot(entry["source"])
    changes: dict[str, Any] = {}
    if entry.get("alias"):
        changes["name"] = entry["alias"]
    if entry.get("args"):
        changes["command"] = (*spec.command, *entry["args"])
    if entry.get("env"):
        changes["env"] = tuple(sorted({**dict(spec.env), **entry["env"]}.items()))
    if entry.get("build") is False:
        changes["build"] = None
    return dataclasses.replace(spec, **changes) if changes else spec


def warm_up(games: Any, specs: Any = ()) -> None:
    """Import what a game needs (the referee, the process sandbox, the games' engines, the
    JSON encoder of bots and pipe), start the bot spawner and probe what the sandbox can use
    now, at the worker's start, rather than during its first game. `games` holds names, or
    `{"name", "options"}`: that game is also set up once, so what its engine computes once
    per board is ready. The executables of `specs` (the bots) are hashed, as every game
    records them (the hash is remembered while the file stays the same)."""
    import orjson  # noqa: F401

    import arena.referee.match  # noqa: F401
    from arena.games import GAME_NAMES, game_class, make_game
    from arena.sandbox.process import capabilities
    from arena.sandbox.spawner import start_spawner

    start_spawner()
    capabilities()  # what the process sandbox can use: probed once, tens of milliseconds
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


def arena_faults() -> tuple[type[BaseException], ...]:
    """Exceptions that mean the arena failed, not a bot: the game is voided and replayed."""
    from arena.sandbox import SandboxFault

    faults: list[type[BaseException]] = [SandboxFault, OSError]
    try:
        from arena.referee import RefereeFault

        faults.append(RefereeFault)
    except ImportError:
        pass
    return tuple(faults)


def load_specs(bots: list[dict[str, Any]]) -> list[Any]:
    return [resolve_bot(b) for b in bots]


def match_config(specs: list[Any], m: dict[str, Any], sessions: Any = None) -> Any:
    """The referee's MatchConfig for a `play` request; `sessions` (this worker's SessionPool)
    is used when the tournament allows reuse (`reuse = true`)."""
    from arena.referee import MatchConfig, TimeControl
    from arena.sandbox import Limits

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
    `observer` is the referee's: it sees every completed turn (a TurnEvent)."""
    if play_match is None:
        from arena.referee import play_match

    gid = msg["game_id"]
    extra = {} if observer is None else {"observer": observer}
    try:
        record = await play_match(match_config(specs, msg["match"], sessions), **extra)
    except arena_faults() as e:
        return {"type": "void", "game_id": gid, "reason": f"{type(e).__name__}: {e}"}
    except ArenaError as e:
        return {"type": "error", "game_id": gid, "user": True, "message": str(e)}
    except Exception as e:
        # a bug in the arena is the arena's failure, never a bot's: void the game (it is played
        # again, up to max_attempts) and keep the traceback for the operator
        traceback.print_exc(file=sys.stderr)
        reason = f"internal error {type(e).__name__}: {e}"
        return {"type": "void", "game_id": gid, "reason": reason}
    from arena.referee.record import GameRecord

    if isinstance(record, GameRecord):
        data = record.to_dict(copy=False)  # encoded at once: no copy needed
    else:
        data = record.to_dict() if hasattr(record, "to_dict") else dict(record)
    return {"type": "record", "game_id": gid, "record": data}


async def main() -> None:
    async with requests_on_stdin() as (nursery, incoming, stdout):
        # bots kept between games (tournaments with `reuse`): one game at a time in a worker
        from arena.referee.sessions import SessionPool

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
            await stdout.send_all(encode(reply))


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
