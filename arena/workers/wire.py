"""The pipe between a runner and its game processes: JSON Lines, both sides of it.

A referee worker process (arena/workers/child.py) and a league worker's game slot
(arena/league/slot.py) read requests on stdin and answer on stdout, one JSON object a line; the
tournament runner and the league's executor (arena/workers/process.py) write the requests and
read the answers. Everything both sides must agree on is here: the encoding (`encode`,
`decode`), reading lines (`LineReader`), a game process's own end of the pipe
(`requests_on_stdin`), keeping a record's text as it came (`record_text`) and how a void names
its fault (`Fault`, `void`).

A void says what failed as a field, `"fault"`, beside its text: `{"type": "void", "game_id",
"fault", "reason"}`. The fault is the `fault` of the PlatformFault that voided the game
(arena/errors.py), so the receiver decides by a word (the league's void kinds:
arena/league/voids.py), never by parsing the text, which stays as it always was (the class name,
a colon, the message) for the people who read voids in reports and pages.

Fast paths, each measured (benchmarks/tournament.py, benchmarks/versus.py): orjson encodes (a
game record takes the standard library ten times longer, a cost of every game with instant
bots), and the receiver keeps a record's bytes as they came instead of encoding it again: a
record reply sends the record's small fields ahead of its text, which the receiver stores
without parsing it (`encode_reply`); `record_text` cuts a record's text out of a one-line
reply.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import StrEnum
from typing import Any

import trio


class Fault(StrEnum):
    """What failed, when a game is voided: the `fault` of every PlatformFault subclass."""

    SANDBOX = "sandbox"  # SandboxFault: the isolation could not run a bot (or a bot's archive)
    REFEREE = "referee"  # RefereeFault: the referee or an engine failed
    HOST_STALL = "host_stall"  # HostStall: the host, not a bot, made a reply late
    WORKER = "worker"  # WorkerDied: the game's process died or broke the protocol
    INTERNAL = "internal"  # anything else: a bug in the arena


def void(game_id: Any, fault: str, reason: str) -> dict[str, Any]:
    """A void reply: the game is replayed; `fault` says what failed, `reason` in words."""
    return {"type": "void", "game_id": game_id, "fault": str(fault), "reason": reason}


def void_of(game_id: Any, e: BaseException) -> dict[str, Any]:
    """The void reply for a platform fault (or an OSError of the host): its class name and
    message as the reason, as voids have always read."""
    return void(game_id, getattr(e, "fault", Fault.INTERNAL), f"{type(e).__name__}: {e}")


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


#: the small fields of a game record: what the receiver of a record reply reads of it (its
#: result for the results table, its bots and game, its times), sent ahead of its text
RECORD_HEAD = (
    "format",
    "match_id",
    "game",
    "options",
    "seed",
    "bots",
    "time_control",
    "result",
    "started_at",
    "finished_at",
    "duration",
    "turn_count",
)


def encode_reply(reply: dict[str, Any]) -> bytes:
    """A game process's answer on the pipe. A record reply goes as two lines: `{"type":
    "record", "game_id", "head": {the record's RECORD_HEAD fields}, "size": N}`, then the
    record's own JSON text (N bytes and a newline), which the receiver keeps as it came for
    its store and never parses (`WorkerProcess`, arena/workers/process.py): parsing a
    363-turn record (85 kB) cost the tournament runner a millisecond of its CPU per game,
    most of the time from the game's last turn to its stored result (benchmarks/versus.py).
    Every other reply is one line (`encode`)."""
    if reply.get("type") != "record" or set(reply) != {"type", "game_id", "record"}:
        return encode(reply)
    record = reply["record"]
    text = encode(record)
    head = {k: record[k] for k in RECORD_HEAD if k in record}
    first = {"type": "record", "game_id": reply["game_id"], "head": head, "size": len(text) - 1}
    return encode(first) + text


#: every digit as "0", and a run of 19 of them: where a line may hold an integer orjson would
#: read as a float (see `decode`). Found by bytes.find on the translated line: a pattern
#: (`re`) took 12 to 24 us to scan a record reply's head, several times orjson's whole parse
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_RUN = b"0" * 19
_INT64_MAX = 2**63 - 1


def _long_integer(line: bytes) -> bool:
    """Does `line` hold a run of digits that is an integer beyond 64 bits: 19 digits or more,
    not after a decimal point (a record's times, 0.00012345678901234567, are floats whichever
    parser reads them; taking them for integers sent most records to the standard library,
    several times slower)?"""
    zeros = line.translate(_DIGITS_AS_ZERO)
    start = zeros.find(_RUN)
    while start >= 0:
        end = start + len(_RUN)
        while end < len(zeros) and zeros[end] == 0x30:
            end += 1
        after_point = start and line[start - 1] == 0x2E  # "."
        if not after_point and (end - start > 19 or int(line[start:end]) > _INT64_MAX):
            return True
        start = zeros.find(_RUN, end)
    return False


def decode(line: bytes) -> Any:
    """A line of the pipe (`encode`'s output), ValueError if it is not JSON: orjson where it
    can, the standard library where orjson refuses (NaN) or would be wrong: orjson reads an
    integer beyond 64 bits as a float, so a line with a run of digits that long (in a string,
    most likely) is read by the standard library."""
    import orjson

    if _long_integer(line):
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


#: bytes a game process's answers may fill its pipe with before its peer reads them
PIPE_BYTES = 1 << 20


def widen_pipe(fd: int) -> None:
    """Let the pipe on `fd` hold PIPE_BYTES (where the kernel allows: Linux's default limit
    for a process is 1 MiB), so that a game's record (about 85 kB for 363 turns; a pipe holds
    64 kB) is written at once and the process starts its next game without waiting for its
    peer to come and read it: the runner's handling of a record stays off the slot's
    critical path (benchmarks/versus.py). Best effort: a pipe that stays small still works."""
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setpipe is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, setpipe, PIPE_BYTES)


@asynccontextmanager
async def requests_on_stdin() -> AsyncIterator[
    tuple[trio.Nursery, trio.MemoryReceiveChannel[dict[str, Any]], trio.lowlevel.FdStream]
]:
    """The JSON Lines pipe of a game process (a referee worker's, a league slot's): a nursery,
    the requests read from stdin, and the stream to answer on.

    The protocol gets a private copy of stdout and fd 1 itself goes to stderr, so a stray print
    anywhere in the referee or a library can never corrupt the pipe. A task reads the requests
    ahead (one waits at most), so that the end of stdin is seen while a game is played: the
    peer is gone, and the nursery, with the game in play and its bots, is cancelled."""
    sys.stdout.flush()
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    widen_pipe(proto_fd)
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
