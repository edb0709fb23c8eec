"""Every message the referee writes to a bot in real games of every variant, in both encodings,
and every reply of the bundled bots (random-py, random-c, random-js, strong), validated against
the protocol's JSON Schema (protocol/schema/protocol.json). The bytes are the real ones: each
bot runs behind tests/referee/bots/tap.py, which copies what crosses its pipes to its stderr,
and the game record keeps that stderr. So the schema cannot drift from the referee: a field the
referee starts to send, or stops sending, fails here until the schema (and docs/protocol.md)
says so."""

from __future__ import annotations

import base64
import sys
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio

from arena.referee import GameRecord, MatchConfig, TimeControl, play_match
from arena.referee.bots import BotSpec
from arena.referee.sessions import SessionPool
from protocol.framing import Decoder

from ..protocol.support import errors
from .conftest import bundled

TAP = Path(__file__).resolve().parent / "bots" / "tap.py"
#: a generous clock: the tap adds a process hop to every message on a loaded machine
TC = TimeControl(startup=30.0, base=60.0, increment=1.0)


def tapped(spec: BotSpec) -> BotSpec:
    """The bot behind the tap (built first: the tap's command line names no build output)."""
    spec.ensure_built()
    return replace(spec, command=(sys.executable, str(TAP), *spec.command), build=None)


def wire(record: GameRecord, seat: int, encoding: str) -> tuple[list[dict], list[dict]]:
    """(messages the referee wrote to the seat, messages the seat wrote back), from the tap's
    lines in the record's stderr of that seat."""
    stderr = record.stderr[seat]
    assert len(stderr) < 60_000, "near the 64 KiB the record keeps: shorten the game"
    streams = {"in": Decoder(encoding, 1 << 20), "out": Decoder(encoding, 1 << 20)}
    got: dict[str, list[dict]] = {"in": [], "out": []}
    for line in stderr.splitlines():
        if not line.startswith("TAP "):
            continue
        _, direction, data = line.split(" ")
        chunk = zlib.decompress(base64.b64decode(data))
        got[direction].extend(streams[direction].feed(chunk))
    for direction, decoder in streams.items():
        assert decoder.pending_bytes == 0, f"{direction}: a message cut short"
    return got["in"], got["out"]


def check_wire(record: GameRecord, seat: int, encoding: str, kept: bool = False) -> list[dict]:
    """Validate one seat's traffic; returns the referee's messages. The stderr of a `kept`
    session process's game may miss its `end` and start with the previous game's (written
    about when the record took the one and cleared for the other), which is validated too."""
    sent, replies = wire(record, seat, encoding)
    for msg in sent:
        assert errors("referee_message", msg) == [], msg["type"]
    if kept:
        while sent and sent[0]["type"] == "end":
            sent = sent[1:]
    assert sent and sent[0]["type"] == "hello", [m.get("type") for m in sent[:3]]
    assert replies and replies[0]["type"] == "ready", replies[:1]
    for msg in replies:
        assert errors("bot_message", msg) == [], msg
    # nothing lost on the way: one turn message per request the record counts, one reply each
    requests = sum(t["requests"] for t in record.turns if t["seat"] == seat)
    assert sum(m["type"] == "turn" for m in sent) == requests
    assert sum(m["type"] in ("move", "resign") for m in replies) == requests
    if not kept:
        assert sent[-1]["type"] == "end"
        assert sent[-1]["result"] == record.result["result"]
    return sent


#: one game per variant; every variant meets both encodings (random-py and strong speak
#: msgpack, random-c and random-js JSON Lines) and every bundled bot plays; the settings vary
#: what `hello` carries (a CPU clock, a move time, one seat's time bank and first-move time,
#: bot options, time odds)
GAMES = [
    ("papagra", {"board": "hex 4", "max_turns": 30, "extra_removals": 1},
     "random-py", "random-js", {}),
    ("wrigglers", {"max_turns": 30}, "random-c", "strong",
     {"bot_options": ({"depth": 2, "book": ["e5"]}, None)}),
    ("stripes", {"max_turns": 20}, "strong", "random-c",
     {"time_control": TimeControl(startup=30.0, move_time=20.0),
      "seat_time_controls": (TimeControl(startup=30.0, move_time=20.0, bank=5.0, first_move=25.0),
                             None)}),
    ("quadraphages", {"max_turns": 16}, "random-js", "strong",
     {"time_control": TimeControl(startup=30.0, base=60.0, increment=1.0, clock="cpu")}),
    ("hexaphage", {}, "random-c", "random-py",
     {"seat_time_controls": (TimeControl(startup=30.0, base=90.0, increment=2.0), None)}),
]  # fmt: skip


