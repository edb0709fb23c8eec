"""Framing (msgpack, JSON Lines, size cap) and bot message validation."""

from __future__ import annotations

import itertools
import json

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    PROTOCOL_VERSION,
    Decoder,
    Encoder,
    ProtocolError,
    check_bot_message,
    check_reply,
    decode_all,
)
from protocol.framing import HEAD_BYTES, Fixed

ENCODINGS = ["msgpack", "json"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=20,
)
messages = st.dictionaries(st.text(max_size=8), values, max_size=6).map(
    lambda d: {"type": "x", **d}
)


def test_protocol_version():
    assert PROTOCOL_VERSION == 1


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=40, deadline=None)
@given(msgs=st.lists(messages, min_size=1, max_size=5), cuts=st.lists(st.integers(0, 400)))
def test_roundtrip_in_arbitrary_chunks(encoding, msgs, cuts):
    enc = Encoder(encoding)
    data = b"".join(enc.encode(m) for m in msgs)
    dec = Decoder(encoding)
    out = []
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    for a, b in itertools.pairwise(points):
        out += dec.feed(data[a:b])
    assert out == msgs
    assert dec.pending_bytes == 0


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_size_cap_is_exact(encoding):
    enc = Encoder(encoding)
    base = enc.encode({"type": "log", "message": ""})
    overhead = len(base) - (1 if encoding == "json" else 0)
    cap = 200
    # msgpack strings up to 31 bytes have a 1-byte header, up to 255 a 2-byte one
    for size in range(cap - 5, cap + 5):
        n = size - overhead - (1 if encoding == "msgpack" else 0)
        msg = {"type": "log", "message": "a" * n}
        data = enc.encode(msg)
        actual = len(data) - (1 if encoding == "json" else 0)
        if actual <= cap:
            assert Decoder(encoding, cap).feed(data) == [msg]
        else:
            with pytest.raises(ProtocolError, match="exceeds the cap of 200 bytes"):
                Decoder(encoding, cap).feed(data)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_oversized_message_is_refused_before_it_ends(encoding):
    dec = Decoder(encoding, 1000)
    start = Encoder(encoding).encode({"type": "log", "message": "x" * 5000})[:1500]
    with pytest.raises(ProtocolError, match="exceeds the cap"):
        dec.feed(start)
    with pytest.raises(ProtocolError):  # the stream stays broken
        dec.feed(b"{}")


def test_many_small_messages_in_one_big_chunk_are_fine():
    enc = Encoder("msgpack")
    msgs = [{"type": "log", "message": "m" * 50, "i": i} for i in range(200)]
    data = b"".join(enc.encode(m) for m in msgs)
    assert len(data) > 4 * 1000
    assert Decoder("msgpack", 1000).feed(data) == msgs


@pytest.mark.parametrize(
    "data, text",
    [
        (b"\xc1", "malformed msgpack"),
        (msgpack.packb([1, 2]), "expected a map, got an array"),
        (msgpack.packb({1: 2}), "malformed msgpack"),
        (b"\x81\xa1a\xa2\xff\xfe", "not valid UTF-8"),
    ],
)
def test_malformed_msgpack(data, text):
    with pytest.raises(ProtocolError, match=text):
        Decoder("msgpack").feed(data)


@pytest.mark.parametrize(
    "line, text",
    [
        (b"[1]\n", "expected a JSON object, got an array"),
        (b'{"a": NaN}\n', "NaN is not valid JSON"),
        (b"\xff\n", "not valid UTF-8"),
        (b"{oops\n", "malformed JSON line"),
    ],
)
def test_malformed_json(line, text):
    with pytest.raises(ProtocolError, match=text):
        Decoder("json").feed(line)


def test_json_tolerates_crlf_and_blank_lines():
    assert Decoder("json").feed(b'\n{"type":"log","message":"a"}\r\n\n') == [
        {"type": "log", "message": "a"}
    ]


