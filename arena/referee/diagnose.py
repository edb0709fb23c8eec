"""What a bot's stray output (or its silence) means, in words for the bot's author.

Bots written from docs/protocol.md alone make the same few mistakes: a reply left in an output
buffer, a debug print on stdout, the other encoding than the manifest declares, JSON
pretty-printed over several lines or sent without its newline. The referee sees only bytes, or
their absence; these functions turn what it saw into a clause that names the likely mistake and
its fix. They guess, so they quote what arrived (escaped, at most QUOTE_BYTES) and let the
author judge. Pure functions: the channel gathers the facts, this module only words them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from protocol.framing import ProtocolError

#: how many bytes of a bot's output an explanation quotes
QUOTE_BYTES = 60

_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"', 92: "\\\\"}

DECLARE = {
    "json": 'declare encoding = "json" in its bot.toml (or name it as json:COMMAND)',
    "msgpack": 'declare encoding = "msgpack" in its bot.toml (the default; on a command line, '
    "drop the json: prefix)",
}
FLUSH = "flush stdout after every message"
WAITS_FOR_EOF = (
    "a bot that reads its input to the end before answering waits for an end that never "
    "comes (the referee keeps stdin open for the whole game): read one message at a time "
    "(a line for JSON, a streaming decoder for msgpack) and answer it at once"
)
#: the UTF-8 byte order mark some runtimes (.NET, PowerShell) write before their first output
BOM = b"\xef\xbb\xbf"
#: stderr words that suggest the bot could not decode what it was sent
_DECODING_TROUBLE = re.compile(
    r"decod|unpack|pars(e|ing) error|unexpected token|not subscriptable|expected value"
    r"|expecting value|invalid utf-?8|unexpected character|invalid character"
    r"|beginning of value|invalid start of a value|invalid type|expected map",
    re.IGNORECASE,
)


def quote(data: bytes, limit: int = QUOTE_BYTES) -> str:
    """The first `limit` bytes in double quotes: printable ASCII as is, the rest escaped."""
    body = "".join(
        _ESCAPES.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}") for b in data[:limit]
    )
    return f'"{body}"' + ("..." if len(data) > limit else "")


def looks_like_json(data: bytes) -> bool:
    """A JSON object's start: `{` then a key, the closing brace or a line break."""
    rest = data.lstrip(b" \t\r\n")
    return rest.startswith(b"{") and rest[1:].lstrip(b" \t")[:1] in (b'"', b"}", b"\n", b"\r", b"")


def looks_like_msgpack(data: bytes) -> bool:
    """A msgpack map's start: a map header whose first key is a string."""
    if not data:
        return False
    first = data[0]
    key_at = 1 if 0x81 <= first <= 0x8F else 3 if first == 0xDE else 5 if first == 0xDF else 0
    if not key_at or len(data) <= key_at:
        return False
    key = data[key_at]
    return 0xA0 <= key <= 0xBF or key in (0xD9, 0xDA, 0xDB)


def looks_like_text(data: bytes) -> bool:
    """Mostly printable characters with a letter among them: something printed for humans."""
    text = data.decode("utf-8", errors="replace")
    if not text.strip() or not any(c.isalpha() for c in text):
        return False
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    return printable >= 0.9 * len(text)


def json_cut_short(data: bytes) -> bool:
    """A line that starts a JSON value and ends before the value does: the first line of a
    message spread over several (pretty-printed)."""
    text = data.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return e.pos >= len(text)
    return False


def guess(data: bytes, encoding: str) -> str:
    """What `data` (the start of a bad message) looks like, as a clause; "" if nothing known."""
    if data.startswith(BOM):
        return (
            ": a UTF-8 byte order mark (BOM) before the message; write UTF-8 without a BOM "
            "(or skip it)"
        )
    if encoding == "msgpack" and looks_like_json(data):
        return f": this is JSON, so the bot seems to speak JSON Lines; {DECLARE['json']}"
    if encoding == "json" and looks_like_msgpack(data):
        return f": this is msgpack, so the bot seems to speak msgpack; {DECLARE['msgpack']}"
    if encoding == "json" and json_cut_short(data):
        return (
            ": a JSON message spread over several lines (pretty-printed?); write each message "
            "on one line"
        )
    if looks_like_text(data):
        return (
            ": text on stdout (a debug print?); stdout carries only protocol messages, write "
            "anything else to stderr"
        )
    return ""


def explain_bad_bytes(error: ProtocolError, encoding: str) -> str:
    """A framing error's text, with the bytes that caused it and what they look like."""
    if not error.data:
        return str(error)
    return f"{error}; received {quote(error.data)}{guess(error.data, encoding)}"


