"""The instant-reply bot of benchmarks/referee.py: answers every request at once.

With `legal` it plays the first legal action (real games); without, the action "x" (the null
game and the raw ping-pong). It uses the shared framing module and blocking pipe I/O, like any
simple bot would, so the raw ping-pong and the refereed game run the very same program.
"""

import os
import sys

from protocol.framing import Decoder, Encoder

encoding = sys.argv[1] if len(sys.argv) > 1 else "msgpack"
want_legal = len(sys.argv) > 2 and sys.argv[2] == "legal"
enc, dec = Encoder(encoding), Decoder(encoding, 64 << 20)
write, read = os.write, os.read
pending = []
while True:
    while not pending:
        data = read(0, 1 << 16)
        if not data:
            sys.exit(0)
        pending.extend(dec.feed(data))
    msg = pending.pop(0)
    kind = msg["type"]
    if kind == "hello":
        write(1, enc.encode({"type": "ready", "name": "instant", "legal": want_legal}))
    elif kind == "turn":
        action = msg["legal"][0] if want_legal else "x"
        write(1, enc.encode({"type": "move", "actions": [action]}))
    elif kind == "end":
        sys.exit(0)
