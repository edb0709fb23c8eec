"""A person in a seat: the protocol's requests turned into prompts, typed lines into replies.

The referee drives a `HumanSeat` exactly as it drives a bot's channel (seat.py): it sends
`hello` and `turn`, charges the clock from the request to the reply, and checks every action
with the engine. The seat's own job is to be kind to a person: it rebuilds the position from
the `turn` message, tries what was typed on a copy of it, explains an illegal action and asks
again (a bot would have lost), lists the legal actions on `?`, collects the actions of a
multi-action turn line by line, and sends the whole turn as one `move` once it is complete. So
whatever the person types, the referee only ever sees legal moves, a resignation, or a timeout.

Where the lines come from and where the news go is a `HumanIO`: the terminal of `arena play`
(arena/cli/play.py), or a websocket for a browser. Its events are JSON-safe dicts (below), so a
browser front end can receive them as they are.

Events a `HumanIO` is shown, by `type`:
- `hello`: the referee's hello (game, options, seat, colour, opponent, time_control).
- `turn`: the referee's turn request (turn, position, clocks, deadline, last_turn, ...), plus
  `text` (the board as text) and `legal` (every legal next action).
- `ask`: waiting for a line: `prompt`, `turn_actions` (collected so far this turn),
  `actions_remaining`, `can_end_turn`, `deadline` (seconds left when the turn started).
- `partial`: a line was accepted and the turn needs more: `actions` collected, `text`.
- `rejected`: `input` and `message` (what is wrong; the same words a bot would get).
- `legal`: `actions`, the legal next actions at this point of the turn.
- `help`: `text`.
- `end`: the referee's end message (result, reason, detail, scores, you).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import trio

from arena.games import IllegalAction, State, make_game
from arena.referee.seat import BotFailure, Reply, Seat, SeatSpec

RESIGN_WORDS = ("resign", "quit")
HELP_TEXT = (
    "type your action(s) in the game's notation, several separated by spaces; "
    "? lists the legal actions; resign gives up; an empty line ends a turn whose remaining "
    "actions are optional"
)


class HumanIO(ABC):
    """A person's side of the seat: events out, lines in."""

    @abstractmethod
    async def show(self, event: dict[str, Any]) -> None:
        """Tell the person something (an event, see the module docstring)."""

    @abstractmethod
    async def read_line(self) -> str | None:
        """The next line the person entered, without its newline; None when input is closed
        (the seat resigns). Cancelled when the clock runs out."""

    def closed_reason(self) -> str:
        """Why input closed, for the record of the resignation `read_line` returning None
        causes (a browser may have gone away rather than been closed)."""
        return "input closed"


class HumanSeat(Seat):
    """The seat of a person behind a `HumanIO`."""

    def __init__(self, seat: int, io: HumanIO, name: str = "human") -> None:
        self.seat = seat
        self.error = None
        self.io = io
        self.name = name
        self._game: str | None = None
        self._options: dict[str, Any] = {}

    async def request(
        self, msg: dict[str, Any], deadline: float | None, margin: float
    ) -> tuple[Reply, float]:
        start = trio.current_time()
        limit = math.inf if deadline is None else deadline + margin
        reply: dict[str, Any] | None = None
        with trio.move_on_after(limit):
            if msg["type"] == "hello":
                reply = await self._hello(msg)
            else:
                reply = await self._turn(msg)
        now = trio.current_time()
        elapsed = now - start
        if reply is None:
            raise BotFailure(
                "time_forfeit",
                f"no move within {deadline:.3f} s + {margin:g} s margin (waited {elapsed:.3f} s)",
                {"deadline": deadline, "elapsed": round(elapsed, 6)},
            )
        return Reply(reply, now), elapsed

    async def _hello(self, msg: dict[str, Any]) -> dict[str, Any]:
        self._game = msg["game"]
        self._options = dict(msg["options"])
        await self.io.show(dict(msg))
        return {"type": "ready", "name": self.name, "version": "", "legal": False}

    async def _turn(self, msg: dict[str, Any]) -> dict[str, Any]:
        assert self._game is not None, "turn before hello"
        game = make_game(self._game, self._options)
        state = game.state_from_description(msg["position"])
        await self.io.show({**msg, "text": state.render_text(), "legal": state.legal_actions()})
        turn = state.turn_number()
        actions: list[str] = []
        while True:
            await self.io.show(
                {
                    "type": "ask",
                    "prompt": self._prompt(state, actions),
                    "turn_actions": list(actions),
                    "actions_remaining": state.actions_remaining(),
                    "can_end_turn": state.can_end_turn(),
                    "deadline": msg.get("deadline"),
                }
            )
            line = await self.io.read_line()
            if line is None:
                return {"type": "resign", "reason": self.io.closed_reason()}
            text = line.strip()
            word = text.lower()
            if word in RESIGN_WORDS or word.startswith("resign "):
                return {"type": "resign", "reason": text[len("resign") :].strip()}
            if word == "?":
                await self.io.show({"type": "legal", "actions": state.legal_actions()})
                continue
            if word in ("help", "h"):
                await self.io.show({"type": "help", "text": HELP_TEXT})
                continue
            if not text:
                if actions and state.can_end_turn():
                    return {"type": "move", "actions": actions}
                continue
            trial = state.clone()
            problem = _try(trial, text.replace(",", " ").split(), turn)
            if problem is not None:
                await self.io.show({"type": "rejected", "input": text, "message": problem})
                continue
            actions.extend(text.replace(",", " ").split())
            state = trial
            if state.is_terminal() or state.turn_number() != turn:
                return {"type": "move", "actions": actions}
            await self.io.show(
                {"type": "partial", "actions": list(actions), "text": state.render_text()}
            )

    def _prompt(self, state: State, actions: list[str]) -> str:
        colour = state.game.colours[self.seat]
        left = state.actions_remaining()
        if state.can_end_turn():
            return f"{colour}, optional action(s) (up to {left}), or Enter to end the turn> "
        so_far = f" after {' '.join(actions)}" if actions else ""
        return f"{colour}, turn {state.turn_number()}{so_far} ({left} action(s) left)> "

    async def send_quietly(self, msg: dict[str, Any], within: float) -> None:
        with trio.move_on_after(within):
            await self.io.show(dict(msg))

    async def close_input(self) -> None:
        pass


def _try(state: State, actions: list[str], turn: int) -> str | None:
    """Apply actions to `state`; what is wrong with the first one that does not apply."""
    for action in actions:
        if state.is_terminal() or state.turn_number() != turn:
            return f"{action}: the turn has ended"
        try:
            state.apply(action)
        except IllegalAction as e:
            return f"{action}: {e.message}"
    return None


class HumanPlayer(SeatSpec):
    """A person as a player of `MatchConfig.bots`; `io` is where they play."""

    def __init__(self, io: HumanIO, name: str = "human") -> None:
        self.io = io
        self.name = name

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "human",
            "version": "",
            "author": "",
            "command": [],
            "source": "human",
            "encoding": "",
        }

    def open(self, seat: int, on_log: Callable[[int, float, str, Any], None]) -> Seat:
        return HumanSeat(seat, self.io, self.name)
