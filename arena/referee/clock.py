"""Time controls and the per-seat clocks of one game.

The referee measures every reply on its own monotonic clock, from the moment the request has been
completely written to the bot's stdin until the reply's last byte has arrived. The time the
referee spends between requests (applying actions, building the next request) is never charged
to a bot, and the time a bot spends between its reply and the next request (pondering) is free.

A Fischer clock (`base` + `increment` after each completed turn) and a fixed `move_time` per
turn may be combined; the deadline of a request is the smaller of what is left on either. A turn
with several requests (partial moves) keeps the same clocks running: each request's deadline is
what remains of the turn. `margin` is forgiveness for pipe and scheduling latency, added before
flagging, never shown to the bot as usable time.

`clock` says what a reply is charged (arena/referee/blame.py, docs/protocol.md §4): "wall" (the
default) charges the wall time less the host's share (the time the machine, not the bot, held
it up); "cpu" charges the CPU time the bot's processes used, with the wall time capped at
`wall_cap` times the deadline (plus the margin) so that a sleeping or blocked bot still loses.
Where the bot's CPU cannot be measured, both are the plain wall clock.

A **time bank** (`bank`, Kaggle's overage) is a store of seconds per seat and game that a fixed
move time may run into: a reply charged past its deadline takes the excess from the bank, and
the bot is flagged only when the excess is past what the bank had left (plus the margin). The
bank is charged whatever the clock charges the move (the wall time less the host's share, or
the CPU time), and to everything that decides a reply's fate (the CPU clock's wall cap, the
hard cap, the stall bound of arena/referee/blame.py) the deadline is the move's plus what is
left in the bank, so that a bot is never voided nor flagged because it drew on its bank, and a
host stall, never charged, never draws on it. The bank is never refilled and never negative: a
reply inside the margin leaves it at zero, as it leaves a Fischer clock.

A bank is refused with a Fischer clock (`base`): the remaining Fischer time is a bank already
(a bank B beside BASE+INC would be spent exactly as BASE+B+INC: the sum of both moves the same
way, reply by reply), and two stores that mean the same would make every report ambiguous.

`first_move` (CodinGame's first turn) is the time of each seat's first turn instead of
`move_time`, for a bot that loads or precomputes; it needs a move time too, for the same reason
(a Fischer clock's base is the first move's allowance already).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from arena.errors import ArenaError

#: the time control when none is given: generous enough for any reasonable bot, but finite,
#: so that a hung bot can never stall a match forever
DEFAULT_BASE = 60.0
DEFAULT_INCREMENT = 1.0


#: the longest any time of a time control may be: far beyond a real game, and small enough
#: that the CPU limit derived from it is a number the kernel takes
MAX_SECONDS = 7 * 24 * 3600


#: what a time control charges (arena/referee/blame.py)
CLOCKS = ("wall", "cpu")
#: the CPU clock's wall cap when none is given, in deadlines
DEFAULT_WALL_CAP = 3.0

#: the largest CPU limit cpu_budget derives (the sandbox's bound for `cpu_seconds`)
CPU_BUDGET_MAX = 1 << 20


#: every setting of a time control, as `to_dict` names them (and configs and `hello` do)
TC_KEYS = (
    "startup",
    "base",
    "increment",
    "move_time",
    "margin",
    "clock",
    "wall_cap",
    "bank",
    "first_move",
)


class TimeControlError(ArenaError):
    """A malformed time control on the command line or in a config. `key` names the setting
    at fault (a config names it `time_control.KEY`, the command line `--KEY`), None: the
    time control as a whole (a "BASE+INC" text)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class TimeControl:
    """All durations are seconds. `base` None: no Fischer clock; `move_time` None: no fixed
    per-turn limit. With neither, replies are unlimited (used only by tests and tools)."""

    startup: float = 10.0
    base: float | None = None
    increment: float = 0.0
    move_time: float | None = None
    margin: float = 0.05
    #: "wall" or "cpu": what a reply is charged (see the module's docstring)
    clock: str = "wall"
    #: the CPU clock's wall-clock cap, in deadlines (a reply may take this many times its
    #: deadline, plus the margin, of wall time, whatever CPU it used)
    wall_cap: float = DEFAULT_WALL_CAP
    #: seconds per game a reply past its move time may draw on (0: none; see the docstring)
    bank: float = 0.0
    #: the time of each seat's first turn instead of `move_time` (None: `move_time`)
    first_move: float | None = None

    def __post_init__(self) -> None:
        if self.clock not in CLOCKS:
            raise TimeControlError(
                f"time control: clock must be one of {', '.join(CLOCKS)}, got {self.clock!r}",
                "clock",
            )
        if not (
            isinstance(self.wall_cap, (int, float))
            and math.isfinite(self.wall_cap)
            and 1.0 <= self.wall_cap <= 100.0
        ):
            raise TimeControlError(
                f"time control: wall_cap must be a number from 1 to 100, got {self.wall_cap}",
                "wall_cap",
            )
        for name in ("startup", "increment", "margin", "bank"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise TimeControlError(
                    f"time control: {name} must be a number >= 0, got {value}", name
                )
        for name in ("base", "move_time", "first_move"):
            value = getattr(self, name)
            if value is not None and not (
                isinstance(value, (int, float)) and math.isfinite(value) and value > 0
            ):
                raise TimeControlError(
                    f"time control: {name} must be a number > 0, got {value}", name
                )
        for name in ("startup", "base", "increment", "move_time", "margin", "bank", "first_move"):
            value = getattr(self, name)
            if value is not None and value > MAX_SECONDS:
                raise TimeControlError(
                    f"time control: {name} must be at most {MAX_SECONDS} s (a week), got {value}",
                    name,
                )
        for name in ("bank", "first_move"):
            if not getattr(self, name):
                continue
            if self.base is not None:
                raise TimeControlError(
                    f"time control: {name} needs a fixed move time without a Fischer clock "
                    "(the Fischer clock's base is its bank and first-move time already: "
                    "add them to BASE)",
                    name,
                )
            if self.move_time is None:
                raise TimeControlError(
                    f"time control: {name} needs a fixed move time (move_time)", name
                )
        if (
            self.first_move is not None
            and self.move_time is not None
            and self.first_move < self.move_time
        ):
            raise TimeControlError(
                f"time control: first_move must be at least move_time ({self.move_time:g} s), "
                f"got {self.first_move}",
                "first_move",
            )

    @classmethod
    def parse(
        cls,
        tc: str | None,
        move_time: float | str | None = None,
        *,
        startup: float | None = None,
        margin: float | None = None,
        clock: str | None = None,
        wall_cap: float | None = None,
        bank: float | str | None = None,
        first_move: float | str | None = None,
    ) -> TimeControl:
        """`"5+0.05"` (base + increment, seconds) or `"5"`; with neither tc nor move_time the
        default time control (60+1) applies."""
        extra: dict[str, Any] = {}
        if bank is not None:
            extra["bank"] = _number("bank", bank, "bank")
        if first_move is not None:
            extra["first_move"] = _number("first move", first_move, "first_move")
        if startup is not None:
            extra["startup"] = _number("startup", startup)
        if margin is not None:
            extra["margin"] = _number("margin", margin)
        if clock is not None:
            extra["clock"] = clock
        if wall_cap is not None:
            extra["wall_cap"] = _number("wall cap", wall_cap)
        mt = None if move_time is None else _number("move time", move_time, "move_time")
        if tc is None or not str(tc).strip():
            if mt is None:
                for key in ("bank", "first_move"):
                    if extra.get(key):  # not the default Fischer clock: it would refuse them
                        raise TimeControlError(
                            f"time control: {key} needs a fixed move time (move_time)", key
                        )
                return cls(base=DEFAULT_BASE, increment=DEFAULT_INCREMENT, **extra)
            return cls(move_time=mt, **extra)
        text = str(tc).strip()
        base_text, plus, inc_text = text.partition("+")
        try:
            base = float(base_text)
            increment = float(inc_text) if plus else 0.0
        except ValueError:
            raise TimeControlError(
                f"time control {text!r}: expected BASE+INCREMENT in seconds, e.g. 5+0.05"
            ) from None
        return cls(base=base, increment=increment, move_time=mt, **extra)

    def describe(self) -> str:
        parts = []
        if self.base is not None:
            parts.append(f"{self.base:g}+{self.increment:g}")
        if self.move_time is not None:
            parts.append(f"{self.move_time:g}s/turn")
        text = " and ".join(parts) or "unlimited"
        if self.first_move is not None:
            text += f", first move {self.first_move:g}s"
        if self.bank:
            text += f", bank {self.bank:g}s"
        if self.clock != "wall":
            text += f" ({self.clock} clock, wall cap {self.wall_cap:g}x)"
        return text

    def to_dict(self) -> dict[str, Any]:
        # explicit: dataclasses.asdict deep-copies field by field, three times per game
        d: dict[str, Any] = {
            "startup": self.startup,
            "base": self.base,
            "increment": self.increment,
            "move_time": self.move_time,
            "margin": self.margin,
        }
        if self.clock != "wall":  # the wall clock's records and hellos stay as they were
            d["clock"] = self.clock
            d["wall_cap"] = self.wall_cap
        # likewise without a bank or a first-move time
        if self.bank:
            d["bank"] = self.bank
        if self.first_move is not None:
            d["first_move"] = self.first_move
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TimeControl:
        return cls(**{k: d[k] for k in TC_KEYS if k in d})

    def cpu_budget(self, max_turns: int = 1000) -> int:
        """A generous CPU-seconds ceiling for one bot over one game: the kernel's safety net in
        case the referee's own deadline handling failed, never the effective limit."""
        total = self.startup + (self.base or 0.0) + self.bank + (self.first_move or 0.0)
        per_turn = self.increment + (self.move_time or 0.0)
        if self.base is None and self.move_time is None:
            per_turn = 10.0
        total += max_turns * per_turn / 2  # each bot plays about half of the turns
        return min(int(max(60.0, 2.0 * total + 10.0)), CPU_BUDGET_MAX)


def _number(what: str, value: float | str, key: str | None = None) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TimeControlError(
            f"{what}: expected a number of seconds, got {value!r}", key
        ) from None


class Clocks:
    """Remaining time per seat and the time already used in the current turn.

    The referee asks `deadline(seat)` before each request (the bot's own time for it, as
    `turn.deadline` says), `limit(seat, deadline)` for what a reply may take before it is
    flagged (the deadline plus what is left in the seat's bank), `charge(seat, charged)` after
    each reply (it draws the excess over the turn's time from the bank) and `end_turn(seat)`
    once the turn is complete. `flagged` decides a time forfeit from the measured time, so a
    reply that arrived just before the cancel scope fired still counts. `seats` gives each seat
    a time control of its own (time odds); by default both use `tc`.
    """

    __slots__ = ("banks", "moved", "remaining", "tcs", "turn_used")

    def __init__(
        self, tc: TimeControl, seats: tuple[TimeControl, TimeControl] | None = None
    ) -> None:
        self.tcs = seats or (tc, tc)
        self.remaining: list[float | None] = [self.tcs[0].base, self.tcs[1].base]
        self.turn_used = 0.0
        #: what is left of each seat's bank; None: the seat has none
        self.banks: list[float | None] = [t.bank if t.bank else None for t in self.tcs]
        #: the seat has completed a turn (its first-move time is spent)
        self.moved = [False, False]

    @property
    def banked(self) -> bool:
        """Some seat has a bank: turns, records and replays show the banks."""
        return self.banks[0] is not None or self.banks[1] is not None

    def turn_time(self, seat: int) -> float | None:
        """The seat's time for the current turn: its first-move time on its first turn."""
        tc = self.tcs[seat]
        if tc.first_move is not None and not self.moved[seat]:
            return tc.first_move
        return tc.move_time

    def deadline(self, seat: int) -> float | None:
        """Seconds the bot has for its next reply (margin and bank excluded); None = unlimited."""
        limit = self.remaining[seat]
        move_time = self.turn_time(seat)
        if move_time is not None:
            left = move_time - self.turn_used
            limit = left if limit is None else min(limit, left)
        if limit is None:
            return None
        return max(0.0, limit)

    def bank(self, seat: int) -> float:
        """What is left of the seat's bank (0 without one)."""
        return self.banks[seat] or 0.0

    def limit(self, seat: int, deadline: float | None) -> float | None:
        """What a reply may be charged before the margin: the deadline and the bank left."""
        return None if deadline is None else deadline + self.bank(seat)

    def flagged(self, deadline: float | None, elapsed: float, seat: int = 0) -> bool:
        """Is a reply charged `elapsed` against `deadline` (as `deadline` gave it) late?"""
        limit = self.limit(seat, deadline)
        return limit is not None and elapsed > limit + self.tcs[seat].margin

    def charge(self, seat: int, elapsed: float) -> float:
        """Charge a reply; returns what it drew from the seat's bank."""
        before = self.turn_used
        self.turn_used = used = before + elapsed
        left = self.remaining[seat]
        if left is not None:
            # a reply inside the margin leaves the clock at zero, not below: the margin is
            # forgiveness for latency, not a loan against later turns
            self.remaining[seat] = max(0.0, left - elapsed)
        bank = self.banks[seat]
        turn_time = self.turn_time(seat)
        if bank is None or turn_time is None:
            return 0.0
        # the part of this reply past the turn's time (earlier replies of the turn may have
        # spent some of it, or already run past it), and never more than the bank holds
        over = max(0.0, used - turn_time) - max(0.0, before - turn_time)
        drawn = min(bank, over)
        self.banks[seat] = bank - drawn
        return drawn

    def end_turn(self, seat: int) -> None:
        left = self.remaining[seat]
        if left is not None:
            self.remaining[seat] = left + self.tcs[seat].increment
        self.turn_used = 0.0
        self.moved[seat] = True

    def snapshot(self) -> list[float | None]:
        return self.remaining[:]

    def bank_snapshot(self) -> list[float | None]:
        return self.banks[:]
