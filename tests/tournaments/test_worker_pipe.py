"""The referee worker's pipe (arena/workers/wire.py): every line decodes to what was
encoded, whatever orjson refuses (a lone surrogate a bot logged, integers beyond 64 bits), and
the record's text cut from a reply line is exactly that record."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.workers.wire import decode, encode, record_text

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
