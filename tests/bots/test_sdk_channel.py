"""The SDK's Channel reads the same messages however the bytes are cut up on the pipe."""

from __future__ import annotations

import io
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.framing import encode
from protocol.sdk import Channel

# JSON-and-msgpack-safe values: no floats (NaN), ints within 64 bits
values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
messages = st.builds(
    lambda t, extra: {**extra, "type": t},
    st.sampled_from(["hello", "turn", "end", "from-the-future"]),
    st.dictionaries(st.text(max_size=8), values, max_size=5),
)


class Chunked(io.RawIOBase):
    """A byte source that hands out exactly the given chunks, one per read: the way a pipe
    delivers whatever the writer managed to write so far."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        return self._chunks.pop(0) if self._chunks else b""


@settings(max_examples=60, deadline=None)
@given(
    msgs=st.lists(messages, min_size=1, max_size=6),
    encoding=st.sampled_from(["msgpack", "json"]),
    cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
    declared=st.booleans(),
)
def test_channel_reassembles_any_chunking(msgs, encoding, cuts, declared):
    data = b"".join(encode(m, encoding) for m in msgs)
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in itertools.pairwise(points) if b > a]
    out = io.BytesIO()
    channel = Channel(Chunked(chunks), out, encoding if declared else None)
    got = []
    while (msg := channel.read()) is not None:
        got.append(msg)
    assert got == msgs
    assert channel.encoding == encoding  # detected from the first byte when not declared
    channel.write({"type": "log", "message": "é"})
    assert out.getvalue() == encode({"type": "log", "message": "é"}, encoding)
