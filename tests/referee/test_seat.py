"""The referee plays a seat that is not a process exactly as it plays a bot: the same requests,
the same legality checks, the same clock, the same record, and the `end` message at the end."""

from __future__ import annotations

from typing import Any

import trio

from arena.games import make_game
from arena.referee import (
    BotFailure,
    GameRecord,
    MatchConfig,
    Reply,
    Seat,
    SeatSpec,
    TimeControl,
    play_match,
)

from .conftest import bundled

TC = TimeControl(startup=10.0, base=10.0, increment=0.1)


class ScriptedSeat(Seat):
    """Answers `turn` from the position with a scripted policy, in process."""

    def __init__(self, seat: int, game: str, policy: Any, on_log: Any) -> None:
        self.seat = seat
        self.error = None
        self.game = game
        self.policy = policy
        self.on_log = on_log
        self.received: list[dict[str, Any]] = []
        self.closed = False

    async def request(
        self, msg: dict[str, Any], deadline: float | None, margin: float
    ) -> tuple[Reply, float]:
        self.received.append(msg)
        start = trio.current_time()
        if msg["type"] == "hello":
            reply = {"type": "ready", "name": "scripted"}
        else:
            state = make_game(self.game, msg["position"]["options"]).state_from_description(
                msg["position"]
            )
            self.on_log(self.seat, trio.current_time(), f"turn {msg['turn']}")
            reply = await self.policy(state, msg, deadline, margin)
        now = trio.current_time()
        return Reply(reply, now), now - start

    async def send_quietly(self, msg: dict[str, Any], within: float) -> None:
        self.received.append(msg)

    async def close_input(self) -> None:
        self.closed = True


class ScriptedSpec(SeatSpec):
    def __init__(self, game: str, policy: Any) -> None:
        self.name = "scripted"
        self.game = game
        self.policy = policy
        self.seats: list[ScriptedSeat] = []

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "scripted", "command": []}

    def open(self, seat: int, on_log: Any) -> Seat:
        s = ScriptedSeat(seat, self.game, self.policy, on_log)
        self.seats.append(s)
        return s


async def first_legal(state, msg, deadline, margin):
    return {"type": "move", "actions": [state.legal_actions()[0]]}


def check_replays(record: GameRecord) -> None:
    *_, (_, state) = record.replay_states()
    assert state.describe() == record.final_position


async def test_seat_plays_a_whole_game_against_a_bot():
    spec = ScriptedSpec("stripes", first_legal)
    config = MatchConfig("stripes", {}, (spec, bundled("random-py")), TC, seed=3)
    record = await play_match(config)
    assert record.result["reason"] not in ("illegal_action", "time_forfeit", "crash")
    assert record.bots[0]["kind"] == "scripted"
    assert record.bots[0]["isolation"] is None
    assert record.ready[0] == {
        "name": "scripted",
        "version": "",
        "author": "",
        "legal": False,
        "startup": record.ready[0]["startup"],
    }
    assert record.exits[0] is None  # no process
    assert record.exits[1]["exited_after_end"] is True
    seat = spec.seats[0]
    assert seat.received[0]["type"] == "hello" and seat.received[0]["opponent"] == "random-py"
    assert seat.received[-1]["type"] == "end" and seat.closed
    assert any(log["seat"] == 0 and log["message"] == "turn 1" for log in record.logs)
    check_replays(record)


async def test_seat_illegal_action_is_a_forfeit_like_a_bot():
    async def illegal(state, msg, deadline, margin):
        return {"type": "move", "actions": ["zz99"]}

    spec = ScriptedSpec("wrigglers", illegal)
    config = MatchConfig("wrigglers", {}, (bundled("random-py"), spec), TC, seed=1)
    record = await play_match(config)
    assert record.result["reason"] == "illegal_action"
    assert record.result["winner"] == 0
    assert record.result["failure"]["action"] == "zz99"
    assert spec.seats[0].received[-1]["you"] == "loss"
    check_replays(record)


async def test_seat_resigns_and_seat_failures_are_recorded():
    async def resign(state, msg, deadline, margin):
        return {"type": "resign", "reason": "enough"}

    spec = ScriptedSpec("papagra", resign)
    record = await play_match(MatchConfig("papagra", {}, (spec, bundled("random-py")), TC))
    assert record.result["reason"] == "resign"
    assert record.result["winner"] == 1
    assert record.turns[-1]["resigned"] is True
    assert "resigned: enough" in record.result["detail"]

    async def flag(state, msg, deadline, margin):
        raise BotFailure("time_forfeit", "no reply", {"deadline": deadline, "elapsed": 0.5})

    spec = ScriptedSpec("papagra", flag)
    record = await play_match(MatchConfig("papagra", {}, (spec, bundled("random-py")), TC))
    assert record.result["reason"] == "time_forfeit"
    assert record.turns[-1]["clocks_after"][0] < 10.0
