"""A person's seat (arena/referee/human.py) against real bots, with the person's lines coming
from a small in-process `HumanIO`: illegal input is explained and asked again, `?` lists the
legal actions, multi-action turns are collected line by line, the clock is the referee's, closed
input resigns, and the record is a normal record."""

from __future__ import annotations

from typing import Any

import trio

from arena.referee import GameRecord, MatchConfig, TimeControl, play_match
from arena.referee.human import HumanIO, HumanPlayer

from .conftest import bundled


class PolicyIO(HumanIO):
    """Answers every prompt with `policy(events)`: a person who types what the policy says."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.events: list[dict[str, Any]] = []

    async def show(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    async def read_line(self) -> str | None:
        return await self.policy(self.events)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


def asking_person(first_lines: list[str]):
    """Types `first_lines`, then at every prompt asks `?` and plays the first legal action."""
    script = list(first_lines)

    async def policy(events):
        if script:
            return script.pop(0)
        answered = events[-2]  # events[-1] is the prompt
        if answered["type"] == "legal":
            return answered["actions"][0]
        return "?"

    return policy


def check_replays(record: GameRecord) -> None:
    *_, (_, state) = record.replay_states()
    assert state.describe() == record.final_position


async def test_person_plays_multi_action_turns_after_asking_for_legal_actions():
    io = PolicyIO(asking_person(["zz99", "help"]))
    config = MatchConfig(
        "quadraphages",
        {"max_turns": "10"},
        (HumanPlayer(io, "ada"), bundled("random-py")),
        TimeControl(startup=10.0, base=60.0),
        seed=4,
    )
    record = await play_match(config)
    assert record.result["reason"] == "max_turns"
    assert not record.result["forfeit"]
    assert record.bots[0]["name"] == "ada" and record.bots[0]["kind"] == "human"
    assert record.ready[0]["name"] == "ada"
    # the typo was explained with the engine's words and asked again, not forfeited
    rejected = io.of("rejected")
    assert rejected[0]["input"] == "zz99" and rejected[0]["message"].startswith("zz99: ")
    assert io.of("help")
    # several actions per turn, typed one per line, sent as one move per turn
    human_turns = [t for t in record.turns if t["seat"] == 0]
    assert len(human_turns) == 5
    assert all(t["requests"] == 1 for t in human_turns)
    assert any(len(t["actions"]) > 1 for t in human_turns)
    assert io.of("partial")
    hello = io.of("hello")[0]
    assert hello["colour"] == "X" and hello["opponent"] == "random-py"
    assert io.events[-1]["type"] == "end" and io.events[-1]["reason"] == "max_turns"
    check_replays(record)


async def test_person_resigns_and_closed_input_resigns():
    async def resign(events):
        return "resign tired of it"

    record = await play_match(
        MatchConfig("wrigglers", {}, (bundled("random-py"), HumanPlayer(PolicyIO(resign))))
    )
    assert record.result["reason"] == "resign" and record.result["winner"] == 0
    assert record.result["detail"] == "light (human) resigned: tired of it"

    async def closed(events):
        return None

    record = await play_match(MatchConfig("wrigglers", {}, (HumanPlayer(PolicyIO(closed)),
                                                            bundled("random-py"))))  # fmt: skip
    assert record.result["reason"] == "resign"
    assert record.result["detail"].endswith("resigned: input closed")


async def test_person_who_does_not_move_loses_on_time():
    async def silent(events):
        await trio.sleep_forever()

    io = PolicyIO(silent)
    tc = TimeControl(startup=10.0, base=0.4, increment=0.0, margin=0.05)
    start = trio.current_time()
    record = await play_match(
        MatchConfig("stripes", {}, (HumanPlayer(io), bundled("random-py")), tc)
    )
    assert record.result["reason"] == "time_forfeit" and record.result["winner"] == 1
    assert record.result["failure"]["seat"] == 0
    assert record.turns[-1]["clocks_after"][0] == 0.0
    assert trio.current_time() - start < 30
    assert io.events[-1]["you"] == "loss"
