"""What a running tournament shows: a progress bar with ETA and live standings, or plain lines.

The runner reports events to a `Progress` object and does not care how they are shown; a
terminal gets a rich live display, a pipe or log file gets one line per game (no control
characters in CI logs), and tests can pass `Progress()` which shows nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from arena.tournaments.sprt import SprtState
from arena.tournaments.store import GameRow


class Progress:
    """Silent base class: the event hooks the runner calls."""

    def start(self, total: int, rows: Sequence[GameRow], bots: Sequence[str], pending: int) -> None:
        pass

    def game_started(self, game_id: str) -> None:
        pass

    def game_finished(self, row: GameRow) -> None:
        pass

    def game_voided(self, game_id: str, attempt: int, reason: str) -> None:
        pass

    def message(self, text: str) -> None:
        pass

    def sprt(self, state: SprtState) -> None:
        """The SPRT after a completed game pair (runs with an [sprt] stopping rule only)."""

    def close(self) -> None:
        pass


def _row_text(row: GameRow) -> str:
    return (
        f"{row.game_id:<24} {row.bots[0]} vs {row.bots[1]}: {row.result} ({row.reason}, "
        f"{row.turns} turns)"
    )


class LineProgress(Progress):
    """One line per finished game with a done/total count and ETA; for pipes and logs."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.total = 0
        self.done = 0
        self.started = 0
        self.t0 = time.monotonic()

    def start(self, total: int, rows: Sequence[GameRow], bots: Sequence[str], pending: int) -> None:
        self.total, self.done = total, len(rows)
        self.t0 = time.monotonic()
        self.message(f"{total} games scheduled, {len(rows)} already recorded, {pending} to play")

    def game_finished(self, row: GameRow) -> None:
        self.done += 1
        self.started += 1
        elapsed = time.monotonic() - self.t0
        left = self.total - self.done
        eta = elapsed / self.started * left
        self.message(f"[{self.done}/{self.total} eta {_hms(eta)}] {_row_text(row)}")

    def game_voided(self, game_id: str, attempt: int, reason: str) -> None:
        self.message(f"void: {game_id} attempt {attempt}: {reason} (will be played again)")

    def sprt(self, state: SprtState) -> None:
        self.message(state.summary())

    def message(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def _hms(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class LiveProgress(Progress):
    """A rich live display: progress bar, ETA, running games and the current standings."""

    def __init__(self, title: str, top: int = 12, console: Any = None) -> None:
        from rich.console import Console

        self.console = console or Console()
        self.title = title
        self.top = top
        self.rows: list[GameRow] = []
        self.bots: list[str] = []
        self.running: set[str] = set()
        self.last: list[str] = []
        self.sprt_line = ""
        self.live = None

    def start(self, total: int, rows: Sequence[GameRow], bots: Sequence[str], pending: int) -> None:
        from rich.live import Live
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self.rows = list(rows)
        self.bots = list(bots)
        self.bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("elapsed"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
        )
        self.task = self.bar.add_task(self.title, total=total, completed=len(rows))
        self.live = Live(self._render(), console=self.console, refresh_per_second=4)
        self.live.start()
        self.message(f"{total} games scheduled, {len(rows)} already recorded, {pending} to play")

    def _render(self):
        from rich.console import Group
        from rich.text import Text

        from arena.tournaments.report import standings, standings_table

        rows = standings(self.bots, self.rows)[: self.top]
        t = standings_table(self.console, rows, forfeits=False, title="standings")
        playing = ", ".join(sorted(self.running)[:6]) or "-"
        head = [Text(self.sprt_line)] if self.sprt_line else []  # plain: no markup, no colours
        return Group(self.bar, *head, f"playing: {playing}", t, *self.last[-5:])

    def _refresh(self) -> None:
        if self.live is not None:
            self.live.update(self._render())

    def game_started(self, game_id: str) -> None:
        self.running.add(game_id)
        self._refresh()

    def game_finished(self, row: GameRow) -> None:
        self.running.discard(row.game_id)
        self.rows.append(row)
        self.bar.advance(self.task)
        self.last.append(_row_text(row))
        self._refresh()

    def game_voided(self, game_id: str, attempt: int, reason: str) -> None:
        self.running.discard(game_id)
        self.message(f"void: {game_id} attempt {attempt}: {reason} (will be played again)")

    def sprt(self, state: SprtState) -> None:
        self.sprt_line = state.summary()
        self._refresh()

    def message(self, text: str) -> None:
        if self.live is not None:
            self.live.console.print(text)
        else:
            self.console.print(text)

    def close(self) -> None:
        if self.live is not None:
            self.live.update(self._render())
            self.live.stop()
            self.live = None
