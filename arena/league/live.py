"""What the pages show as it happens: games in flight turn by turn, validations as they run.

Everything here lives in the server's memory and hangs off the `League` (no module state): it
is a view, never the truth, which stays in the database. A server restart forgets it, and a
game played by a remote worker (`--no-local-games`) never appears in it.

Publishing never waits for anyone. The executor's slot hands each turn to `LiveGames.turn`,
which appends it to the game's list and bumps a `Signal`; readers (the pages' server-sent
event streams) each keep their own position in that list and wait on the signal under their
own cancel scope. So there are no per-reader queues to fill: a slow reader simply finds more
turns when it wakes, a vanished one is cancelled by its connection, and neither can hold up a
game. Memory is bounded by the games in flight, each by its own length.

A game's replay steps (the viewer's frames, arena/viewer/replay.py) are made lazily, once per
turn and only while someone watches, by the same code that makes a finished game's replay.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import trio

from arena.referee.outcome import now_iso
from arena.referee.record import GameRecord, RecordError, apply_turn


class Signal:
    """A change counter readers wait on: `bump` wakes every waiter at once, never blocks.

    A reader remembers the `generation` it has seen and calls `wait_past(seen)`; a bump that
    happened in between is never missed, since the counter, not the event, says what changed.
    """

    def __init__(self) -> None:
        self.generation = 0
        self._event = trio.Event()

    def bump(self) -> None:
        self.generation += 1
        event, self._event = self._event, trio.Event()
        event.set()

    async def wait_past(self, seen: int) -> int:
        """The generation once it is past `seen` (callers bound the wait with a cancel scope)."""
        while self.generation == seen:
            await self._event.wait()
        return self.generation


@dataclass
class LiveGame:
    """One game in flight: its record so far (header and turns) and its replay frames."""

    game_id: int
    variant: str
    record: GameRecord
    signal: Signal = field(default_factory=Signal)
    finished: bool = False
    #: event streams following the game now (shown on the list; a closed one is gone at once)
    watchers: int = 0
    #: the replay frames made so far (None until someone watches); see `frames`
    _builder: Any = None
    _built: int = 0
    broken: str | None = None
    #: one maker of frames at a time (they are made in a thread, see `update`)
    _lock: trio.Lock = field(default_factory=trio.Lock)

    @property
    def turns(self) -> int:
        return len(self.record.turns)

    def frames(self) -> dict[str, Any] | None:
        """The replay data of the turns played so far (format arena-replay/1 without a
        result), brought up to date; None if the turns do not replay (then `broken` says why:
        the game goes on, only its live view stops)."""
        from arena.viewer.replay import ReplayBuilder

        if self.broken is not None:
            return None
        try:
            if self._builder is None:
                self._builder = ReplayBuilder(self.record, self.record.initial_state())
            b = self._builder
            while self._built < len(self.record.turns):
                entry = self.record.turns[self._built]
                after = b.before.clone()
                apply_turn(after, entry, complete=False)
                b.add_turn(entry, after, [0, 0])
                self._built += 1
        except (RecordError, ValueError, KeyError, TypeError) as e:
            self.broken = str(e)
            return None
        return b.data()

    async def update(self, sent: int) -> tuple[str | None, Any]:
        """What a reader that has `sent` steps gets next: ("start", the replay so far) when it
        has none, ("steps", {"from", "steps"}) with the new ones, ("unavailable", {"reason"}),
        or (None, None) when nothing is new. The frames of new turns are made in a thread, one
        thread at a time per game, so a long game's first watcher (hundreds of turns to draw)
        never holds up the server's other work."""
        async with self._lock:
            if self.broken is None and (
                self._builder is None or self._built < len(self.record.turns)
            ):
                await trio.to_thread.run_sync(self.frames)
            if self.broken is not None:
                return "unavailable", {"reason": self.broken}
            steps = self._builder.steps
            if sent == 0:
                return "start", {**self._builder.data(), "steps": steps[:]}
            if len(steps) > sent:
                return "steps", {"from": sent, "steps": steps[sent:]}
            return None, None

    async def position_svg(self) -> str | None:
        """The engine's picture of the position now (for a page without JavaScript)."""

        def draw() -> str | None:
            return None if self.frames() is None else self._builder.before.render_svg()

        async with self._lock:
            return await trio.to_thread.run_sync(draw)

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.game_id,
            "variant": self.variant,
            "bots": [str(b.get("name", "")) for b in self.record.bots],
            "turns": self.turns,
            "started_at": self.record.started_at,
            "watchers": self.watchers,
        }


def _seat(names: list[str], colours: Any, match: dict[str, Any], seat: int) -> dict[str, Any]:
    """A seat of the record so far, with its own clock if it has one (a person's seat)."""
    out = {"name": names[seat], "colour": colours[seat], "seat": seat}
    own = (match.get("seat_time_controls") or (None, None))[seat]
    if own:
        out["time_control"] = dict(own)
    return out


class LiveGames:
    """The games this server plays right now, as the executor reports them."""

    def __init__(self) -> None:
        self.games: dict[int, LiveGame] = {}
        #: bumped when a game starts or ends (pages waiting for a queued game to start)
        self.changed = Signal()
        #: whether this server plays games itself (False with --no-local-games: then no game
        #: is ever live here, and the pages say so)
        self.local = True

    def start(self, game_id: int, variant: str, match: dict[str, Any], names: list[str]) -> None:
        colours = _colours(match["game"])
        record = GameRecord(
            match_id=str(match.get("match_id", "")),
            game=match["game"],
            options=dict(match.get("options") or {}),
            seed=int(match.get("seed") or 0),
            opening=[list(t) for t in match.get("opening") or ()],
            bots=[_seat(names, colours, match, s) for s in (0, 1)],
            time_control=dict(match.get("time_control") or {}),
            started_at=now_iso(),
        )
        self.games[game_id] = LiveGame(game_id, variant, record)
        self.changed.bump()

    def turn(self, game_id: int, entry: dict[str, Any]) -> None:
        game = self.games.get(game_id)
        if game is None or not isinstance(entry, dict):
            return
        game.record.turns.append(entry)
        game.signal.bump()

    def end(self, game_id: int) -> None:
        """The game's outcome is recorded (or abandoned): its watchers turn to the record."""
        game = self.games.pop(game_id, None)
        if game is not None:
            game.finished = True
            game.signal.bump()
            self.changed.bump()

    def get(self, game_id: int) -> LiveGame | None:
        return self.games.get(game_id)

    def list(self) -> list[dict[str, Any]]:
        """The games in flight, oldest first (for the home page)."""
        return [g.summary() for g in sorted(self.games.values(), key=lambda g: g.game_id)]


def _colours(game: str) -> tuple[str, ...]:
    from arena.games import game_class

    try:
        return tuple(game_class(game).colours)
    except Exception:  # an unknown game fails in the referee, where it is reported
        return ("first", "second")


@dataclass
class Validations:
    """Which submitted version is being validated now (the rest wait their turn), and a
    signal bumped whenever a version is submitted, starts or finishes validation."""

    current: int | None = None
    #: what the current validation is doing, in words ("game 2 of 4: stripes as blue ...")
    step: str = ""
    signal: Signal = field(default_factory=Signal)

    def on_step(self, step: str) -> None:
        self.step = step
        self.signal.bump()