def test_decode_all_rejects_trailing_bytes():
    data = Encoder().encode({"type": "a"})
    assert decode_all(data) == [{"type": "a"}]
    with pytest.raises(ProtocolError, match="trailing"):
        decode_all(data + data[:2])


def test_encoder_cap_and_json_text():
    assert Encoder("json").encode({"type": "t", "s": "é"}) == '{"type":"t","s":"é"}\n'.encode()
    with pytest.raises(ProtocolError, match="exceeds the cap"):
        Encoder("msgpack", 10).encode({"type": "log", "message": "x" * 20})
    with pytest.raises(ValueError, match="unknown encoding"):
        Encoder("xml")


@pytest.mark.parametrize(
    "msg, text",
    [
        ({}, "message has no 'type' field"),
        ({"type": 3}, "'type' must be a string, got an integer"),
        ({"type": "dance"}, "unknown message type 'dance'"),
        ({"type": "turn"}, "'turn' is a referee message"),
        ({"type": "move"}, "move.actions must be a non-empty list of strings, got nothing"),
        ({"type": "move", "actions": []}, "got an empty list"),
        ({"type": "move", "actions": "e5"}, "got a string"),
        ({"type": "move", "actions": ["e5", 3]}, "but element 1 is an integer"),
        ({"type": "move", "actions": ["e5"], "more": 1}, "move.more must be a boolean"),
        ({"type": "ready"}, "ready message is missing the field 'name'"),
        ({"type": "ready", "name": ""}, "ready.name must be a non-empty string"),
        ({"type": "ready", "name": "a", "legal": "yes"}, "ready.legal must be a boolean"),
        ({"type": "ready", "name": "a", "protocol": 2}, "bot speaks protocol 2, referee speaks 1"),
        ({"type": "ready", "name": "a", "protocol": True}, "ready.protocol must be an integer"),
        ({"type": "resign", "reason": None}, "resign.reason must be a string, got nil"),
        ({"type": "log"}, "log message is missing the field 'message'"),
    ],
)
def test_message_validation_texts(msg, text):
    with pytest.raises(ProtocolError) as err:
        check_bot_message(msg)
    assert text in str(err.value)


def test_valid_messages_and_replies():
    assert check_bot_message({"type": "log", "message": "hi", "extra": [1]}) == "log"
    assert check_reply({"type": "ready", "name": "b", "protocol": 1}, "hello") == "ready"
    assert check_reply({"type": "move", "actions": ["a1"], "more": True}, "turn") == "move"
    assert check_reply({"type": "resign"}, "turn") == "resign"
    with pytest.raises(ProtocolError, match="expected 'ready' in reply to 'hello', got 'move'"):
        check_reply({"type": "move", "actions": ["a1"]}, "hello")


def test_json_and_msgpack_carry_the_same_messages():
    msg = {"type": "turn", "clocks": [1.5, None], "legal": ["a1"], "position": {"x": {"y": 1}}}
    for encoding in ENCODINGS:
        assert decode_all(Encoder(encoding).encode(msg), encoding) == [msg]
    assert json.loads(Encoder("json").encode(msg)) == msg


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=40, deadline=None)
@given(
    msgs=st.lists(messages, max_size=4),
    text=st.text(alphabet="abcdefghij klmnop:.", min_size=1, max_size=300),
    cuts=st.lists(st.integers(0, 2000)),
)
def test_error_data_is_the_start_of_the_offending_message(encoding, msgs, text, cuts):
    """Whatever came before and however the bytes are cut, a bad message's error carries its
    first bytes (what a debug print on stdout looks like to the referee)."""
    junk = ("Debug " + text + "\n").encode()
    data = b"".join(Encoder(encoding).encode(m) for m in msgs) + junk
    dec = Decoder(encoding)
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    with pytest.raises(ProtocolError) as err:
        for a, b in itertools.pairwise(points):
            dec.feed(data[a:b])
    assert err.value.data and junk.startswith(err.value.data)
    assert len(err.value.data) <= HEAD_BYTES


