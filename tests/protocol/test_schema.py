"""The JSON Schema of protocol 1 (protocol/schema/protocol.json): a valid draft 2020-12 schema,
the examples of docs/protocol.md pass it, and it refuses what the referee refuses: the bot
messages the referee turns into protocol errors, and (by hypothesis) the referee's check and the
schema agree on any map a bot could send. The real messages of real games are checked in
tests/referee/test_wire_schema.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from protocol.framing import ProtocolError
from protocol.messages import BOT_MESSAGE_TYPES, REFEREE_MESSAGE_TYPES, check_bot_message

from .support import errors, schema

ROOT = Path(__file__).resolve().parents[2]


def test_the_schema_is_valid_draft_2020_12_and_names_every_message():
    root = schema()
    Draft202012Validator.check_schema(root)
    assert root["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    defs = root["$defs"]
    for mtype in (*REFEREE_MESSAGE_TYPES, *BOT_MESSAGE_TYPES):
        assert defs[mtype]["properties"]["type"] == {"const": mtype}
    assert set(defs["referee_message"]["properties"]["type"]["enum"]) == set(REFEREE_MESSAGE_TYPES)
    assert set(defs["bot_message"]["properties"]["type"]["enum"]) == set(BOT_MESSAGE_TYPES)
    # every reference resolves (a typo in a $ref would only fail on the instance that meets it)
    refs = re.findall(r'"\$ref": "([^"]+)"', json.dumps(root))
    for ref in refs:
        assert ref.startswith("#/$defs/") and ref.split("/")[-1] in defs, ref


def _doc_examples() -> list[tuple[str, dict[str, Any]]]:
    """The complete messages of docs/protocol.md's example exchange (abridged ones skipped)."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    out = []
    for arrow, body in re.findall(r"^(<-|->) (\{.*\})$", text, re.MULTILINE):
        try:
            msg = json.loads(body)
        except ValueError:
            continue  # `...` abridged
        out.append(("referee_message" if arrow == "<-" else "bot_message", msg))
    return out


def test_the_examples_of_the_protocol_page_pass():
    examples = _doc_examples()
    kinds = {msg["type"] for _, msg in examples}
    assert {"hello", "end", "ready", "move", "log"} <= kinds, kinds
    for definition, msg in examples:
        assert errors(definition, msg) == [], msg


#: bot messages the referee refuses (a protocol error), each with the field at fault
REFUSED = [
    {"actions": ["e5"]},
    {"type": 3},
    {"type": "dance"},
    {"type": "hello", "protocol": 1},
    {"type": "move"},
    {"type": "move", "actions": []},
    {"type": "move", "actions": "e5"},
    {"type": "move", "actions": ["e5", 3]},
    {"type": "move", "actions": ["e5"], "more": 1},
    {"type": "ready"},
    {"type": "ready", "name": ""},
    {"type": "ready", "name": " \t"},
    {"type": "ready", "name": 42},
    {"type": "ready", "name": "b", "protocol": 2},
    {"type": "ready", "name": "b", "protocol": "1"},
    {"type": "ready", "name": "b", "legal": "true"},
    {"type": "ready", "name": "b", "sessions": 1},
    {"type": "ready", "name": "b", "version": 1.5},
    {"type": "resign", "reason": None},
    {"type": "log"},
    {"type": "log", "message": ["x"]},
]
ACCEPTED = [
    {"type": "move", "actions": ["e5"]},
    {"type": "move", "actions": ["e5", "-c3"], "more": True, "future_field": {"x": 1}},
    {"type": "ready", "name": "b", "version": "1", "author": "me", "legal": True},
    {"type": "ready", "name": "b", "protocol": 1, "sessions": False},
    {"type": "resign"},
    {"type": "resign", "reason": "lost cause"},
    {"type": "log", "message": ""},
]


