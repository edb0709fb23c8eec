"""Time banks and the first-move allowance against real bot processes (issue 22.5): a bot
(tests/referee/bots/bankbot.py) that spends chosen time on chosen turns of its own, and logs
back what its `hello` and every `turn` said. The arithmetic alone: tests/referee/test_clock.py.

Margins are generous for a loaded machine: a move time of 0.2 s, a slow reply of 0.6 s and a
bank of 1 s, so a reply draws about 0.4 s and the bank covers two of them, not three.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from arena.referee import GameRecord, MatchConfig, TimeControl, load_bot, play_match
from arena.referee.match import HostStall
from arena.sandbox import Limits

from . import test_fair_clocks as fair
from .test_fair_clocks import timing_bot  # noqa: F401 (the fixture: the C timing bot)

HERE = Path(__file__).resolve().parent
BANKBOT = HERE / "bots" / "bankbot.py"

BANKED = TimeControl(move_time=0.2, bank=1.0, margin=0.05)
#: a short game: each seat plays 4 turns of one action
OPTIONS = {"max_turns": 8}


def bank_bot(mode: str = "sleep", seconds: float = 0.0, turns: str = "", encoding="msgpack"):
    """The bank bot spending `seconds` in `mode` on its own turns `turns` ("1,3")."""
    command = f"{sys.executable} {BANKBOT} {mode} {seconds} {turns}".strip()
    spec = load_bot(("json:" if encoding == "json" else "") + command)
    env = {"TESTBOT_ENCODING": encoding, "ARENA_TESTBOT_SESSION": str(os.getpid())}
    return replace(spec, name=f"bank-{mode}", env=tuple(sorted(env.items())))


def config(a, b, tc: TimeControl = BANKED, **kw) -> MatchConfig:
    return MatchConfig("stripes", dict(OPTIONS), (a, b), tc, seed=3, **kw)


async def play(cfg: MatchConfig) -> GameRecord:
    """The game; a host stall (the machine, not a bot, made a reply late) is the one outcome
    these tests cannot judge: it is voided, so it is played again, a few times at most."""
    for _ in range(3):
        try:
            return await play_match(cfg)
        except HostStall:
            continue
    return await play_match(cfg)


def seen(record: GameRecord, seat: int, kind: str) -> list[dict]:
    """What the bot at `seat` logged it received: its `hello` time control, or each `turn`."""
    out = []
    for log in record.logs:
        word, _, rest = log["message"].partition(" ")
        if log["seat"] == seat and word == kind:
            out.append(json.loads(rest))
    return out


def own_turns(record: GameRecord, seat: int) -> list[dict]:
    return [t for t in record.turns if t["seat"] == seat]


@pytest.mark.parametrize("encoding", ["msgpack", "json"])
async def test_a_slow_reply_survives_on_the_bank_and_the_record_shows_the_draw(encoding):
    tc = replace(BANKED, first_move=0.4)
    record = await play(
        config(bank_bot("sleep", 0.6, "2", encoding), bank_bot(encoding=encoding), tc)
    )
    assert record.result["reason"] != "time_forfeit", record.result["detail"]
    assert record.time_control["bank"] == 1.0 and record.time_control["first_move"] == 0.4
    # hello: the time control with its bank and first-move time, in either encoding
    for seat in (0, 1):
        (hello,) = seen(record, seat, "hello")
        assert hello["bank"] == 1.0 and hello["first_move"] == 0.4 and hello["move_time"] == 0.2
    # every turn: what is left of both banks, as the record has it after the turn before
    turns = seen(record, 0, "turn")
    assert len(turns) == 4
    assert turns[0]["banks"] == [1.0, 1.0] and turns[0]["deadline"] == 0.4  # its first move
    assert turns[1]["banks"] == [1.0, 1.0] and turns[1]["deadline"] == 0.2
    mine = own_turns(record, 0)
    slow = mine[1]
    assert slow["elapsed"] >= 0.59
    # charged its own time less the move time: about 0.4 s (more on a loaded machine)
    assert 0.35 <= slow["bank_drawn"] <= 0.95, slow
    left = slow["banks_after"][0]
    assert left == pytest.approx(1.0 - slow["bank_drawn"])
    assert turns[2]["banks"][0] == left  # the next turn tells the bot what is left
    # never refilled, never negative; the other seat's bank is its own
    for t in record.turns:
        assert 0.0 <= t["banks_after"][0] <= 1.0 and 0.0 <= t["banks_after"][1] <= 1.0
    after = [t["banks_after"][0] for t in mine]
    assert after == sorted(after, reverse=True)


async def test_a_bot_that_overdraws_its_bank_loses_on_time_saying_so():
    record = await play(config(bank_bot("sleep", 0.6, "1,2,3,4"), bank_bot()))
    res = record.result
    assert res["reason"] == "time_forfeit" and res["loser_seat"] == 0, res["detail"]
    assert "the time bank ran out" in res["detail"], res["detail"]
    failure = res["failure"]
    assert failure["deadline"] == pytest.approx(0.2)
    # what was left could not cover a reply 0.4 s past its move time
    assert failure["bank"] < 0.4 + BANKED.margin
    mine = own_turns(record, 0)
    assert len(mine) >= 2  # it drew on the bank before it ran out
    assert mine[0]["bank_drawn"] >= 0.35
    assert mine[-1]["banks_after"][0] == 0.0  # the forfeit emptied it, no further


async def test_the_first_move_allowance_lets_a_slow_first_reply_through_not_a_second():
    tc = TimeControl(move_time=0.2, first_move=1.5, margin=0.05)
    record = await play(config(bank_bot("sleep", 0.6, "1"), bank_bot(), tc))
    assert record.result["reason"] != "time_forfeit", record.result["detail"]
    assert own_turns(record, 0)[0]["elapsed"] >= 0.59
    deadlines = [t["deadline"] for t in seen(record, 0, "turn")]
    assert deadlines[0] == 1.5 and set(deadlines[1:]) == {0.2}
    assert "banks_after" not in record.turns[0]  # no bank: the records stay as they were
    assert all(t["banks"] is None for t in seen(record, 0, "turn"))  # nor does `turn`

    record = await play(config(bank_bot("sleep", 0.6, "2"), bank_bot(), tc))
    res = record.result
    assert res["reason"] == "time_forfeit" and res["loser_seat"] == 0, res["detail"]
    assert len(own_turns(record, 0)) == 2  # at its second turn
    assert "time bank" not in res["detail"]


async def test_the_cpu_clock_charges_the_bank_cpu_time():
    """Under the CPU clock a busy reply draws its CPU time past the move time from the bank, a
    sleeping one nothing (its wall cap stretches with the bank: it is not flagged either)."""
    tc = replace(BANKED, clock="cpu")
    record = await play(config(bank_bot("busy", 0.6, "1"), bank_bot("sleep", 0.6, "1"), tc))
    if "none" in (record.bots[0].get("accounting"), record.bots[1].get("accounting")):
        pytest.skip("no cgroup counts the bots' CPU time here: the CPU clock is the wall's")
    assert record.result["reason"] != "time_forfeit", record.result["detail"]
    busy, sleepy = own_turns(record, 0)[0], own_turns(record, 1)[0]
    assert busy["cpu"] >= 0.55 and busy["charged"] == busy["cpu"]
    assert 0.35 <= busy["bank_drawn"] <= 0.8, busy
    assert sleepy["elapsed"] >= 0.59 and sleepy["cpu"] < 0.1, sleepy
    assert sleepy["bank_drawn"] < 0.05, sleepy
    last = record.turns[-1]["banks_after"]
    assert last[0] == pytest.approx(1.0 - busy["bank_drawn"], abs=0.1)
    assert last[1] > 0.9


async def test_a_host_stall_never_eats_the_bank(timing_bot):  # noqa: F811 (the fixture)
    """A bot that computes half its move time on a CPU the host's hog holds five sixths of the
    time is late by the wall clock, well into its bank; the host's share is never charged, so
    it draws nothing from the bank (and its game is neither flagged nor voided)."""
    bot = replace(
        load_bot(f"json:{timing_bot} busy 0.5"), env=(("TIMING_RT", "1"),)
    )  # real-time: only the hog holds it off its CPU (tests/referee/test_fair_clocks.py)
    other = load_bot(f"json:{timing_bot} sleep 0")
    cfg = MatchConfig(
        "stripes",
        {"max_turns": 6},
        (bot, other),
        replace(BANKED, margin=0.01),
        seed=1,
        cpu_affinity=((fair.CPU,), (0,)),
        limits=Limits(cpus=float(os.cpu_count() or 1)),
    )
    with fair.hog(timing_bot, 25, 30):
        record = await play_match(cfg, on_log=fair.real_time)
    assert record.bots[0]["accounting"].startswith("cgroup"), record.bots[0]
    assert record.result["reason"] != "time_forfeit", record.result["detail"]
    mine = own_turns(record, 0)
    assert max(t["elapsed"] for t in mine) > 0.3, mine  # the hog made it late by the wall
    for t in mine:
        assert t["host"] > 0.0 and t["charged"] <= t["elapsed"] - t["host"] + 1e-6
        assert t["bank_drawn"] == pytest.approx(max(0.0, t["charged"] - 0.2), abs=1e-6)
        assert t["bank_drawn"] < 0.05, t
