"""A tap between the referee and a real bot: `tap.py COMMAND...` runs COMMAND as its child and
passes the bytes through both ways unchanged, and writes a copy of each to its own stderr, which
the referee keeps in the game record (the last 64 KiB). So the tests see the exact bytes the
referee wrote to a bot and the bot wrote back, in real games, whatever the encoding.

A bot in the sandbox may write nothing but its temporary directory, and its stdout carries only
protocol messages: stderr is its one other way out. Each copied chunk is its own zlib stream
(the record of a kept session process may lose the lines written after its game's end: no
line depends on another), base64, on lines of `TAP in|out DATA` written with one write each.
The child's own stderr goes on as `ERR DATA` lines. Standard library only: it runs under the
bot's interpreter, in the bot's sandbox.
"""

from __future__ import annotations

import base64
import os
import selectors
import signal
import subprocess
import sys
import zlib

#: base64 characters per line: a multiple of 4 (each line decodes alone), and a line written
#: with one write() below PIPE_BUF is never split by another writer of the same stderr
LINE = 3000


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def emit(tag: bytes, data: bytes) -> None:
    text = base64.b64encode(data)
    for i in range(0, len(text), LINE):
        write_all(2, tag + text[i : i + LINE] + b"\n")


def tap(direction: bytes, data: bytes) -> None:
    z = zlib.compressobj(9)
    emit(b"TAP " + direction + b" ", z.compress(data) + z.flush())


def main() -> int:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    child = subprocess.Popen(
        sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdin and child.stdout and child.stderr
    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ, "in")
    sel.register(child.stdout.fileno(), selectors.EVENT_READ, "out")
    sel.register(child.stderr.fileno(), selectors.EVENT_READ, "err")
    open_streams = {"out", "err"}
    while open_streams:
        for key, _ in sel.select():
            data = os.read(key.fd, 65536)
            if key.data == "in":
                if not data:
                    sel.unregister(0)
                    child.stdin.close()
                    continue
                tap(b"in", data)
                try:
                    child.stdin.write(data)
                    child.stdin.flush()
                except BrokenPipeError:
                    pass  # the bot is gone: its exit ends the loop
            elif not data:
                sel.unregister(key.fd)
                open_streams.discard(key.data)
            elif key.data == "out":
                tap(b"out", data)
                write_all(1, data)
            else:
                emit(b"ERR ", data)
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
