"""Bots that reply the moment they are asked: all on one CPU, a reply is usually complete before
the referee returns from writing the request, and the referee reads it there without a trip
through the scheduler (arena/referee/channel.py). Such a game must still let the other tasks of
the process run, stop at once when it is cancelled, and record the same things."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import trio

from arena.referee import MatchConfig, TimeControl, play_match

from .conftest import bundled, tbot
from .test_match import FAILURES, FAST, check_replays

WRIGGLERS = {"size": "19", "max_turns": "300"}


@contextmanager
def one_cpu() -> Iterator[tuple[int, ...]]:
    """This process (and the bots it starts) on one CPU, as on a busy machine."""
    before = os.sched_getaffinity(0)
    cpu = (min(before),)
    os.sched_setaffinity(0, cpu)
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, before)


def instant_config() -> MatchConfig:
    bot = bundled("random-c")
    return MatchConfig(
        game="wrigglers",
        options=WRIGGLERS,
        bots=(bot, bot),
        time_control=TimeControl(startup=20.0, base=60.0),
        seed=3,
    )


async def test_instant_replies_leave_time_to_other_tasks():
    turns_seen: set[int] = set()
    current = [0]

    async def other_task() -> None:
        while True:
            turns_seen.add(current[0])
            await trio.lowlevel.checkpoint()

    with one_cpu():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(other_task)
            record = await play_match(
                instant_config(), lambda event: current.__setitem__(0, event.turn)
            )
            nursery.cancel_scope.cancel()
    assert not record.result["forfeit"], record.result
    played = len(record.turns)
    assert played > 100
    # the other task ran in the middle of the game, not only before and after it
    assert len({t for t in turns_seen if 0 < t < played}) >= 2, sorted(turns_seen)
    # and the record is complete: it replays to the final position
    *_, (_, state) = record.replay_states()
    assert state.describe() == record.final_position
    assert all(t["elapsed"] >= 0 and t["requests"] == 1 for t in record.turns)


async def test_cancelling_a_game_of_instant_replies_stops_it_at_once():
    seen: list[int] = []
    with one_cpu(), trio.CancelScope() as scope:

        def observer(event) -> None:
            seen.append(event.turn)
            if event.turn == 40:
                scope.cancel()

        await play_match(instant_config(), observer)
    assert scope.cancelled_caught
    assert seen == list(range(1, 41))


# the failures a bot makes in its reply, read at once or by the reader task: the same record
QUICK_FAILURES = [
    f
    for f in FAILURES
    if f[0]
    in ("garbage", "unknown_type", "wrong_type", "unsolicited", "illegal", "too_many", "resign")
]


@pytest.mark.parametrize(
    "mode, arg, seat, reason, text", QUICK_FAILURES, ids=[f[0] for f in QUICK_FAILURES]
)
async def test_failures_in_replies_on_one_cpu(mode, arg, seat, reason, text):
    bad, good = tbot(mode, arg, fail_turn=2), tbot("good")
    bots = (bad, good) if seat == 0 else (good, bad)
    config = MatchConfig(game="wrigglers", options={}, bots=bots, time_control=FAST, seed=1)
    with one_cpu():
        record = await play_match(config)
    res = record.result
    assert (res["reason"], res["loser_seat"], res["winner"]) == (reason, seat, 1 - seat), res
    assert text in res["detail"], res["detail"]
    check_replays(record)


async def test_logs_between_and_in_replies_on_one_cpu():
    config = MatchConfig(
        game="papagra", options={}, bots=(tbot("chatty"), tbot("log_between")), time_control=FAST
    )
    with one_cpu():
        record = await play_match(config)
    assert not record.result["forfeit"], record.result
    assert record.logs_dropped[0] > 0
    between = [log for log in record.logs if log["seat"] == 1]
    assert between and between[0]["message"].startswith("thinking after turn")
    assert all(0 <= log["t"] <= record.duration for log in record.logs)
