"""The three random bots speak the protocol correctly in every encoding they support."""

from __future__ import annotations

import pytest

from .botpipe import BOT_ENCODINGS, BOTS, end_message, fake_turn, hello

LEGAL = [f"{c}{r}" for c in "abcdefg" for r in range(1, 8)]  # 49 actions


@pytest.mark.parametrize(("bot_id", "encoding"), BOT_ENCODINGS)
def test_handshake_move_end(start_bot, bot_id, encoding):
    bot = start_bot(bot_id, encoding)
    bot.send(hello(seat=1, seed=7))
    ready = bot.recv()
    assert ready["type"] == "ready"
    assert ready["name"] == bot_id
    assert ready["legal"] is True  # random bots need the list
    assert ready.get("protocol", 1) == 1
    assert isinstance(ready["version"], str) and isinstance(ready["author"], str)

    for turn in (2, 4, 6):
        bot.send(fake_turn(LEGAL, seat=1, turn=turn))
        move = bot.recv()
        assert move["type"] == "move"
        assert len(move["actions"]) == 1
        assert move["actions"][0] in LEGAL
        assert not move.get("more", False)

    bot.send(end_message("loss"))
    assert bot.close_and_wait() == 0


@pytest.mark.parametrize(("bot_id", "encoding"), BOT_ENCODINGS)
def test_seeded_choices_are_reproducible(start_bot, bot_id, encoding):
    """Same seed and seat -> same game; another seed -> (almost surely) another game."""

    def play(seed: int, seat: int) -> list[str]:
        bot = start_bot(bot_id, encoding)
        bot.send(hello(seat=seat, seed=seed))
        bot.recv()
        picks = []
        for turn in range(1, 13):
            bot.send(fake_turn(LEGAL, seat=seat, turn=turn))
            picks.append(bot.recv()["actions"][0])
        bot.send(end_message())
        assert bot.close_and_wait() == 0
        return picks

    first = play(12345678901234, 0)
    assert play(12345678901234, 0) == first
    assert play(12345678901235, 0) != first  # 49^12 possible games
    assert play(12345678901234, 1) != first


@pytest.mark.parametrize(("bot_id", "encoding"), BOT_ENCODINGS)
def test_escaped_actions_and_tricky_positions(start_bot, bot_id, encoding):
    """Actions are echoed exactly, whatever the position holds (the C scanner's edge cases)."""
    legal = ['we"ird\\act/ion']
    bot = start_bot(bot_id, encoding)
    bot.send(hello(seed=3, options={"board": "hex 5", "nested": {"legal": ["nope"]}}))
    bot.recv()
    bot.send(fake_turn(legal, position={"legal": ["not this"], "s": ']}"{['}))
    assert bot.recv()["actions"] == legal
    # the legal list after the position, and before it: both must work
    msg = fake_turn(["-e5-g7"])
    bot.send({"legal": msg.pop("legal"), **msg})
    assert bot.recv()["actions"] == ["-e5-g7"]
    bot.send(end_message())
    assert bot.close_and_wait() == 0


@pytest.mark.parametrize(("bot_id", "encoding"), BOT_ENCODINGS)
def test_multi_action_turn_is_answered_one_action_at_a_time(start_bot, bot_id, encoding):
    """Papagra-like: the referee asks again while mandatory actions remain."""
    bot = start_bot(bot_id, encoding)
    bot.send(hello(game="papagra", seed=9))
    bot.recv()
    bot.send(fake_turn(["e5", "g7"], actions_remaining=2))
    first = bot.recv()["actions"]
    bot.send(fake_turn(["-" + first[0], "c3"], turn_actions=first, actions_remaining=1))
    second = bot.recv()["actions"]
    assert len(second) == 1 and second[0] in ("-" + first[0], "c3")
    bot.send(end_message())
    assert bot.close_and_wait() == 0


@pytest.mark.parametrize(("bot_id", "encoding"), BOT_ENCODINGS)
def test_unknown_messages_ignored_and_eof_exits_cleanly(start_bot, bot_id, encoding):
    bot = start_bot(bot_id, encoding)
    bot.send(hello())
    bot.recv()
    bot.send({"type": "ping-from-the-future", "payload": [1, {"x": "y"}]})
    bot.send(fake_turn(["a1"]))
    assert bot.recv()["actions"] == ["a1"]
    # the referee vanishes without an `end`: the bot must still exit, and with status 0
    assert bot.close_and_wait() == 0


def test_c_bot_builds_static(tmp_path):
    """The sandbox ships random-c in a FROM scratch image, which needs a static binary."""
    import shutil
    import subprocess

    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on PATH")
    shutil.copy(BOTS / "random-c" / "random_bot.c", tmp_path)
    build = subprocess.run(
        ["cc", "-O2", "-static", "-o", "random_bot", "random_bot.c"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    if build.returncode != 0 and "cannot find -lc" in build.stderr:
        pytest.skip("static libc (libc6-dev's libc.a) is not installed")
    assert build.returncode == 0, build.stderr
    run = subprocess.run(
        [str(tmp_path / "random_bot")],
        input=b'{"type":"hello","seat":0,"seed":1}\n{"type":"turn","legal":["x9"]}\n',
        capture_output=True,
        timeout=20,
    )
    assert run.returncode == 0
    assert run.stdout.splitlines()[1] == b'{"type":"move","actions":["x9"]}'
