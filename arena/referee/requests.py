"""The referee's messages to a bot (`hello`, `turn`, `end`), built in one place.

The referee builds them for every game, and `arena replay --at ... --bot/--messages` builds the
same messages again from a game record (arena/referee/moments.py), so that what a bot is sent
there cannot differ from what it was sent in the game: same fields, same order, same values.
The order of a dict's keys is the order of a msgpack map's keys on the wire, so it is part of
the message. Pure functions (no trio): `arena replay` imports them without the referee.

Times in a `turn` (the clocks, the deadline) are given to the microsecond, the precision the
game record keeps them at (docs/record.md), so that a record holds exactly what was sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.games import Result, State
from arena.referee.clock import TimeControl
from protocol.framing import Fixed
from protocol.messages import PROTOCOL_VERSION


def hello_message(
    *,
    game: str,
    options: Mapping[str, Any],
    seat: int,
    colour: str,
    opponent: str,
    match_id: str,
    time_control: TimeControl,
    max_message_bytes: int,
    seed: int,
    bot_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The first message of a game to the bot in `seat` (docs/protocol.md, `hello`)."""
    hello: dict[str, Any] = {
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "game": game,
        "options": dict(options),
        "seat": seat,
        "colour": colour,
        "opponent": opponent,
        "match_id": match_id,
        "time_control": time_control.to_dict(),
        "max_message_bytes": max_message_bytes,
        "seed": seed,
    }
    if bot_options:
        hello["bot_options"] = dict(bot_options)
    return hello


def turn_message(
    state: State,
    turn_no: int,
    seat: int,
    last_turn: dict[str, Any] | None,
    clocks: Sequence[float | None],
    deadline: float | None,
    legal: bool,
    banks: Sequence[float | None] | None = None,
    board: Fixed | None = None,
) -> dict[str, Any]:
    """A request for the next action(s) of `seat` in `state` (docs/protocol.md, `turn`);
    `last_turn` is the last complete turn ({seat, actions}), `clocks` both seats' Fischer
    clocks before this request, `deadline` this reply's time (None: unlimited), `banks` what
    is left of each seat's time bank (None: a game without banks, and no `banks` field).
    `board`: the position's `board` (the same in every turn of a game) as the referee keeps
    it, encoded once (protocol.framing.Fixed): the bytes sent are the same either way."""
    position = state.describe()
    if board is not None:
        position["board"] = board
    msg = {
        "type": "turn",
        "turn": turn_no,
        "seat": seat,
        "position": position,
        "last_turn": last_turn,
        "turn_actions": state.turn_actions(),
        "actions_remaining": state.actions_remaining(),
        "can_end_turn": state.can_end_turn(),
        "clocks": [None if c is None else round(c, 6) for c in clocks],
        "deadline": None if deadline is None else round(deadline, 6),
    }
    if banks is not None:
        msg["banks"] = [None if b is None else round(b, 6) for b in banks]
    if legal:
        msg["legal"] = state.legal_actions()
    return msg


def end_message(seat: int, result: Result) -> dict[str, Any]:
    """The last message of a game to the bot in `seat` (docs/protocol.md, `end`)."""
    if result.winner is None:
        you = "draw"
    else:
        you = "win" if result.winner == seat else "loss"
    return {
        "type": "end",
        "result": result.result_string,
        "winner": result.winner,
        "reason": result.reason,
        "detail": result.detail,
        "scores": list(result.scores),
        "you": you,
    }
