"""The referee worker's pipe (arena/workers/wire.py): every line decodes to what was
encoded, whatever orjson refuses (a lone surrogate a bot logged, integers beyond 64 bits), and
the record's text cut from a reply line is exactly that record."""

from __future__ import annotations

import json
import subprocess

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.workers.wire import decode, encode, encode_reply, record_text

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),  # lone surrogates included
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300)
@given(record=st.dictionaries(st.text(), _json, max_size=5), game_id=st.text() | st.integers())
def test_a_reply_line_decodes_to_its_message_and_holds_its_record_text(record, game_id):
    reply = {"type": "record", "game_id": game_id, "record": record}
    line = encode(reply)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode(line) == reply
    text = record_text(decode(line), line)
    if text is not None:  # None only lets the receiver encode the record again
        assert json.loads(text) == record
    if isinstance(game_id, int) or game_id.isascii():
        assert text is not None  # the tournament's and the league's ids


def test_other_replies_have_no_record_text():
    line = encode({"type": "void", "game_id": "g", "reason": "x"})
    assert record_text(decode(line), line) is None
    line = encode({"type": "record", "game_id": "g", "record": {}, "extra": 1})
    assert record_text(decode(line), line) is None


def test_integers_beyond_64_bits_stay_integers():
    # orjson reads them as floats: such lines are read by the standard library
    for n in (2**63, 2**64, -(2**63) - 1, 10**30):
        assert decode(encode({"n": n, "s": str(n)})) == {"n": n, "s": str(n)}
    assert decode(encode({"n": 2**63 - 1})) == {"n": 2**63 - 1}


def test_long_fractions_are_not_taken_for_long_integers():
    """A record's times have long runs of digits after the point: they are floats to either
    parser, and an integer beyond 64 bits beside them is still read exactly."""
    msg = {"t": 0.00012345678901234567, "e": [1.2345678901234567e-05, -0.000987654321098765]}
    assert decode(encode(msg)) == msg
    both = {**msg, "n": 2**64}
    assert decode(encode(both)) == both


RECORD = {
    "format": "arena-record/1",
    "match_id": "t/g1",
    "game": "stripes",
    "bots": [{"name": "a", "seat": 0}, {"name": "b", "seat": 1}],
    "result": {"winner": 1, "reason": "score", "scores": [3, 4], "detail": 'say "\\n"\n'},
    "turns": [{"actions": [{"action": "a1", "elapsed": 1e-05}], "t": 0.00012345678901234567}],
    "stderr": ["caf\u00e9 \u2603\n", ""],
    "duration": 0.25,
    "turn_count": 1,
}


async def _receive_from(lines: bytes):
    """What a WorkerProcess makes of `lines` written by a real process on its pipe."""
    import sys

    import trio

    from arena.workers.process import WorkerProcess

    code = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    worker = WorkerProcess(proc)
    await proc.stdin.send_all(lines)
    await proc.stdin.aclose()
    try:
        return await worker.receive()
    finally:
        await proc.wait()


async def test_a_record_reply_carries_its_head_and_its_text_unparsed():
    """The worker sends a record's small fields ahead of its text; the receiver keeps the
    text as it came (what the results file stores) and reads only the head."""
    lines = encode_reply({"type": "record", "game_id": "g1", "record": RECORD})
    first, text, rest = lines.split(b"\n")
    assert rest == b"" and text + b"\n" == encode(RECORD)
    head = decode(first)["head"]
    assert "turns" not in head and "stderr" not in head
    assert {k: RECORD[k] for k in head} == head and head["result"] == RECORD["result"]
    reply = await _receive_from(lines)
    assert reply == {"type": "record", "game_id": "g1", "record": head, "record_json": text}
    assert json.loads(reply["record_json"]) == RECORD


async def test_a_record_reply_without_its_whole_text_is_the_workers_death():
    import pytest

    from arena.workers.process import WorkerDied

    lines = encode_reply({"type": "record", "game_id": "g1", "record": RECORD})
    with pytest.raises(WorkerDied, match="without its record"):
        await _receive_from(lines[: lines.index(b"\n") + 20])  # cut short, then closed
    other = encode_reply({"type": "void", "game_id": "g1", "fault": "worker", "reason": "x"})
    assert other == encode({"type": "void", "game_id": "g1", "fault": "worker", "reason": "x"})


@settings(max_examples=300)
@given(
    parts=st.lists(
        st.one_of(
            st.integers(min_value=-(2**70), max_value=2**70).map(str),
            st.floats(allow_nan=False, allow_infinity=False).map(repr),
            st.sampled_from([".", "e", "-", " ", '"', "0" * 19, "9" * 20]),
        ),
        max_size=8,
    )
)
def test_a_long_integer_is_found_wherever_it_stands(parts):
    """`decode` sends a line to the standard library exactly when a run of digits, not after
    a point, is an integer beyond 64 bits (orjson would read it as a float)."""
    import re

    from arena.workers.wire import _INT64_MAX, _long_integer

    line = "".join(parts).encode()
    expected = any(
        len(m.group()) > 19 or int(m.group()) > _INT64_MAX
        for m in re.finditer(rb"(?<![.0-9])[0-9]{19,}", line)
    )
    assert _long_integer(line) == expected