@pytest.mark.parametrize("game, options, a, b, extra", GAMES, ids=[g[0] for g in GAMES])
async def test_every_message_of_a_real_game_matches_the_schema(game, options, a, b, extra):
    specs = (bundled(a), bundled(b))
    settings: dict[str, Any] = {"time_control": TC, **extra}
    config = MatchConfig(
        game=game, options=options, bots=tuple(tapped(s) for s in specs), seed=11, **settings
    )
    record = await play_match(config)
    assert not record.result["forfeit"], record.result
    kinds: set[str] = set()
    for seat, spec in enumerate(specs):
        sent = check_wire(record, seat, spec.encoding)
        kinds |= {m["type"] for m in sent}
        hello = sent[0]
        assert (hello["game"], hello["seat"]) == (game, seat)
        if "bot_options" in extra and extra["bot_options"][seat]:
            assert hello["bot_options"] == extra["bot_options"][seat]
        turns = [m for m in sent if m["type"] == "turn"]
        # what the bot saw is what the engine had: the first request's position replays
        assert turns[0]["position"]["game"] == game
        assert all(t["seat"] == seat for t in turns)
    assert kinds == {"hello", "turn", "end"}


async def test_a_session_s_next_hello_matches_the_schema():
    """A kept process's next game starts with a hello like the first (the `end` messages
    count where the records caught them: see check_wire)."""
    spec = bundled("random-py")
    bot = tapped(spec)
    async with trio.open_nursery() as nursery:
        pool = SessionPool(nursery)
        records = []
        for seed in (1, 2):
            config = MatchConfig(
                game="papagra", options={"board": "hex 3", "max_turns": 6}, bots=(bot, bot),
                time_control=TC, seed=seed, sessions=pool,
            )  # fmt: skip
            records.append(await play_match(config))
        await pool.aclose()
    second = records[1]
    assert [r["session_game"] for r in second.ready] == [2, 2], second.ready
    for seat in (0, 1):
        sent = check_wire(second, seat, spec.encoding, kept=True)
        assert sent[0]["seat"] == seat and sent[0]["match_id"] == second.match_id


async def test_the_schema_refuses_real_referee_messages_with_a_field_more_or_less():
    """Closed where the referee is exact: each real message fails with an unknown field added
    or any required field taken away (so a new field needs its line in the schema)."""
    spec = bundled("random-js")
    config = MatchConfig(
        game="hexaphage", options={"max_turns": 6}, bots=(tapped(spec), tapped(spec)),
        time_control=TC, seed=3,
    )  # fmt: skip
    record = await play_match(config)
    sent = check_wire(record, 0, spec.encoding)
    by_type = {m["type"]: m for m in sent}
    assert set(by_type) == {"hello", "turn", "end"}
    for mtype, msg in by_type.items():
        assert errors("referee_message", {**msg, "surprise": 1}) != [], mtype
        for field in msg:
            if field in ("legal", "bot_options"):  # optional
                continue
            less = {k: v for k, v in msg.items() if k != field}
            assert errors("referee_message", less) != [], (mtype, field)
    turn = by_type["turn"]
    position = turn["position"]
    assert errors("referee_message", {**turn, "position": {**position, "pending": 3}}) != []
    assert errors("referee_message", {**turn, "position": {**position, "extra": 1}}) != []
    result = {"winner": 0, "reason": "blocked", "scores": [1, 0], "detail": ""}
    over = {**position, "result": result, "to_move": None}
    assert errors("referee_message", {**turn, "position": over}) != [], "a turn of a live game"
    assert errors("position", over) == []
