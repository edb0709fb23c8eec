"""A purpose-built misbehaving bot for the referee tests: `testbot.py MODE [ARG]`.

It speaks protocol v1 with the shared framing module and plays legal actions (it asks for the
legal list) until its MODE makes it fail in one specific way, so that every reason code of the
referee can be produced on demand. The environment entry ARENA_TESTBOT_SESSION (inherited by any
child it spawns) lets the tests check that no bot process outlives its game.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from protocol.framing import Decoder, Encoder

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
ARG = sys.argv[2] if len(sys.argv) > 2 else ""
ENCODING = os.environ.get("TESTBOT_ENCODING", "msgpack")
FAIL_TURN = int(os.environ.get("TESTBOT_FAIL_TURN", "1"))  # this bot's own turn count

enc = Encoder(ENCODING)
dec = Decoder(ENCODING, 64 << 20)
out = sys.stdout.buffer
inp = sys.stdin.buffer
pending: list[dict] = []


def send(msg: dict) -> None:
    out.write(enc.encode(msg))
    out.flush()


def receive() -> dict | None:
    while not pending:
        data = os.read(inp.fileno(), 65536)
        if not data:
            return None
        if MODE == "dump":  # every byte the referee sent, on stderr, for a byte-exact check
            import base64

            sys.stderr.write(f"DUMP {base64.b64encode(data).decode()}\n")
            sys.stderr.flush()
        pending.extend(dec.feed(data))
    return pending.pop(0)


def main() -> int:
    hello = receive()
    if hello is None:
        return 0
    if MODE == "never_ready":
        time.sleep(3600)
    if MODE == "crash_at_start":
        print("cannot load my weights", file=sys.stderr)
        return 7
    ready = {"type": "ready", "name": f"testbot-{MODE}", "version": "0", "legal": True}
    if MODE == "wrong_version":
        ready["protocol"] = 2
    if MODE == "bad_ready":
        ready = {"type": "ready", "name": 42}
    if MODE == "spawn":
        # a grandchild that would outlive the bot if the referee did not kill the whole group
        subprocess.Popen(["/bin/sh", "-c", "sleep 60; : arena-testbot"])
    if MODE == "env":
        import json

        facts = {"env": sorted(os.environ), "cwd": os.getcwd(), "pgid": os.getpgid(0)}
        send({"type": "log", "message": json.dumps(facts)})
    if MODE == "log_turns":
        send({"type": "log", "message": "before ready"})
    send(ready)
    rng = random.Random(hello["seed"] * 2 + hello["seat"])
    my_turns = 0
    last_turn = None
    while True:
        msg = receive()
        if msg is None:
            return 0
        if msg["type"] == "end":
            if MODE == "ignore_end":
                time.sleep(3600)
            return 0
        assert msg["type"] == "turn", msg
        if msg["turn"] != last_turn:
            my_turns += 1
            last_turn = msg["turn"]
        failing = my_turns >= FAIL_TURN
        deadline = msg["deadline"]
        if MODE == "half":
            time.sleep(deadline / 2)
        elif failing and MODE == "late":
            time.sleep(deadline + float(ARG or 0.2))
        elif failing and MODE == "slow":
            time.sleep(3600)
        elif failing and MODE == "crash":
            print("something went wrong\nTraceback: boom", file=sys.stderr, flush=True)
            return 3
        elif failing and MODE == "hog":
            hoard = []
            while True:  # until the sandbox's memory limit stops it
                hoard.append(bytearray(16 << 20))
                hoard[-1][::4096] = b"x" * len(hoard[-1][::4096])
        elif failing and MODE == "hog_late":
            while receive() is not None:  # silent until the referee gives up and closes stdin
                pass
            hoard = []
            while True:  # then fill memory until the sandbox's limit stops it
                hoard.append(bytearray(16 << 20))
                hoard[-1][::4096] = b"x" * len(hoard[-1][::4096])
        elif failing and MODE == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif failing and MODE == "close_stdout":
            os.close(1)
            time.sleep(3600)
        elif failing and MODE == "garbage":
            out.write(b"\xc1\xc1 this is not msgpack\n")
            out.flush()
            time.sleep(3600)
        elif failing and MODE == "unknown_type":
            send({"type": "dance", "steps": 3})
            time.sleep(3600)
        elif failing and MODE == "wrong_type":
            send({"type": "move", "actions": "e5"})
            time.sleep(3600)
        elif failing and MODE == "oversize":
            send({"type": "log", "message": "x" * (int(ARG or 2 << 20))})
            time.sleep(3600)
        elif failing and MODE == "illegal":
            send({"type": "move", "actions": [ARG or "zz99"]})
            continue
        elif failing and MODE == "occupied":
            # replay the opponent's last action: for placement games an occupied cell
            send({"type": "move", "actions": [msg["last_turn"]["actions"][0]]})
            continue
        elif failing and MODE == "too_many":
            legal = msg["legal"]
            actions = [rng.choice(legal)] * (msg["actions_remaining"] + 1)
            send({"type": "move", "actions": actions})
            continue
        elif failing and MODE == "resign":
            send({"type": "resign", "reason": "hopeless"})
            continue
        elif failing and MODE == "quit":  # an early exit, status 0, in the middle of a game
            return 0
        elif failing and MODE == "both_moves":  # a turn's two actions without waiting
            first = sorted(msg["legal"])[0]
            send({"type": "move", "actions": [first]})
            send({"type": "move", "actions": [first]})
            continue
        elif failing and MODE == "unsolicited":
            send({"type": "move", "actions": [rng.choice(msg["legal"])]})
            send({"type": "move", "actions": [rng.choice(msg["legal"])]})
            continue
        elif MODE == "chatty":
            send({"type": "log", "message": f"turn {msg['turn']} " + "y" * 5000})
        elif MODE == "log_between":
            pass
        elif MODE == "log_turns":  # while the referee waits for this turn's reply
            send({"type": "log", "message": f"turn {msg['turn']}"})
        if MODE == "fixed":  # the same answer whatever is asked: ARG's actions
            send({"type": "move", "actions": ARG.split()})
            continue
        if MODE == "greedy":  # asks to keep every turn open for its optional actions
            send({"type": "move", "actions": [rng.choice(msg["legal"])], "more": True})
            continue
        send({"type": "move", "actions": [rng.choice(msg["legal"])]})
        if MODE == "log_between":
            send({"type": "log", "message": f"thinking after turn {msg['turn']}"})


if __name__ == "__main__":
    sys.exit(main())