@dataclass(frozen=True)
class Silence:
    """What the referee saw of a bot that did not reply in time, after closing its stdin and
    waiting a moment for whatever the bot still had to say."""

    request: str  # the request type that went unanswered: hello or turn
    encoding: str
    received: int  # bytes the bot sent before the deadline, whole game
    late_bytes: int  # bytes that arrived after the deadline
    late_by: float | None  # seconds after the deadline that the first late bytes came
    at_exit: bool  # the late bytes came as the bot exited (its stdout closed right after)
    exited: bool  # its stdout closed during the wait
    pending: bytes  # the start of an unfinished message at the end of the wait
    #: at the deadline, the bot had read everything it was sent and was blocked reading its
    #: stdin (None: not seen, see `blocked_reading_stdin`)
    waiting_for_input: bool | None = None


def explain_silence(s: Silence) -> str:
    """A clause (starting with "; ") saying why the reply may not have come, or ""."""
    if s.late_bytes:
        late = f"{s.late_by:.3f} s after the deadline" if s.late_by is not None else "late"
        if s.at_exit and s.waiting_for_input:
            # the two look alike from outside (blocked reading, output at exit): say both
            return (
                f"; its output arrived only once its stdin closed ({late}), and it had read "
                f"all it was sent and was waiting to read more: either it reads its input to "
                f"the end before answering ({WAITS_FOR_EOF}), or its answer sat in an output "
                f"buffer ({FLUSH})"
            )
        if s.at_exit:
            return (
                f"; its output arrived only when it exited (its stdin closed, {late}): it was "
                f"buffered; {FLUSH}"
            )
        return (
            f"; its output arrived {late}: if it was written in time, it sat in an output "
            f"buffer; {FLUSH}"
        )
    if s.pending:
        if s.encoding == "json" and _json_object(s.pending):
            return (
                f"; it sent a JSON object without the newline that ends every message: "
                f"{quote(s.pending)}"
            )
        return f"; it sent the start of a message that never ended: {quote(s.pending)}" + guess(
            s.pending, s.encoding
        )
    if s.request != "hello" or s.received:
        return ""
    out = "; nothing arrived on its stdout" + (", not even when it exited" if s.exited else "")
    out += f"; {encoding_hint(s.encoding)}"
    if not s.exited:
        out += f"; or its ready is stuck in an output buffer: {FLUSH}"
    return out


def encoding_hint(encoding: str) -> str:
    """What a bot that reads the other encoding must do (it was sent `encoding`)."""
    if encoding == "msgpack":
        return (
            'it was sent hello in msgpack (encoding "msgpack", the default): a bot that reads '
            f"JSON Lines must {DECLARE['json']}"
        )
    return (
        'it was sent hello as a JSON line (encoding "json"): a bot that reads msgpack must '
        f"{DECLARE['msgpack']}"
    )


def stderr_holds_a_reply(stderr: str) -> bool:
    """The bot's stderr holds what looks like its JSON `ready`: written to the wrong stream."""
    return bool(re.search(r'"type"\s*:\s*"ready"', stderr))


def stderr_suggests_decoding(stderr: str) -> bool:
    """The bot's stderr mentions decoding or parsing: it may not read what it was sent."""
    return bool(_DECODING_TROUBLE.search(stderr))


def _json_object(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError):
        return False


#: the `read` system call's number by machine, for /proc/PID/syscall
_READ_SYSCALL = {"x86_64": 0, "aarch64": 63}


def blocked_reading_stdin(pid: int) -> bool:
    """Some thread of process `pid` is blocked in `read` on its fd 0 (/proc/PID/task/*/
    syscall). Where the referee can see the bot's threads (process isolation; the arena as
    root or the bot's parent) and the machine's syscall number is known; False otherwise, and
    for a runtime that waits in epoll (Node, Go's poller on a non-blocking pipe)."""
    import os
    import platform

    number = _READ_SYSCALL.get(platform.machine())
    if number is None:
        return False
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall", "rb") as f:
                fields = f.read().split()
        except OSError:
            continue
        if len(fields) > 1 and fields[0] == str(number).encode() and int(fields[1], 16) == 0:
            return True
    return False


def unread_bytes(fd: int) -> int | None:
    """Bytes written to a pipe and not read yet (FIONREAD; either end); None if unknown."""
    from arena.sandbox.pipes import PipeLevel

    level = PipeLevel()(fd)
    return None if level < 0 else level
