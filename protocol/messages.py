"""Validation of the messages a bot sends (protocol v1), with error texts meant for bot authors.

The referee treats every malformed message as a protocol error that forfeits the game, so the
text must let the author fix the bot without reading the referee's source:
`move.actions must be a non-empty list of strings, got an empty list`. Unknown extra fields are
ignored on purpose (forward compatibility): a v1 referee accepts a bot written for a later
minor revision that adds optional fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protocol.framing import ProtocolError, kind_of

PROTOCOL_VERSION = 1
#: the `seed` of `hello` is an integer in 0 .. SEED_MAX (it fits a signed 64-bit integer, which
#: every msgpack and JSON library can represent)
SEED_MAX = 2**63 - 1

#: the JSON Schema (draft 2020-12) of every message of protocol 1, shipped with the package: the
#: same rules as the checks below (docs/protocol.md, "JSON Schema"); the referee's tests validate
#: every message it sends, and the bundled bots' replies, against it
SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "protocol.json"

#: messages a bot may send; `log` may come at any time, the others only as a reply
BOT_MESSAGE_TYPES: tuple[str, ...] = ("ready", "move", "resign", "log")
#: messages the referee sends
REFEREE_MESSAGE_TYPES: tuple[str, ...] = ("hello", "turn", "end")

#: what each request expects back (besides `log`, which is always allowed)
REPLIES: dict[str, tuple[str, ...]] = {
    "hello": ("ready",),
    "turn": ("move", "resign"),
}


def _want_str(msg: dict[str, Any], mtype: str, key: str, required: bool) -> None:
    if key not in msg:
        if required:
            raise ProtocolError(f"{mtype} message is missing the field {key!r} (a string)")
        return
    value = msg[key]
    if type(value) is not str:
        raise ProtocolError(f"{mtype}.{key} must be a string, got {kind_of(value)}")


def _want_bool(msg: dict[str, Any], mtype: str, key: str) -> None:
    if key in msg and type(msg[key]) is not bool:
        raise ProtocolError(f"{mtype}.{key} must be a boolean, got {kind_of(msg[key])}")


def _check_ready(msg: dict[str, Any]) -> None:
    _want_str(msg, "ready", "name", True)
    if not msg["name"].strip():
        raise ProtocolError("ready.name must be a non-empty string")
    _want_str(msg, "ready", "version", False)
    _want_str(msg, "ready", "author", False)
    _want_bool(msg, "ready", "legal")
    _want_bool(msg, "ready", "sessions")
    if "protocol" in msg:
        version = msg["protocol"]
        if type(version) is not int:
            raise ProtocolError(f"ready.protocol must be an integer, got {kind_of(version)}")
        if version != PROTOCOL_VERSION:
            raise ProtocolError(f"bot speaks protocol {version}, referee speaks {PROTOCOL_VERSION}")


def _check_move(msg: dict[str, Any]) -> None:
    actions = msg.get("actions")
    if type(actions) is not list or not actions:
        if "actions" not in msg:
            got = "nothing (the field is missing)"
        elif type(actions) is list:
            got = "an empty list"
        else:
            got = kind_of(actions)
        raise ProtocolError(f"move.actions must be a non-empty list of strings, got {got}")
    for i, action in enumerate(actions):
        if type(action) is not str:
            raise ProtocolError(
                f"move.actions must be a non-empty list of strings, "
                f"but element {i} is {kind_of(action)}"
            )
    _want_bool(msg, "move", "more")


def _check_resign(msg: dict[str, Any]) -> None:
    _want_str(msg, "resign", "reason", False)


def _check_log(msg: dict[str, Any]) -> None:
    _want_str(msg, "log", "message", True)


_CHECKS = {
    "ready": _check_ready,
    "move": _check_move,
    "resign": _check_resign,
    "log": _check_log,
}


def check_bot_message(msg: dict[str, Any]) -> str:
    """Validate one decoded bot message and return its type; raises ProtocolError."""
    mtype = msg.get("type")
    if mtype is None:
        raise ProtocolError("message has no 'type' field")
    if type(mtype) is not str:
        raise ProtocolError(f"message field 'type' must be a string, got {kind_of(mtype)}")
    check = _CHECKS.get(mtype)
    if check is None:
        if mtype in REFEREE_MESSAGE_TYPES:
            raise ProtocolError(f"{mtype!r} is a referee message, a bot may not send it")
        raise ProtocolError(
            f"unknown message type {mtype!r} (a bot sends: {', '.join(BOT_MESSAGE_TYPES)})"
        )
    check(msg)
    return mtype


def check_reply(msg: dict[str, Any], request: str) -> str:
    """Validate a reply to `request` (`hello` or `turn`); a log is not a reply."""
    mtype = check_bot_message(msg)
    expected = REPLIES[request]
    if mtype not in expected:
        want = " or ".join(repr(t) for t in expected)
        raise ProtocolError(f"expected {want} in reply to {request!r}, got {mtype!r}")
    return mtype


__all__ = [
    "BOT_MESSAGE_TYPES",
    "PROTOCOL_VERSION",
    "REFEREE_MESSAGE_TYPES",
    "REPLIES",
    "SCHEMA_PATH",
    "check_bot_message",
    "check_reply",
]
