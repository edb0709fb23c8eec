"""Byte framing of protocol v1 messages: msgpack (default) and JSON Lines, with a size cap.

Both the referee and bot-side code (the Python SDK) use these classes, so the two ends agree on
exactly one definition of "a message", of its size and of what is malformed. The decoder is
incremental (feed whatever bytes arrived, get the complete messages back) because the referee
reads pipes in arbitrary chunks and must never block on a half-written message.

msgpack needs no length prefix: every map is self-delimiting. The size of a message is the
number of bytes of its encoding (for JSON Lines: the line without its `\\n`). A message over the
cap is refused as soon as the bytes received prove it, without waiting for its end, so a bot
streaming garbage cannot make the referee buffer more than about twice the cap.

This module depends only on the standard library and `msgpack`, so bots written in Python can
copy it verbatim. When `orjson` is installed (the arena depends on it) JSON Lines are encoded and
decoded with it, which is several times faster than the standard `json` for the multi-kilobyte
turn messages; whatever orjson refuses (integers beyond 64 bits, non-string keys, malformed
input) goes through the standard `json` path, so the accepted messages and the wording of every
error stay those of the standard library. Likewise, when `ormsgpack` is installed (the arena
depends on it) msgpack is encoded with it: the same bytes as msgpack's Packer, three times
faster on a turn message (18 us against 6 us for a Wrigglers 19x19 position with its legal
list, benchmarks/versus.py: the Packer's cost per string made msgpack the slower encoding);
what it refuses (integers beyond 64 bits, non-string keys) the Packer encodes or words the
error of. Decoding stays msgpack's streaming Unpacker: a bot's replies are small.

A value that many messages carry unchanged (a board's list of cell names: 40% of the bytes of
a Wrigglers 19x19 turn message, and most of the time to encode it) can be wrapped in `Fixed`:
an Encoder encodes it once and copies its bytes into every message that holds it. The bytes of
a message are the same as with the plain value in its place: a value's encoding in either
format does not depend on where it stands.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import msgpack

ENCODINGS: tuple[str, ...] = ("msgpack", "json")
DEFAULT_MAX_MESSAGE_BYTES = 1 << 20


#: how many bytes of an offending message a ProtocolError keeps (see `ProtocolError.data`)
HEAD_BYTES = 256


class ProtocolError(Exception):
    """The other side broke protocol v1 (malformed bytes, over the cap, wrong field types).

    The message is meant for a bot author and says precisely what was wrong. `data` holds the
    first bytes (up to HEAD_BYTES) of the offending message when the error is about its bytes,
    so that the receiver can show them and guess what the sender meant (text on stdout, the
    other encoding, a message spread over lines).
    """

    def __init__(self, message: str, data: bytes = b"") -> None:
        super().__init__(message)
        self.data = bytes(data[:HEAD_BYTES])


@functools.cache
def _ormsgpack_module() -> ModuleType | None:
    """ormsgpack if installed (see the module's docstring), imported on first use."""
    try:
        import ormsgpack
    except ImportError:  # a bot copied this file without it: msgpack's Packer does it all
        return None
    return ormsgpack


@functools.cache
def _orjson_module() -> ModuleType | None:
    """orjson if installed, imported on first use: it costs milliseconds (it imports uuid and
    zoneinfo), which commands that never speak JSON Lines (`arena --help`) should not pay."""
    try:
        import orjson
    except ImportError:  # a bot copied this file without orjson: the standard library does it all
        return None
    return orjson


def _check_encoding(encoding: str) -> str:
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r} (valid: {', '.join(ENCODINGS)})")
    return encoding


