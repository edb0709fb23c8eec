"""A bot that draws debug marks: `markbot.py PLAN.json` (tests/referee/test_marks.py).

PLAN is a JSON list of `marks` values, sent as they are, good or bad: at its n-th turn the bot
sends a `log` whose `marks` is PLAN[2n % len] and a `move` (its first legal action) whose
`marks` is PLAN[(2n + 1) % len]. Before each reply it writes `stderr of turn T` on stderr, so
the tests can check that each line is recorded with its turn.
"""

from __future__ import annotations

import json
import os
import sys

from protocol.framing import Decoder, Encoder

ENCODING = os.environ.get("MARKBOT_ENCODING", "json")
enc = Encoder(ENCODING)
dec = Decoder(ENCODING, 64 << 20)
with open(sys.argv[1], encoding="utf-8") as plan_file:
    PLAN = json.load(plan_file)


def send(msg: dict) -> None:
    sys.stdout.buffer.write(enc.encode(msg))
    sys.stdout.buffer.flush()


def main() -> int:
    pending: list[dict] = []
    mine = 0
    while True:
        while not pending:
            data = os.read(0, 65536)
            if not data:
                return 0
            pending.extend(dec.feed(data))
        msg = pending.pop(0)
        if msg["type"] == "hello":
            print("stderr before the first turn", file=sys.stderr, flush=True)
            send({"type": "ready", "name": "markbot", "legal": True})
        elif msg["type"] == "turn":
            print(f"stderr of turn {msg['turn']}", file=sys.stderr, flush=True)
            n = len(PLAN)
            log = {"type": "log", "message": f"log of turn {msg['turn']}"}
            send({**log, "marks": PLAN[2 * mine % n]})
            reply = {"type": "move", "actions": [msg["legal"][0]]}
            reply["marks"] = PLAN[(2 * mine + 1) % n]
            send(reply)
            mine += 1
        elif msg["type"] == "end":
            return 0


if __name__ == "__main__":
    raise SystemExit(main())
