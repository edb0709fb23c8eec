"""Drive bundled bots by hand over real pipes, speaking the protocol with `protocol.framing`.

The tests play the referee's part with plain blocking pipes and `select` for timeouts, so a
hanging bot fails the test after a few seconds instead of hanging the suite, without sleeping.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

from protocol.framing import Decoder, Encoder

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"

#: generous: a loaded 2-core machine may take a while to start an interpreter
REPLY_TIMEOUT = 20.0


class BotPipe:
    """A bot subprocess plus the framing to talk to it in one encoding."""

    def __init__(self, argv: list[str], cwd: Path, encoding: str) -> None:
        self.encoding = encoding
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._encoder = Encoder(encoding)
        self._decoder = Decoder(encoding)
        self._pending: list[dict[str, Any]] = []
        self.logs: list[str] = []

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(self._encoder.encode(msg))
        self.proc.stdin.flush()

    def recv_any(self, timeout: float = REPLY_TIMEOUT) -> dict[str, Any] | None:
        """The next message of any type, or None at EOF."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while not self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no reply within {timeout} s; stderr: {self.stderr()}")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._pending.extend(self._decoder.feed(chunk))
        return self._pending.pop(0)

    def recv_or_eof(self, timeout: float = REPLY_TIMEOUT) -> dict[str, Any] | None:
        """The next non-log message or None at EOF, collecting `log` messages on the way."""
        while True:
            msg = self.recv_any(timeout)
            if msg is not None and msg["type"] == "log":
                self.logs.append(msg["message"])
                continue
            return msg

    def recv(self, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        """The next reply (as the referee sees it: logs are collected, not replies)."""
        msg = self.recv_or_eof(timeout)
        assert msg is not None, f"bot closed stdout; stderr: {self.stderr()}"
        return msg

    def close_and_wait(self, timeout: float = REPLY_TIMEOUT) -> int:
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        return self.proc.wait(timeout)

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")[-2000:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()


def hello(seat: int = 0, seed: int = 1, game: str = "stripes", **extra: Any) -> dict[str, Any]:
    msg = {
        "type": "hello",
        "protocol": 1,
        "game": game,
        "options": {},
        "seat": seat,
        "colour": "red",
        "opponent": "tester",
        "match_id": "test-1",
        "time_control": {
            "startup": 10.0,
            "base": None,
            "increment": 0.0,
            "move_time": 5.0,
            "margin": 0.05,
        },
        "max_message_bytes": 1 << 20,
        "seed": seed,
    }
    msg.update(extra)
    return msg


def fake_turn(legal: list[str], seat: int = 0, turn: int = 1, **extra: Any) -> dict[str, Any]:
    """A turn message that needs no engine: a made-up position and a legal list."""
    msg = {
        "type": "turn",
        "turn": turn,
        "seat": seat,
        "position": {
            "game": "fake",
            "cells": {"a1": "x", 'b"}2': "{o}"},
            "board": {"kind": "square", "size": 3, "cells": ["a1", "b1"]},
            "nested": [[], {}, [{"k": [1, 2.5, -3e2, True, False, None]}]],
            "text": 'quote " backslash \\ brace } bracket ] unicode \u00e9 \u2603',
        },
        "last_turn": None if turn == 1 else {"seat": 1 - seat, "actions": ["zz"]},
        "turn_actions": [],
        "actions_remaining": 1,
        "can_end_turn": False,
        "clocks": [None, None],
        "deadline": 5.0,
        "legal": legal,
    }
    msg.update(extra)
    return msg


def end_message(you: str = "win") -> dict[str, Any]:
    return {
        "type": "end",
        "result": "1-0",
        "winner": 0,
        "reason": "no_moves",
        "detail": "red cannot move",
        "scores": [3, 1],
        "you": you,
    }


#: (bot id, encoding) pairs every random bot test runs over
BOT_ENCODINGS = [
    ("random-py", "msgpack"),
    ("random-py", "json"),
    ("random-c", "json"),
    ("random-js", "json"),
]