class Fixed:
    """A value sent unchanged in many messages, encoded once per encoding (see the module's
    docstring). Treat `value` as read-only: its bytes are kept."""

    __slots__ = ("_encoded", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        #: the value's bytes per encoding, and for JSON its orjson.Fragment
        self._encoded: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Fixed({self.value!r})"


def _plain_json(obj: Any) -> Any:
    """The `default` of the encoders that encode a Fixed value in place (the slow paths), with
    their own words for any other object."""
    if type(obj) is Fixed:
        return obj.value
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _plain_msgpack(obj: Any) -> Any:
    if type(obj) is Fixed:
        return obj.value
    if isinstance(obj, int):  # the Packer asks its default for an integer beyond 64 bits
        raise OverflowError("Integer value out of range")
    raise TypeError(f"can not serialize {type(obj).__name__!r} object")


class Encoder:
    """Turns message dicts into bytes ready to write to a pipe.

    `max_message_bytes` (optional) refuses to produce a message the other side would reject,
    so an oversized message is reported where it was made rather than as a remote failure.
    """

    __slots__ = ("_dumps", "_spliced", "_token", "encoding", "max_message_bytes")

    def __init__(self, encoding: str = "msgpack", max_message_bytes: int | None = None) -> None:
        self.encoding = _check_encoding(encoding)
        self.max_message_bytes = max_message_bytes
        #: the Fixed values of the message being encoded, in order, and the bytes that stand
        #: for each until its bytes replace them (msgpack)
        self._spliced: list[Fixed] = []
        self._token = b""
        if encoding == "msgpack":
            # a Packer is reusable and avoids re-creating internal buffers for every message
            packer = msgpack.Packer(use_bin_type=True, default=_plain_msgpack).pack
            self._dumps = packer
            ormsgpack = _ormsgpack_module()
            if ormsgpack is not None:
                self._dumps = self._ormsgpack(ormsgpack, packer)
        else:
            import json  # here, not at import: an arena whose bots all speak msgpack never needs it

            dumps = json.JSONEncoder(
                ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_plain_json
            ).encode

            def _json(msg: Any) -> bytes:
                return dumps(msg).encode("utf-8") + b"\n"

            self._dumps = _json
            orjson = _orjson_module()
            if orjson is not None:
                self._dumps = self._orjson(orjson, _json)

    def _orjson(self, orjson: ModuleType, slow: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
        fast, fast_error = orjson.dumps, orjson.JSONEncodeError
        newline = orjson.OPT_APPEND_NEWLINE  # no copy of the message to append it
        fragment = getattr(orjson, "Fragment", None)  # orjson 3.9.8 and later

        def fixed(obj: Any) -> Any:
            if type(obj) is not Fixed:
                raise TypeError
            if fragment is None:
                return obj.value
            frag = obj._encoded.get("json")
            if frag is None:
                frag = obj._encoded["json"] = fragment(fast(obj.value))
            return frag

        def _fast(msg: Any) -> bytes:
            # orjson writes NaN and infinities as null where json refuses them: no message
            # of the protocol carries such floats (clocks and scores are finite)
            try:
                return fast(msg, default=fixed, option=newline)
            except fast_error:
                return slow(msg)  # encodes (big ints, int keys) or says why not

        return _fast

    def _ormsgpack(
        self, ormsgpack: ModuleType, slow: Callable[[Any], bytes]
    ) -> Callable[[Any], bytes]:
        """ormsgpack, with each Fixed value packed as a random 16-byte token and its bytes
        put in its place after: a token found anywhere else in the message (never, in
        practice: it is random and the message is the referee's) leaves the message to the
        Packer, which encodes the value in place."""
        packb, refused = ormsgpack.packb, ormsgpack.MsgpackEncodeError
        token = self._token = os.urandom(16)
        marker = packb(token)
        spliced = self._spliced

        def fixed(obj: Any) -> Any:
            if type(obj) is not Fixed:
                raise TypeError
            spliced.append(obj)
            return token

        def _fast(msg: Any) -> bytes:
            spliced.clear()
            try:
                data = packb(msg, default=fixed)
            except refused:
                return slow(msg)  # encodes (int keys) or says why not
            if spliced:
                if data.count(marker) != len(spliced):
                    return slow(msg)
                for value in spliced:
                    encoded = value._encoded.get("msgpack")
                    if encoded is None:
                        encoded = value._encoded["msgpack"] = packb(value.value)
                    data = data.replace(marker, encoded, 1)
            return data

        return _fast

    def encode(self, msg: dict[str, Any]) -> bytes:
        try:
            data = self._dumps(msg)
        except (TypeError, ValueError, OverflowError) as e:
            raise ProtocolError(f"cannot encode message as {self.encoding}: {e}") from None
        cap = self.max_message_bytes
        if cap is not None:
            size = len(data) - (1 if self.encoding == "json" else 0)
            if size > cap:
                raise ProtocolError(f"message of {size} bytes exceeds the cap of {cap} bytes")
        return data


class Decoder:
    """Incremental decoder: `feed(bytes)` returns the list of messages completed by them.

    Every message must be a map (dict) with string keys. After a ProtocolError the stream is
    unusable (there is no way to resynchronise a byte stream), so further feeds raise again.
    `pending_bytes` tells how much of an unfinished message is buffered, which lets the reader
    say "stdout closed in the middle of a message".
    """

    def __init__(
        self, encoding: str = "msgpack", max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    ) -> None:
        self.encoding = _check_encoding(encoding)
        if max_message_bytes < 1:
            raise ValueError("max_message_bytes must be positive")
        self.max_message_bytes = max_message_bytes
        self._error: ProtocolError | None = None
        self._fed = 0  # total bytes fed (msgpack)
        self._consumed = 0  # stream offset after the last complete message (msgpack)
        self._buf = bytearray()  # unfinished line (json)
        #: the first HEAD_BYTES of the stream from `_consumed` on (msgpack): the start of the
        #: message being decoded, for error reports
        self._head = bytearray()
        if encoding == "msgpack":
            # The buffer holds at most one unfinished message (<= cap) plus one fed slice
            # (<= cap): see feed().
            self._unpacker = msgpack.Unpacker(
                raw=False,
                strict_map_key=True,
                use_list=True,
                max_buffer_size=2 * max_message_bytes + 16,
            )

    @property
    def pending_bytes(self) -> int:
        """Bytes of an unfinished message currently buffered (0 at a message boundary)."""
        if self.encoding == "msgpack":
            return self._fed - self._consumed
        return len(self._buf)

    @property
    def pending_head(self) -> bytes:
        """The first bytes (up to HEAD_BYTES) of the unfinished message, b"" at a boundary."""
        if not self.pending_bytes:
            return b""
        if self.encoding == "msgpack":
            return bytes(self._head)
        return bytes(self._buf[:HEAD_BYTES])

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        if self._error is not None:
            raise self._error
        try:
            if self.encoding == "msgpack":
                return self._feed_msgpack(data)
            return self._feed_json(data)
        except ProtocolError as e:
            self._error = e
            raise

    # --- msgpack ---------------------------------------------------------------------------
    def _feed_msgpack(self, data: bytes) -> list[dict[str, Any]]:
        cap = self.max_message_bytes
        out: list[dict[str, Any]] = []
        if len(data) <= cap:  # the usual case: one slice, no view to cut
            self._feed_slice(out, data)
            return out
        view = memoryview(data)
        # slices of at most `cap` bytes keep the unpacker's buffer under its limit
        for start in range(0, len(view), cap):
            self._feed_slice(out, view[start : start + cap])
        return out

    def _feed_slice(self, out: list[dict[str, Any]], chunk: bytes | memoryview) -> None:
        """Decode what a slice of at most the cap completes. The head of the message being
        decoded (for error reports) is only cut from the bytes when it is needed: an error,
        or a message left unfinished at the end of the slice; a slice of whole messages (a
        reply read at once) costs no copy of it, and ends without a failed unpack when its
        last message ends where the slice does."""
        cap = self.max_message_bytes
        unpacker = self._unpacker
        chunk_start = self._fed
        unpacker.feed(chunk)
        self._fed += len(chunk)
        while True:
            try:
                obj = unpacker.unpack()
            except msgpack.OutOfData:
                break
            except UnicodeDecodeError as e:
                raise ProtocolError(
                    f"malformed msgpack: a string is not valid UTF-8 ({e.reason})",
                    self._head_now(chunk, chunk_start),
                ) from None
            except (ValueError, TypeError, msgpack.UnpackException) as e:
                why = str(e) or f"{type(e).__name__} (not a valid msgpack value)"
                raise ProtocolError(
                    f"malformed msgpack: {why}", self._head_now(chunk, chunk_start)
                ) from None
            end = unpacker.tell()
            size = end - self._consumed
            if size > cap:
                raise ProtocolError(
                    f"message of {size} bytes exceeds the cap of {cap} bytes",
                    self._head_now(chunk, chunk_start),
                )
            if type(obj) is not dict:
                raise ProtocolError(
                    f"expected a map, got {kind_of(obj)}", self._head_now(chunk, chunk_start)
                )
            self._consumed = end
            self._head = bytearray()
            out.append(obj)
            if end == self._fed:
                return  # all taken: nothing pending
        pending = self._fed - self._consumed
        self._head = self._head_now(chunk, chunk_start)
        if pending > cap:
            raise ProtocolError(
                f"message exceeds the cap of {cap} bytes ({pending} bytes received, unfinished)",
                self._head,
            )

    def _head_now(self, chunk: bytes | memoryview, chunk_start: int) -> bytearray:
        """The first HEAD_BYTES of the stream from the message being decoded on, which starts
        in `chunk` (fed at offset `chunk_start`) or before it (its start is then `_head`)."""
        offset = self._consumed - chunk_start
        if offset >= 0:
            return bytearray(chunk[offset : offset + HEAD_BYTES])
        head = bytearray(self._head)
        return head + chunk[: max(0, HEAD_BYTES - len(head))]

    # --- JSON Lines --------------------------------------------------------------------------
    def _feed_json(self, data: bytes) -> list[dict[str, Any]]:
        cap = self.max_message_bytes
        out: list[dict[str, Any]] = []
        buf = self._buf
        if not buf and data.endswith(b"\n"):
            # the usual case, whole lines and nothing pending: no copy into the buffer
            lines = data.split(b"\n")
            lines.pop()
            self._json_lines(lines, out)
            return out
        if b"\n" not in data:
            buf += data
        else:
            buf += data
            lines = buf.split(b"\n")
            rest = lines.pop()
            self._json_lines(lines, out)
            self._buf = buf = bytearray(rest)
        if len(buf) > cap:
            raise ProtocolError(
                f"message exceeds the cap of {cap} bytes ({len(buf)} bytes received, no newline)",
                buf,
            )
        first = buf[:64].lstrip(b" \t\r")[:1]
        if first and first[0] not in _JSON_STARTS:
            # no JSON value starts so (binary data, text): say so now, not at the newline,
            # which may never come
            raise ProtocolError(
                f"malformed JSON line: it starts with {_byte(first[0])}, which begins no JSON "
                "value",
                buf,
            )
        return out

    def _json_lines(self, lines: list[bytes] | list[bytearray], out: list[dict[str, Any]]) -> None:
        cap = self.max_message_bytes
        for line in lines:
            if len(line) > cap:
                raise ProtocolError(
                    f"message of {len(line)} bytes exceeds the cap of {cap} bytes", line
                )
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line.strip():
                continue  # blank lines are tolerated between messages
            out.append(_json_message(bytes(line)))


#: the bytes a JSON value can start with (after whitespace)
_JSON_STARTS = frozenset(b'{["-0123456789tfn')


def _byte(b: int) -> str:
    return repr(chr(b)) if 0x20 < b < 0x7F else f"byte 0x{b:02x}"


#: 19 digits in a row: possibly an integer outside 64 bits, which orjson reads as a float
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def _json_message(line: bytes) -> dict[str, Any]:
    orjson = _orjson_module()
    if orjson is not None and _LONG_DIGITS.search(line) is None:
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            pass  # the standard library decides (big ints, lone surrogates) and words the error
        else:
            if type(obj) is not dict:
                raise ProtocolError(f"expected a JSON object, got {kind_of(obj)}", line)
            return obj
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ProtocolError(f"malformed JSON line: not valid UTF-8 ({e.reason})", line) from None
    import json

    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except ValueError as e:
        raise ProtocolError(f"malformed JSON line: {e}", line) from None
    if type(obj) is not dict:
        raise ProtocolError(f"expected a JSON object, got {kind_of(obj)}", line)
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def kind_of(obj: Any) -> str:
    """Protocol-neutral name of a decoded value's type, for error messages."""
    if obj is None:
        return "nil"
    if isinstance(obj, bool):
        return "a boolean"
    if isinstance(obj, int):
        return "an integer"
    if isinstance(obj, float):
        return "a float"
    if isinstance(obj, str):
        return "a string"
    if isinstance(obj, (bytes, bytearray)):
        return "binary data"
    if isinstance(obj, (list, tuple)):
        return "an array"
    if isinstance(obj, dict):
        return "a map"
    return type(obj).__name__


def encode(msg: dict[str, Any], encoding: str = "msgpack") -> bytes:
    """One-shot encoding (tests, tools); long-lived code keeps an Encoder."""
    return Encoder(encoding).encode(msg)


def decode_all(
    data: bytes, encoding: str = "msgpack", max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> list[dict[str, Any]]:
    """Decode a complete byte string; trailing bytes of an unfinished message are an error."""
    dec = Decoder(encoding, max_message_bytes)
    out = dec.feed(data)
    if dec.pending_bytes:
        raise ProtocolError(f"{dec.pending_bytes} trailing bytes of an unfinished message")
    return out


__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ENCODINGS",
    "HEAD_BYTES",
    "Decoder",
    "Encoder",
    "Fixed",
    "ProtocolError",
    "decode_all",
    "encode",
    "kind_of",
]
