"""The terminal as a person's side of a seat (`arena play`): events printed, lines read.

Lines are read without a thread: the read waits for standard input to become readable inside
trio, so the referee's clock can cancel the wait when the person's time runs out.
"""

from __future__ import annotations

import os
import textwrap
from typing import Any, TextIO

import trio

from arena.referee import TimeControl
from arena.referee.human import HumanIO


class TerminalIO(HumanIO):
    """The seat's events as lines on a terminal; typed lines from standard input."""

    def __init__(self, out: TextIO, fd: int = 0) -> None:
        self.out = out
        self.fd = fd
        self._buffer = b""
        self._eof = False
        self._pollable = True

    def _print(self, text: str = "", end: str = "\n") -> None:
        print(text, end=end, file=self.out, flush=True)

    async def show(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "hello":
            tc = TimeControl.from_dict(event["time_control"]).describe()
            self._print(
                f"You play {event['colour']} against {event['opponent']} ({tc}). Type your "
                "action(s), ? for the legal ones, resign to give up, help for help."
            )
        elif kind == "turn":
            deadline = event.get("deadline")
            clock = "" if deadline is None else f"; you have {deadline:.1f} s"
            banks = event.get("banks")
            bank = banks[event["seat"]] if isinstance(banks, list) and len(banks) == 2 else None
            if clock and bank is not None:
                clock += f" and {bank:.1f} s in your time bank"
            self._print(f"Your turn {event['turn']}{clock}.")
        elif kind == "ask":
            self._print(event["prompt"], end="")
        elif kind == "partial":
            self._print(event["text"])
        elif kind == "rejected":
            self._print(f"Illegal: {event['message']}. Try again (? lists the legal actions).")
        elif kind == "legal":
            legal = " ".join(event["actions"]) or "(none)"
            self._print(textwrap.fill(f"Legal actions: {legal}", 100, subsequent_indent="  "))
        elif kind == "help":
            self._print(textwrap.fill(event["text"], 100))
        elif kind == "end":
            you = {"win": "You win", "loss": "You lose", "draw": "Draw"}.get(event["you"], "")
            self._print(f"\nGame over. {you} ({event['reason']}).")

    async def read_line(self) -> str | None:
        while b"\n" not in self._buffer and not self._eof:
            if self._pollable:
                try:
                    await trio.lowlevel.wait_readable(self.fd)
                except OSError:
                    # epoll refuses regular files and /dev/null, which never block anyway
                    self._pollable = False
            try:
                data = os.read(self.fd, 4096)
            except BlockingIOError:
                continue
            if data:
                self._buffer += data
            else:
                self._eof = True
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace").rstrip("\r")
