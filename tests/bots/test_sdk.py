"""The SDK's contract, checked through small bots written on it and run as real subprocesses."""

from __future__ import annotations

import sys
import textwrap

import pytest

from .botpipe import BotPipe, end_message, fake_turn, hello

ENCODINGS = ["msgpack", "json"]

# A bot exercising every reply form; what it does is steered by the first legal action.
SCRIPT = textwrap.dedent(
    """
    from protocol.sdk import Move, Resign, run_bot

    def choose(turn, bot):
        what = turn["legal"][0]
        bot.log(f"seat {bot.seat} game {bot.game} left {bot.time_left():.1f}")
        print("stray print must not reach the referee")
        if what == "resign":
            return Resign
        if what == "resign-why":
            return Resign("hopeless")
        if what == "more":
            return Move(["a", "b"], more=True)
        if what == "tuple":
            return ("x", "y")
        if what == "memory":
            bot.memory["n"] = bot.memory.get("n", 0) + 1
            return str(bot.memory["n"])
        if what == "crash":
            raise RuntimeError("bot bug")
        if what == "nothing":
            return []
        return what

    def on_end(msg, bot):
        bot.log("end: " + msg["you"])

    raise SystemExit(run_bot(choose, name="sdk-test", version="2.5", author="me",
                             on_end=on_end))
    """
)


@pytest.fixture
def sdk_bot(tmp_path, request):
    started = []

    def start(encoding: str, script: str = SCRIPT) -> BotPipe:
        path = tmp_path / f"bot{len(started)}.py"
        path.write_text(script)
        bot = BotPipe([sys.executable, str(path)], tmp_path, encoding)
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.kill()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_reply_forms_logs_and_end(sdk_bot, encoding):
    bot = sdk_bot(encoding)
    bot.send(hello(seat=1, game="papagra"))
    assert bot.recv() == {
        "type": "ready",
        "name": "sdk-test",
        "version": "2.5",
        "author": "me",
        "legal": True,
        "protocol": 1,
        "sessions": True,
    }
    bot.send(fake_turn(["e5"]))
    assert bot.recv() == {"type": "move", "actions": ["e5"]}
    assert bot.logs == ["seat 1 game papagra left 5.0"]
    bot.send(fake_turn(["more"]))
    assert bot.recv() == {"type": "move", "actions": ["a", "b"], "more": True}
    bot.send(fake_turn(["tuple"]))
    assert bot.recv()["actions"] == ["x", "y"]
    bot.send(fake_turn(["memory"]))
    assert bot.recv()["actions"] == ["1"]
    bot.send(fake_turn(["memory"]))
    assert bot.recv()["actions"] == ["2"]
    bot.send(end_message("draw"))
    assert bot.recv_any() == {"type": "log", "message": "end: draw"}
    # a session: the next game's hello starts afresh (empty memory)
    bot.send(hello(seat=0, game="papagra"))
    assert bot.recv()["type"] == "ready"
    bot.send(fake_turn(["memory"]))
    assert bot.recv()["actions"] == ["1"]
    bot.send(end_message("draw"))
    assert bot.recv_any() == {"type": "log", "message": "end: draw"}
    bot.proc.stdin.close()  # type: ignore[union-attr]
    assert bot.recv_any() is None  # nothing else on stdout: the print went to stderr
    assert bot.close_and_wait() == 0
    assert "stray print must not reach the referee" in bot.stderr()


@pytest.mark.parametrize(
    ("what", "expected"), [("resign", {}), ("resign-why", {"reason": "hopeless"})]
)
def test_resign(sdk_bot, what, expected):
    bot = sdk_bot("msgpack")
    bot.send(hello())
    bot.recv()
    bot.send(fake_turn([what]))
    assert bot.recv() == {"type": "resign", **expected}
    bot.send(end_message("loss"))
    assert bot.close_and_wait() == 0


@pytest.mark.parametrize("what", ["crash", "nothing"])
def test_bot_bug_crashes_with_traceback(sdk_bot, what):
    """A failing choose function ends the bot loudly: the referee reports a crash with stderr."""
    bot = sdk_bot("json")
    bot.send(hello())
    bot.recv()
    bot.send(fake_turn([what]))
    assert bot.recv_or_eof() is None
    assert bot.proc.wait(20) != 0
    err = bot.stderr()
    assert "Traceback" in err
    assert ("bot bug" if what == "crash" else "no action") in err


