"""A seat at the board, as the referee sees it: requests go in, replies come out, with a clock.

The referee plays against `Seat`s, not against processes. A bot program behind its pipes
(`BotChannel`, channel.py) is one kind of seat; a person at a terminal or in a browser
(`HumanSeat`, human.py) is another. Whatever sits there, the referee sends the same protocol
messages, charges the same clock and checks every action with the same engine, so a seat cannot
do anything a bot could not.

A player that is not a program the sandbox starts is described by a `SeatSpec` in
`MatchConfig.bots`: the referee asks it to `open` its seat where it would launch a bot.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.referee.accounting import Account


@dataclass
class Reply:
    msg: dict[str, Any]
    arrived: float  # trio.current_time() when its last byte was read
    #: what was measured over it and the verdict (arena/referee/accounting.py); None: not
    #: measured (accounting off, a person's seat): the wall clock's plain rule
    account: Account | None = None


@dataclass
class BotFailure(Exception):
    """A bot broke a rule of the protocol or of the clock; it loses the game."""

    reason: str  # time_forfeit, protocol_error, crash, memory_limit, failed_start, ...
    detail: str
    info: dict[str, Any] = field(default_factory=dict)  # extra facts for the record
    #: advice for the bot's author that `detail` ends with ("; its output was buffered ..."),
    #: kept apart so that a caller rewording the detail can keep it
    hint: str = ""

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}"


class Seat(ABC):
    """One player of a game: the referee's requests and their replies."""

    #: 0 moves first
    seat: int
    #: a protocol error the seat made while no request was pending (garbage between turns);
    #: the referee forfeits the seat for it after the current turn
    error: str | None

    @abstractmethod
    async def request(
        self, msg: dict[str, Any], deadline: float | None, margin: float
    ) -> tuple[Reply, float]:
        """Send `msg` (`hello` or `turn`) and wait for its validated reply; returns it with the
        seconds it took. `deadline` (None = unlimited) runs from the moment the request is
        delivered; the seat fails with `time_forfeit` after deadline + margin. Every way of
        failing raises BotFailure."""

    @abstractmethod
    async def send_quietly(self, msg: dict[str, Any], within: float) -> None:
        """Best effort (the `end` message): a seat that is gone or not listening is no failure."""

    @abstractmethod
    async def close_input(self) -> None:
        """No more messages will be sent."""


class SeatSpec(ABC):
    """A player that is not a program: the referee opens its seat instead of launching one."""

    name: str

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """The player as the game record stores it (`name`, `kind`, and what else identifies
        it); the referee adds `seat`, `colour`, `isolation` and `hash`."""

    @abstractmethod
    def open(self, seat: int, on_log: Callable[[int, float, str, Any], None]) -> Seat:
        """The seat for this game; `on_log(seat, trio time, message, marks)` records a log line
        (and its debug marks, None for none)."""