def test_json_refuses_a_line_no_json_value_starts_with_at_once():
    dec = Decoder("json")
    with pytest.raises(ProtocolError, match="starts with byte 0x82, which begins no JSON value"):
        dec.feed(b"\x82\xa4type")  # msgpack, no newline needed to tell
    with pytest.raises(ProtocolError, match="starts with 'S'"):
        Decoder("json").feed(b"  Starting")
    assert Decoder("json").feed(b"  {") == []  # a JSON value may still come


def test_pending_head_shows_an_unfinished_message():
    dec = Decoder("json")
    dec.feed(b'{"type":"ready"}')
    assert dec.pending_head == b'{"type":"ready"}'
    packed = Encoder().encode({"type": "log", "message": "x" * 500})
    dec = Decoder()
    dec.feed(Encoder().encode({"type": "a"}) + packed[:300])
    assert dec.pending_head == packed[:HEAD_BYTES]
    dec.feed(packed[300:])
    assert dec.pending_head == b""


def _stdlib_line(line: bytes):
    """What the JSON Lines decoder must make of one line: the standard json module's verdict."""

    def reject(name):
        raise ValueError(f"{name} is not valid JSON")

    try:
        obj = json.loads(line.decode("utf-8"), parse_constant=reject)
    except UnicodeDecodeError as e:
        return f"malformed JSON line: not valid UTF-8 ({e.reason})"
    except ValueError as e:
        return f"malformed JSON line: {e}"
    return obj if type(obj) is dict else "not an object"


def _raw(v):
    """The sampled literal strings go into the line as they are; other values as JSON."""
    return v if isinstance(v, str) and v[:1] in '-1N"' else json.dumps(v)


json_lines = st.one_of(
    # well-formed objects, with what the fast decoder reads differently from json: integers
    # beyond 64 bits, huge exponents, lone surrogates, non-ASCII text
    st.dictionaries(
        st.text(max_size=6),
        st.one_of(
            values,
            st.integers(),
            st.sampled_from(
                [
                    "18446744073709551616",
                    "-9223372036854775809",
                    "1e400",
                    "-1e999",
                    '"\\ud800"',
                    '"\\udfff x"',
                    "NaN",
                    "-Infinity",
                ]
            ),
        ),
        max_size=4,
    ).map(lambda d: "{" + ",".join(f"{json.dumps(k)}:{_raw(v)}" for k, v in d.items()) + "}"),
    st.text(max_size=30),
).map(lambda s: s.replace("\n", " ").encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None)
@given(line=st.one_of(json_lines, st.binary(max_size=30).map(lambda b: b.replace(b"\n", b""))))
def test_json_lines_decode_exactly_as_the_json_module(line):
    """A faster JSON parser may be used, but what is accepted and every error stay json's."""
    if line.endswith(b"\r"):
        line = line[:-1]  # the line ending may be \r\n
    if not line.strip():
        return  # a blank line is skipped, not a message
    expected = _stdlib_line(line)
    try:
        (got,) = decode_all(b"{}\n" + line + b"\n", "json")[1:] or [{}]
    except ProtocolError as e:
        got = str(e) if str(e).startswith("malformed JSON line") else "not an object"
    assert got == expected, line


def test_json_encoding_matches_the_json_module_beyond_the_fast_path():
    """Integers beyond 64 bits and non-string keys, which orjson refuses, still encode as json."""
    msg = {"type": "x", "big": 2**70, "neg": -(2**64), 3: "three", "text": "é\u2603"}
    expected = json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    assert Encoder("json").encode(msg) == expected
    assert (
        Encoder("json").encode({"type": "x", "text": "é"}) == '{"type":"x","text":"é"}\n'.encode()
    )


