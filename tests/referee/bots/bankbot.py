"""A bot for the time-bank tests: `bankbot.py MODE SECONDS TURNS`.

It speaks protocol v1 with the shared framing module (TESTBOT_ENCODING: msgpack or json), asks
for the legal actions and plays one at random. On its own turns listed in TURNS (comma-separated,
counted from 1; empty: none) it first spends SECONDS in MODE:

    sleep   sleeps (no CPU: the CPU clock does not charge it)
    busy    burns SECONDS of its own CPU time

Every message it receives that matters to the clocks is logged back as JSON, so that a test can
read what the bot saw from the record: `hello {time_control}` once, and per turn request
`turn {"turn", "deadline", "clocks", "banks"}` (banks: null when the turn had none).
The environment entry ARENA_TESTBOT_SESSION marks its process for the leak check.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

from protocol.framing import Decoder, Encoder

MODE = sys.argv[1] if len(sys.argv) > 1 else "sleep"
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
TURNS = {int(t) for t in (sys.argv[3] if len(sys.argv) > 3 else "").split(",") if t}
ENCODING = os.environ.get("TESTBOT_ENCODING", "msgpack")

enc = Encoder(ENCODING)
dec = Decoder(ENCODING, 64 << 20)
pending: list[dict] = []


def send(msg: dict) -> None:
    sys.stdout.buffer.write(enc.encode(msg))
    sys.stdout.buffer.flush()


def receive() -> dict | None:
    while not pending:
        data = os.read(0, 65536)
        if not data:
            return None
        pending.extend(dec.feed(data))
    return pending.pop(0)


def spend(seconds: float) -> None:
    if MODE == "busy":
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
    else:
        time.sleep(seconds)


def main() -> int:
    hello = receive()
    if hello is None:
        return 0
    send({"type": "log", "message": "hello " + json.dumps(hello["time_control"])})
    send({"type": "ready", "name": f"bankbot-{MODE}", "legal": True})
    rng = random.Random(hello["seed"] * 2 + hello["seat"])
    mine = 0
    last = None
    while True:
        msg = receive()
        if msg is None or msg["type"] == "end":
            return 0
        seen = {k: msg.get(k) for k in ("turn", "deadline", "clocks", "banks")}
        send({"type": "log", "message": "turn " + json.dumps(seen)})
        if msg["turn"] != last:
            mine += 1
            last = msg["turn"]
            if mine in TURNS:
                spend(SECONDS)
        send({"type": "move", "actions": [rng.choice(msg["legal"])]})


if __name__ == "__main__":
    sys.exit(main())
