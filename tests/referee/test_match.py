"""The referee against real bot processes: real games, every failure kind, logs, records."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
import trio

from arena.errors import ArenaError
from arena.games import make_game
from arena.referee import (
    GameRecord,
    MatchConfig,
    RefereeFault,
    TimeControl,
    load_bot,
    play_match,
)
from arena.sandbox import Limits

from .conftest import bundled, tbot

FAST = TimeControl(startup=10.0, base=10.0, increment=0.1)


def config(game, a, b, tc=FAST, **kw):
    return MatchConfig(game=game, options=kw.pop("options", {}), bots=(a, b), time_control=tc, **kw)


def check_replays(record: GameRecord) -> None:
    """The record replays through the engine to the position the referee ended in."""
    *_, (_, state) = record.replay_states()
    assert state.describe() == record.final_position
    again = GameRecord.from_dict(GameRecord.from_dict(record.to_dict()).to_dict())
    assert again == record


# --- real games between bots of different languages ---
@pytest.mark.parametrize(
    "game, a, b",
    [
        ("papagra", "random-py", "random-c"),
        ("wrigglers", "random-c", "random-js"),
        ("stripes", "random-js", "random-py"),
        ("quadraphages", "random-py", "random-js"),
        ("hexaphage", "random-c", "random-py"),
    ],
)
async def test_real_game_between_languages(game, a, b):
    bot_a, bot_b = bundled(a), bundled(b)
    record = await play_match(config(game, bot_a, bot_b, seed=7))
    res = record.result
    assert not res["forfeit"], res
    assert res["reason"] not in ("time_forfeit", "crash", "protocol_error")
    state = make_game(game, record.options).new_initial_state()
    assert res["result"] in ("1-0", "0-1", "1/2-1/2")
    assert [bot["name"] for bot in record.bots] == [a, b]
    assert all(bot["hash"].startswith("sha256:") for bot in record.bots)
    assert [r["name"] for r in record.ready] == [a, b]
    assert record.turn_count == len(record.turns) > 0
    assert record.started_at and record.finished_at
    assert state is not None
    check_replays(record)
    # every turn is charged to its mover, with both clocks afterwards
    for turn in record.turns:
        assert turn["elapsed"] >= 0 and len(turn["clocks_after"]) == 2


# --- every failure kind ---
FAILURES = [
    # mode, arg, fail seat, reason, text in detail
    ("crash", "", 0, "crash", "exited with status 3"),
    ("segv", "", 1, "crash", "SIGSEGV"),
    ("close_stdout", "", 0, "crash", "stdout closed"),
    ("garbage", "", 1, "protocol_error", "malformed msgpack"),
    ("unknown_type", "", 0, "protocol_error", "unknown message type 'dance'"),
    ("wrong_type", "", 1, "protocol_error", "move.actions must be a non-empty list of strings"),
    ("oversize", "", 0, "protocol_error", "exceeds the cap of 1048576 bytes"),
    ("unsolicited", "", 1, "protocol_error", "while no request was pending"),
    ("illegal", "zz99", 0, "illegal_action", "zz99"),
    ("too_many", "", 1, "illegal_action", "the turn has ended"),
    ("wrong_version", "", 0, "protocol_error", "bot speaks protocol 2, referee speaks 1"),
    ("bad_ready", "", 1, "protocol_error", "ready.name must be a string"),
    ("crash_at_start", "", 0, "failed_start", "exited with status 7"),
    ("resign", "", 1, "resign", "hopeless"),
]


@pytest.mark.parametrize("mode, arg, seat, reason, text", FAILURES, ids=[f[0] for f in FAILURES])
async def test_failure_kinds(mode, arg, seat, reason, text):
    bad = tbot(mode, arg, fail_turn=2)
    good = tbot("good")
    bots = (bad, good) if seat == 0 else (good, bad)
    record = await play_match(config("wrigglers", *bots, seed=1))
    res = record.result
    assert res["reason"] == reason, res
    assert res["winner"] == 1 - seat, "the opponent is credited the win"
    assert res["loser_seat"] == seat
    assert res["result"] == ("0-1" if seat == 0 else "1-0")
    assert text in res["detail"], res["detail"]
    assert res["forfeit"] is (reason != "resign")
    check_replays(record)


async def test_memory_hog_loses_by_memory_limit():
    hog = replace(tbot("hog", fail_turn=2), limits=Limits(memory_mb=128))
    record = await play_match(config("stripes", hog, tbot("good")))
    res = record.result
    # memory_limit where the sandbox can tell (cgroups), a plain crash (SIGKILL) otherwise
    assert res["reason"] in ("memory_limit", "crash"), res
    assert res["winner"] == 1 and res["forfeit"]


async def test_a_bot_killed_by_its_memory_limit_after_its_deadline_loses_by_memory_limit():
    """On a loaded machine the kernel's OOM kill can come after the clock ran out; the bot
    still loses by what killed it (a hostile test once saw time_forfeit here)."""
    from arena.sandbox.process import capabilities

    if capabilities().cgroups.memory is None:
        pytest.skip("no memory cgroup: the sandbox cannot tell a memory kill from a crash")
    hog = replace(tbot("hog_late", fail_turn=1), limits=Limits(memory_mb=128))
    tc = TimeControl(startup=10.0, base=0.3, increment=0.0)
    record = await play_match(config("stripes", hog, tbot("good"), tc=tc))
    res = record.result
    assert res["reason"] == "memory_limit", res
    assert res["winner"] == 1 and res["forfeit"]
    assert "no reply to turn within 0.300 s" in res["detail"], res["detail"]


async def test_the_operators_limit_caps_what_a_manifest_asks_for():
    """A bot asking for a terabyte still gets the operator's 128 MB (the arena once ran a
    bot with a negative memory_mb with no memory limit at all)."""
    greedy = replace(tbot("hog", fail_turn=2), limits=Limits.requested(memory_mb=1 << 20))
    cfg = replace(config("stripes", greedy, tbot("good")), limits=Limits(memory_mb=128))
    record = await play_match(cfg)
    res = record.result
    assert res["reason"] in ("memory_limit", "crash"), res
    assert res["winner"] == 1 and res["forfeit"]


async def test_crash_detail_has_exit_status_and_stderr_tail():
    record = await play_match(config("stripes", tbot("crash"), tbot("good")))
    failure = record.result["failure"]
    assert failure["exit"]["returncode"] == 3
    assert "Traceback: boom" in failure["stderr_tail"]
    assert "Traceback: boom" in record.result["detail"]
    assert "Traceback: boom" in record.stderr[0]


async def test_illegal_action_records_the_engine_message_verbatim():
    record = await play_match(config("papagra", tbot("good"), tbot("occupied", fail_turn=1)))
    failure = record.result["failure"]
    game = make_game("papagra")
    state = game.new_initial_state()
    first = record.turns[0]["actions"][0]["action"]
    state.apply(first)
    with pytest.raises(ArenaError) as err:
        state.apply(first)
    assert failure["action"] == first
    assert failure["message"] == err.value.message
    assert record.turns[-1]["actions"][-1] == {
        "action": first,
        "elapsed": record.turns[-1]["actions"][-1]["elapsed"],
        "illegal": True,
    }


async def test_never_ready_is_failed_start():
    # long enough for the good bot to start on a loaded machine
    tc = TimeControl(startup=1.5, base=5.0)
    record = await play_match(config("wrigglers", tbot("good"), tbot("never_ready"), tc))
    assert record.result["reason"] == "failed_start"
    assert record.result["winner"] == 0
    assert "did not answer hello within 1.5 s" in record.result["detail"]


async def test_missing_executable_is_failed_start(tmp_path):
    (tmp_path / "bot.toml").write_text('name = "ghost"\ncommand = ["./no-such-bot"]\n')
    record = await play_match(config("stripes", tbot("good"), load_bot(tmp_path)))
    assert record.result["reason"] == "failed_start"
    assert record.result["winner"] == 0
    assert "no-such-bot" in record.result["detail"]


async def test_failed_build_is_failed_start(tmp_path):
    (tmp_path / "bot.toml").write_text(
        'name = "broken"\ncommand = ["./bot"]\nbuild = ["cc", "-o", "bot", "bot.c"]\n'
    )
    (tmp_path / "bot.c").write_text("this is not C\n")
    if load_bot(tmp_path).needs_build() is False:
        pytest.fail("a missing output must need a build")
    record = await play_match(config("stripes", load_bot(tmp_path), tbot("good")))
    assert record.result["reason"] == "failed_start"
    assert "build" in record.result["detail"]


async def test_both_failing_at_start_is_a_draw():
    tc = TimeControl(startup=0.5, base=5.0)
    record = await play_match(config("stripes", tbot("crash_at_start"), tbot("never_ready"), tc))
    res = record.result
    assert res["reason"] == "both_failed_start"
    assert res["winner"] is None and res["result"] == "1/2-1/2"
    assert {f["seat"] for f in res["failure"]["seats"]} == {0, 1}


async def test_json_encoding_bot():
    record = await play_match(
        config("quadraphages", tbot("good", encoding="json"), tbot("good"), seed=3)
    )
    assert not record.result["forfeit"], record.result
    assert record.bots[0]["encoding"] == "json"


async def test_json_garbage_is_protocol_error():
    record = await play_match(config("stripes", tbot("garbage", encoding="json"), tbot("good")))
    assert record.result["reason"] == "protocol_error"
    assert "malformed JSON line" in record.result["detail"]


# --- time controls ---
async def test_slow_bot_is_flagged_with_move_time():
    tc = TimeControl(startup=10.0, move_time=0.3, margin=0.05)
    record = await play_match(config("wrigglers", tbot("good"), tbot("slow", fail_turn=2), tc))
    res = record.result
    assert res["reason"] == "time_forfeit" and res["winner"] == 0
    assert res["failure"]["deadline"] == pytest.approx(0.3)


@pytest.mark.parametrize(
    "tc",
    [
        TimeControl(startup=10.0, base=0.4, increment=0.05, margin=0.0),
        TimeControl(startup=10.0, move_time=0.25, margin=0.0),
        TimeControl(startup=10.0, base=5.0, increment=0.0, move_time=0.2, margin=0.0),
    ],
    ids=["fischer", "move_time", "both"],
)
async def test_answering_200ms_late_is_always_flagged(tc):
    record = await play_match(config("papagra", tbot("late", "0.2", fail_turn=3), tbot("good"), tc))
    res = record.result
    assert res["reason"] == "time_forfeit", res
    assert res["loser_seat"] == 0
    # flagged at the deadline itself (margin 0), not when the late reply finally came
    assert res["failure"]["elapsed"] < res["failure"]["deadline"] + 0.2


async def test_answering_at_half_the_remaining_time_is_never_flagged_over_200_turns():
    tc = TimeControl(startup=10.0, base=1.0, increment=0.02)
    record = await play_match(
        config(
            "papagra",
            tbot("half"),
            tbot("good"),
            tc,
            options={"max_turns": "400"},
            seed=11,
        )
    )
    res = record.result
    assert res["reason"] != "time_forfeit", res
    mine = [t for t in record.turns if t["seat"] == 0]
    assert len(mine) >= 200 or not res["forfeit"]
    if len(mine) < 200:
        pytest.skip(f"the game ended by the rules after {len(mine)} turns: {res['reason']}")


# --- logs, multi-action turns, end of game ---
async def test_logs_are_recorded_truncated_and_capped():
    record = await play_match(config("papagra", tbot("chatty"), tbot("log_between")))
    mine = [log for log in record.logs if log["seat"] == 0]
    assert mine and all(len(log["message"].encode()) <= 4096 + 20 for log in mine)
    assert mine[0]["message"].endswith("[truncated]")
    assert sum(len(log["message"]) for log in mine) <= 64 * 1024 + 20 * len(mine)
    assert record.logs_dropped[0] > 0
    between = [log for log in record.logs if log["seat"] == 1]
    assert between and between[0]["message"].startswith("thinking after turn")
    assert not record.result["forfeit"], record.result


async def test_each_log_line_records_the_turn_being_played():
    """A line logged while the referee waits for the bot's reply carries that turn's number
    (docs/record.md); one logged before the first turn carries none. The opponent's lines
    between turns carry the turn being played when they arrived."""
    record = await play_match(config("papagra", tbot("log_turns"), tbot("log_between"), seed=3))
    mine = [log for log in record.logs if log["seat"] == 0]
    assert mine[0]["message"] == "before ready" and "turn" not in mine[0]
    asked = mine[1:]
    assert asked and all(log["message"] == f"turn {log['turn']}" for log in asked), asked
    # every turn of its own that it was asked for is there, in order
    own = sorted({t["turn"] for t in record.turns if t["seat"] == 0})
    assert [log["turn"] for log in asked] == sorted(log["turn"] for log in asked)
    assert {log["turn"] for log in asked} == set(own)
    between = [log for log in record.logs if log["seat"] == 1]
    # "thinking after turn N" is read while turn N is still being played, during the
    # opponent's turn N+1, or at the latest with the bot's next reply (turn N+2)
    assert between and all(
        log["turn"] - int(log["message"].rsplit(" ", 1)[1]) in (0, 1, 2) for log in between
    )
    assert [log["turn"] for log in between] == sorted(log["turn"] for log in between)
    assert GameRecord.from_dict(record.to_dict()) == record  # the field survives a round trip


async def test_multi_action_turns_are_asked_for_again():
    record = await play_match(config("papagra", tbot("good"), tbot("good"), seed=5))
    later = [t for t in record.turns if t["turn"] > 1]
    # the test bot sends one action per reply: two requests for each two-action turn
    assert all(len(t["actions"]) == 2 and t["requests"] == 2 for t in later[:-1])
    check_replays(record)


async def test_optional_actions_need_more():
    options = {"extra_removals": "1", "max_turns": "30"}
    record = await play_match(
        config("papagra", tbot("greedy"), tbot("good"), options=options, seed=2)
    )
    assert not record.result["forfeit"], record.result
    greedy = [t for t in record.turns if t["seat"] == 0 and t["turn"] > 1]
    plain = [t for t in record.turns if t["seat"] == 1]
    # `more: true` keeps the turn open for the optional third action
    assert all(len(t["actions"]) == 3 and t["requests"] == 3 for t in greedy[:-1])
    assert not any(t.get("ended_early") for t in greedy)
    # without `more` the turn ends once only optional actions remain
    assert all(len(t["actions"]) == 2 and t.get("ended_early") for t in plain)
    check_replays(record)


async def test_bot_ignoring_end_is_killed_after_the_grace_period():
    record = await play_match(
        MatchConfig(
            game="stripes",
            options={},
            bots=(tbot("ignore_end"), tbot("good")),
            time_control=FAST,
            end_grace=1.0,
        )
    )
    assert record.exits[0]["exited_after_end"] is False
    assert record.exits[1]["exited_after_end"] is True


async def test_grandchildren_do_not_survive_the_game():
    record = await play_match(config("stripes", tbot("spawn"), tbot("good")))
    assert not record.result["forfeit"]
    # the autouse fixture checks that the `sleep 60` grandchild is gone


async def test_bots_get_a_scrubbed_environment_own_directory_and_process_group(monkeypatch):
    monkeypatch.setenv("ARENA_TEST_SECRET", "hunter2")
    record = await play_match(config("stripes", tbot("env"), tbot("env")))
    facts = [json.loads(log["message"]) for log in record.logs]
    assert len(facts) == 2
    for f in facts:
        assert "ARENA_TEST_SECRET" not in f["env"]
        assert f["pgid"] != os.getpgid(0)
    assert facts[0]["cwd"] != facts[1]["cwd"] != os.getcwd()
    assert facts[0]["pgid"] != facts[1]["pgid"]


async def test_cancellation_from_outside_kills_the_bots():
    with trio.move_on_after(0.5):
        await play_match(
            config("wrigglers", tbot("good"), tbot("slow", fail_turn=1), TimeControl(base=60))
        )
    # the autouse fixture checks that both bots are gone


async def test_observer_exceptions_reach_the_caller_unchanged():
    def observer(event):
        if event.turn == 3:
            raise BrokenPipeError("stdout closed")

    with pytest.raises(BrokenPipeError):
        await play_match(config("wrigglers", tbot("good"), tbot("good")), observer)


async def test_an_engine_bug_voids_the_game(monkeypatch):
    state_class = type(make_game("stripes").new_initial_state())

    def broken(self):
        raise RuntimeError("engine bug")

    monkeypatch.setattr(state_class, "legal_actions", broken)
    with pytest.raises(RefereeFault, match="engine bug"):
        await play_match(config("stripes", tbot("good"), tbot("good")))


async def test_opening_is_played_and_not_charged():
    record = await play_match(
        config("wrigglers", tbot("good"), tbot("good"), opening=(("e5",), ("d4",)))
    )
    assert record.opening == [["e5"], ["d4"]]
    assert record.turns[0]["turn"] == 3
    check_replays(record)


async def test_bad_opening_and_bad_options_are_user_errors():
    with pytest.raises(ArenaError, match="opening turn 1"):
        await play_match(config("wrigglers", tbot(), tbot(), opening=(("zz99",),)))
    with pytest.raises(ArenaError, match="unknown option"):
        await play_match(config("wrigglers", tbot(), tbot(), options={"nope": "1"}))