def test_single_argument_choose_and_encoding_forced(sdk_bot):
    """`choose(turn)` works without the context; `encoding=` overrides detection."""
    script = textwrap.dedent(
        """
        from protocol.sdk import run_bot
        run_bot(lambda turn: turn["legal"][-1], name="one-arg", legal=False, encoding="json")
        """
    )
    bot = sdk_bot("json", script)
    bot.send(hello())
    ready = bot.recv()
    assert ready["name"] == "one-arg" and ready["legal"] is False
    bot.send(fake_turn(["a", "b"]))
    assert bot.recv()["actions"] == ["b"]
    bot.send(end_message())
    assert bot.close_and_wait() == 0


def test_messages_split_and_batched_on_the_pipe(sdk_bot):
    """Framing does not depend on how the bytes arrive: one byte at a time, or several at once."""
    from protocol.framing import encode

    bot = sdk_bot("msgpack")
    data = encode(hello()) + encode({"type": "log-from-nowhere"})
    assert bot.proc.stdin is not None
    for i in range(len(data)):
        bot.proc.stdin.write(data[i : i + 1])
        bot.proc.stdin.flush()
    assert bot.recv()["type"] == "ready"
    bot.proc.stdin.write(encode(fake_turn(["p"])) + encode(fake_turn(["q"])))
    bot.proc.stdin.flush()
    assert bot.recv()["actions"] == ["p"]
    assert bot.recv()["actions"] == ["q"]
    bot.send(end_message())
    assert bot.close_and_wait() == 0


def test_oversized_reply_is_refused_by_the_bot(sdk_bot):
    """With a tiny cap in hello the SDK refuses to send a move the referee would reject."""
    bot = sdk_bot("json")
    bot.send(hello(max_message_bytes=150))
    bot.recv()
    bot.send(fake_turn(["x" * 200]))
    assert bot.recv_or_eof() is None
    assert bot.proc.wait(20) != 0
    assert "exceeds the cap" in bot.stderr()


def test_default_name_is_the_bot_directory(tmp_path):
    """`run_bot(choose)` without a name calls the bot after its directory, like the manifest."""
    bot_dir = tmp_path / "my-bot"
    bot_dir.mkdir()
    (bot_dir / "bot.py").write_text(
        "from protocol.sdk import run_bot\nrun_bot(lambda turn: turn['legal'][0])\n"
    )
    bot = BotPipe([sys.executable, "bot.py"], bot_dir, "msgpack")
    try:
        bot.send(hello())
        assert bot.recv()["name"] == "my-bot"
        bot.send(end_message())
        assert bot.close_and_wait() == 0
    finally:
        bot.kill()


BANK_SCRIPT = textwrap.dedent(
    """
    from protocol.sdk import run_bot

    def choose(turn, bot):
        extra = bot.time_left(bank=True) - bot.time_left()
        tc = bot.time_control
        of = f"of {tc.get('bank')} first {tc.get('first_move')}"
        bot.log(f"bank {bot.bank:.2f} extra {extra:.2f} {of}")
        return turn["legal"][0]

    raise SystemExit(run_bot(choose, name="sdk-bank"))
    """
)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_time_bank_fields_reach_the_context(sdk_bot, encoding):
    """issue 22.5: `hello.time_control.bank`/`first_move` and `turn.banks` (by seat), and
    a turn without `banks` (a referee without banks) is no bank."""
    bot = sdk_bot(encoding, BANK_SCRIPT)
    tc = {**hello()["time_control"], "bank": 3.0, "first_move": 8.0}
    bot.send(hello(seat=1, time_control=tc))
    assert bot.recv()["type"] == "ready"
    bot.send(fake_turn(["e5"], seat=1, banks=[0.5, 2.25]))
    assert bot.recv() == {"type": "move", "actions": ["e5"]}
    bot.send(fake_turn(["e6"], seat=1))
    assert bot.recv() == {"type": "move", "actions": ["e6"]}
    assert bot.logs == [
        "bank 2.25 extra 2.25 of 3.0 first 8.0",
        "bank 0.00 extra 0.00 of 3.0 first 8.0",
    ]