@pytest.mark.parametrize("msg", REFUSED, ids=lambda m: json.dumps(m))
def test_the_schema_refuses_what_the_referee_refuses(msg):
    with pytest.raises(ProtocolError):
        check_bot_message(msg)
    assert errors("bot_message", msg) != []


@pytest.mark.parametrize("msg", ACCEPTED, ids=lambda m: json.dumps(m))
def test_the_schema_accepts_what_the_referee_accepts(msg):
    assert check_bot_message(msg) == msg["type"]
    assert errors("bot_message", msg) == []
    assert errors(msg["type"], msg) == []


#: any JSON value but a float with an integral value: JSON Schema cannot tell 1.0 from 1 (the
#: referee refuses `protocol: 1.0`, the schema accepts it; docs/protocol.md says so)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
    | st.text(max_size=6)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
#: a valid message of each type, before mutations
_valid = {
    "ready": st.fixed_dictionaries(
        {"name": st.text(min_size=1, max_size=4)},
        optional={
            "version": st.text(max_size=3),
            "author": st.text(max_size=3),
            "legal": st.booleans(),
            "protocol": st.just(1),
            "sessions": st.booleans(),
        },
    ),
    "move": st.fixed_dictionaries(
        {"actions": st.lists(st.text(max_size=4), min_size=1, max_size=3)},
        optional={"more": st.booleans()},
    ),
    "resign": st.fixed_dictionaries({}, optional={"reason": st.text(max_size=4)}),
    "log": st.fixed_dictionaries({"message": st.text(max_size=4)}),
}
_FIELDS = ["type", "name", "version", "author", "legal", "protocol", "sessions", "actions",
           "more", "reason", "message", "extra"]  # fmt: skip
_DELETE = object()
#: values that are right for some field, so that a mutation often keeps a message valid
_plausible = st.sampled_from(
    ["bot", "", " ", "\u2003", "e5", "move", "log", "hello", True, False, 0, 1, 2, ["e5"], [],
     ["e5", 1]]
)  # fmt: skip
_mutations = st.lists(
    st.tuples(st.sampled_from(_FIELDS), st.just(_DELETE) | _plausible | _json), max_size=2
)


@settings(max_examples=800, deadline=None)
@given(
    msg=st.sampled_from(sorted(_valid)).flatmap(
        lambda t: _valid[t].map(lambda m: {"type": t, **m})
    ),
    mutations=_mutations,
)
def test_schema_and_referee_agree_on_any_bot_message(msg, mutations):
    for field, value in mutations:
        if value is _DELETE:
            msg.pop(field, None)
        else:
            msg[field] = value
    try:
        check_bot_message(msg)
        referee_ok = True
    except ProtocolError:
        referee_ok = False
    problems = errors("bot_message", msg)
    assert referee_ok == (not problems), (msg, problems)


def test_a_closed_referee_message_refuses_an_unknown_field_and_a_missing_one():
    """Referee messages are closed: a field the referee starts sending without the schema
    (and the docs) knowing it fails its tests; `end` is small enough to show both here."""
    end = {
        "type": "end", "result": "0-1", "winner": 1, "reason": "both_passed",
        "detail": "both passed; light scores more", "scores": [12, 20], "you": "win",
    }  # fmt: skip
    assert errors("referee_message", end) == []
    assert errors("referee_message", {**end, "bank": 3.0}) != []
    assert errors("referee_message", {k: v for k, v in end.items() if k != "detail"}) != []
    assert errors("referee_message", {**end, "winner": 0}) != []  # 0-1 is seat 1's win
    assert errors("referee_message", {**end, "result": "1/2-1/2", "winner": None}) != []  # you


def test_the_python_example_of_the_protocol_page_runs(monkeypatch):
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = text[text.index("## 11. JSON Schema") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("\n```", start)]
    monkeypatch.chdir(ROOT)
    scope: dict[str, Any] = {}
    exec(compile(code, "protocol.md", "exec"), scope)
    assert list(scope["bot_message"].iter_errors({"type": "move", "actions": []}))