wide_scalars = st.one_of(
    scalars,
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.binary(max_size=20),
    st.text(max_size=300),  # str 8 and str 16 headers
)
wide_values = st.recursive(
    wide_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=20),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=8), inner, max_size=20),
    ),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(msg=st.dictionaries(st.text(max_size=8), wide_values, max_size=20))
def test_msgpack_encoding_is_msgpacks_byte_for_byte(msg):
    """A faster msgpack encoder may be used (ormsgpack), but the bytes are msgpack's Packer's."""
    assert Encoder("msgpack").encode(msg) == msgpack.packb(msg, use_bin_type=True)


def test_msgpack_encoding_beyond_the_fast_path_is_msgpacks():
    """Integer keys, which the fast encoder refuses, still encode; an integer beyond 64 bits
    is refused in msgpack's words."""
    msg = {"type": "x", 3: "three", "n": [1, 2.5, None]}
    assert Encoder("msgpack").encode(msg) == msgpack.packb(msg, use_bin_type=True)
    with pytest.raises(ProtocolError, match="cannot encode message as msgpack: Integer value"):
        Encoder("msgpack").encode({"type": "x", "big": 2**64})


def _with_fixed(msg: dict, keys: list[str]) -> dict:
    """`msg` with the values of `keys` wrapped in Fixed, one level down where a value is a map
    (as the turn message holds the board inside its position)."""
    out = dict(msg)
    for key in keys:
        value = out.get(key)
        if isinstance(value, dict) and value:
            inner = dict(value)
            first = next(iter(inner))
            inner[first] = Fixed(inner[first])
            out[key] = inner
        elif key in out:
            out[key] = Fixed(value)
    return out


@settings(max_examples=150, deadline=None)
@given(
    msg=st.dictionaries(st.text(max_size=8), wide_values, max_size=12),
    data=st.data(),
)
def test_a_fixed_value_encodes_to_the_bytes_of_the_value_itself(msg, data):
    """A message holding Fixed values (encoded once, copied in) is byte for byte the message
    holding the values, in both encodings, message after message through one encoder, on the
    fast paths and beyond them (big integers, integer keys, which orjson or ormsgpack refuse)."""
    keys = data.draw(st.lists(st.sampled_from(sorted(msg) or ["none"]), max_size=3, unique=True))
    fixed = _with_fixed(msg, keys)
    beyond = {"big": data.draw(st.sampled_from([2**63, 2**70])), 7: "int key"}

    def outcome(encoder: Encoder, msg: dict) -> bytes | str:
        try:
            return encoder.encode(msg)
        except ProtocolError as e:  # JSON: binary values; both: what the format cannot hold
            return str(e)

    for encoding in ("msgpack", "json"):
        plain = outcome(Encoder(encoding), msg)
        encoder = Encoder(encoding)
        assert outcome(encoder, fixed) == plain
        assert outcome(encoder, fixed) == plain  # the kept bytes, the second time
        assert outcome(encoder, {**fixed, **beyond}) == outcome(
            Encoder(encoding), {**msg, **beyond}
        )


def test_a_fixed_value_is_encoded_in_place_when_its_token_shows_elsewhere():
    """msgpack splices a Fixed value's bytes in where a random token stands: a message that
    holds the token's bytes anywhere else (never, but for this test) is encoded in place."""
    encoder = Encoder("msgpack")
    board = {"kind": "square", "size": 2, "cells": ["a1", "a2", "b1", "b2"]}
    msg = {"type": "turn", "position": {"board": Fixed(board)}}
    plain = msgpack.packb({"type": "turn", "position": {"board": board}}, use_bin_type=True)
    assert encoder.encode(msg) == plain
    clash = {**msg, "x": encoder._token}
    expected = msgpack.packb({**msg, "position": {"board": board}, "x": encoder._token})
    assert encoder.encode(clash) == expected
    assert encoder.encode(msg) == plain
