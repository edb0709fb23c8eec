"""A worker's `init` sent ahead (`WorkerProcess.send_init`): the worker sets its bots and games
up while the runner opens its results file, and `init` then reads the answer it gave."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.errors import ArenaError
from arena.workers.process import WorkerProcess

ROOT = Path(__file__).resolve().parents[2]
BOTS = [{"source": str(ROOT / "bots" / "random-py"), "alias": name} for name in ("a", "b")]
GAMES = ({"name": "stripes", "options": {}},)


def play(game_id: str) -> dict:
    return {
        "type": "play",
        "game_id": game_id,
        "match": {
            "game": "stripes",
            "options": {"max_turns": 6},
            "bots": [0, 1],
            "time_control": {"base": 30.0, "increment": 0.5},
            "seed": 7,
            "match_id": game_id,
            "opening": [],
            "cpu_affinity": [None, None],
            "isolation": None,
            "limits": {},
        },
    }


async def test_an_init_sent_ahead_is_answered_once_and_the_worker_plays() -> None:
    worker = await WorkerProcess.launch(None)
    try:
        await worker.send_init(BOTS, GAMES)
        await worker.init(BOTS, GAMES)  # reads the answer of the init sent ahead
        assert worker.init_sent is None
        reply = await worker.request(play("g1"))
        assert reply["type"] == "record", reply
        assert reply["record"]["result"]["reason"] == "max_turns"
    finally:
        await worker.close()


async def test_another_init_than_the_one_sent_ahead_is_sent_and_answered_in_its_turn() -> None:
    """The answer to the init sent ahead is read and dropped, the init asked for goes and is
    answered: a bad manifest in it is the caller's error, not the first init's success."""
    worker = await WorkerProcess.launch(None)
    try:
        await worker.send_init(BOTS, GAMES)
        missing = [{"source": str(ROOT / "bots" / "no-such-bot"), "alias": "x"}]
        with pytest.raises(ArenaError, match="no-such-bot"):
            await worker.init(missing, GAMES)
    finally:
        await worker.close()
