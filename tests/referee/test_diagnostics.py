"""The mistakes every bot author makes, made by real bot processes, and what the record says.

Each test starts a small misbehaving bot (tests/referee/bots/mistakes.py, written without the
SDK as a first bot is; missing_module.js for Node) against a good test bot and checks that the
recorded reason names the mistake and its fix, not only its symptom.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import replace

import pytest

from arena.referee import MatchConfig, TimeControl, load_bot, play_match
from arena.referee.channel import stderr_lines
from arena.referee.diagnose import quote

from .conftest import HERE, SESSION_MARK, tbot

MISTAKES = HERE / "bots" / "mistakes.py"
#: short startup: every mistake here ends in a startup failure or a protocol error
TC = TimeControl(startup=2.0, base=10.0, increment=0.1)


def mistake(mode: str, encoding: str) -> object:
    prefix = "json:" if encoding == "json" else ""
    spec = load_bot(f"{prefix}{sys.executable} {MISTAKES} {mode}")
    session = SESSION_MARK.decode().split("=", 1)
    return replace(spec, name=f"mistake-{mode}", env=(tuple(session),))


async def failure_of(bot: object) -> dict:
    """Play the mistaken bot in seat 0; its recorded failure (with reason and detail)."""
    record = await play_match(
        MatchConfig(game="stripes", options={}, bots=(bot, tbot("good")), time_control=TC)
    )
    res = record.result
    assert res["loser_seat"] == 0 and res["forfeit"], res
    return {**res["failure"], "record": record}


async def test_unflushed_output_says_flush():
    f = await failure_of(mistake("unflushed", "json"))
    assert f["reason"] == "failed_start"
    assert f["detail"].startswith("did not answer hello within 2 s; its output arrived only ")
    # blocked reading its stdin, as a bot that reads to the end of its input: both are named
    assert "its answer sat in an output buffer (flush stdout after every message)" in f["detail"]


async def test_a_bot_that_reads_to_the_end_of_its_input_is_told_so():
    f = await failure_of(mistake("reads_to_eof", "json"))
    assert f["reason"] == "failed_start"
    assert "it had read all it was sent and was waiting to read more" in f["detail"]
    assert "the referee keeps stdin open for the whole game" in f["detail"]
    assert "read one message at a time" in f["detail"]
    assert "it was buffered; flush" not in f["detail"]


@pytest.mark.parametrize(
    ("mode", "encoding", "hint"),
    [
        ("json_crash_go", "msgpack", 'it was sent hello in msgpack (encoding "msgpack"'),
        ("msgpack_crash_rust", "json", 'it was sent hello as a JSON line (encoding "json")'),
    ],
)
async def test_a_crash_on_the_other_encodings_hello_gets_the_hint(mode, encoding, hint):
    f = await failure_of(mistake(mode, encoding))
    assert f["reason"] == "failed_start"
    assert f["detail"].startswith("before ready: stdout closed: exited with status ")
    assert hint in f["detail"]


@pytest.mark.parametrize(
    ("mode", "encoding", "error"),
    [
        ("print_msgpack", "msgpack", "expected a map, got an integer"),
        ("print_json", "json", "malformed JSON line: "),
    ],
)
async def test_debug_print_on_stdout_is_quoted_and_sent_to_stderr(mode, encoding, error):
    f = await failure_of(mistake(mode, encoding))
    assert f["reason"] == "protocol_error"
    assert error in f["detail"]
    assert '; received "' in f["detail"]
    assert "text on stdout (a debug print?)" in f["detail"]
    assert "write anything else to stderr" in f["detail"]


async def test_debug_print_quote_is_escaped_and_short():
    f = await failure_of(mistake("print_msgpack", "msgpack"))
    assert 'received "starting up, loading the opening book\\n' in f["detail"]
    text = "starting up, loading the opening book\n" + "\x82\xa4type"
    assert quote(text.encode("latin-1"), 42) == (
        '"starting up, loading the opening book\\n\\x82\\xa4ty"...'
    )


async def test_json_where_msgpack_was_expected():
    f = await failure_of(mistake("json_first", "msgpack"))
    assert f["reason"] == "protocol_error"
    assert 'received "{\\"type\\": \\"ready\\"' in f["detail"]
    assert "this is JSON, so the bot seems to speak JSON Lines" in f["detail"]
    assert 'declare encoding = "json" in its bot.toml (or name it as json:COMMAND)' in f["detail"]


async def test_msgpack_where_json_was_expected():
    f = await failure_of(mistake("msgpack_first", "json"))
    assert f["reason"] == "protocol_error"
    assert 'received "\\x83\\xa4type\\xa5ready' in f["detail"]
    assert "this is msgpack, so the bot seems to speak msgpack" in f["detail"]
    assert 'declare encoding = "msgpack" in its bot.toml' in f["detail"]


async def test_json_bot_declared_msgpack_that_waits_for_hello():
    """It never sees a line; once its stdin closes, it chokes on the msgpack it got."""
    f = await failure_of(mistake("json_waits", "msgpack"))
    assert f["reason"] == "failed_start"
    assert 'it was sent hello in msgpack (encoding "msgpack", the default)' in f["detail"]
    assert 'must declare encoding = "json"' in f["detail"]
    assert "JSONDecodeError" in f["detail"]  # the bot's own words, from its stderr


async def test_msgpack_bot_declared_json_that_waits_for_hello():
    f = await failure_of(mistake("msgpack_waits", "json"))
    assert f["reason"] == "failed_start"
    assert f["detail"].startswith("before ready: stdout closed: exited with status 1; ")
    assert 'it was sent hello as a JSON line (encoding "json")' in f["detail"]
    assert "not subscriptable" in f["detail"]


async def test_pretty_printed_json():
    f = await failure_of(mistake("pretty", "json"))
    assert f["reason"] == "protocol_error"
    assert 'received "{"' in f["detail"]
    assert "a JSON message spread over several lines (pretty-printed?)" in f["detail"]
    assert "write each message on one line" in f["detail"]


async def test_json_line_without_its_newline():
    f = await failure_of(mistake("no_newline", "json"))
    assert f["reason"] == "failed_start"
    assert "it sent a JSON object without the newline that ends every message" in f["detail"]
    assert '"{\\"type\\": \\"ready\\", \\"name\\": \\"mistake-no_newline\\"' in f["detail"]


async def test_ready_written_to_stderr():
    f = await failure_of(mistake("stderr", "json"))
    assert f["reason"] == "failed_start"
    assert f["detail"].startswith(
        "did not answer hello within 2 s; its stderr holds its ready: protocol messages go to "
        "stdout; last stderr lines:\n{"
    )


async def test_byte_order_mark():
    f = await failure_of(mistake("bom", "json"))
    assert f["reason"] == "protocol_error"
    assert f["detail"].startswith("malformed JSON line: ")
    assert r'received "\xef\xbb\xbf{' in f["detail"]
    assert "a UTF-8 byte order mark (BOM) before the message" in f["detail"]


async def test_a_late_reply_says_when_it_came():
    """The reply came after the deadline: the record says how late, and that a reply written
    in time but left in a buffer arrives just so."""
    tc = TimeControl(startup=10.0, move_time=0.3, margin=0.0)
    record = await play_match(
        MatchConfig(
            game="stripes",
            options={},
            bots=(tbot("late", "0.1", fail_turn=1), tbot("good")),
            time_control=tc,
        )
    )
    detail = record.result["detail"]
    assert record.result["reason"] == "time_forfeit"
    assert "no reply to turn within 0.300 s + 0 s margin" in detail
    assert re.search(r"its output arrived .*\d\.\d{3} s after the deadline", detail), detail
    assert "flush stdout after every message" in detail


async def test_a_bot_that_stays_silent_gets_no_advice_on_its_turn():
    tc = TimeControl(startup=10.0, move_time=0.3, margin=0.0)
    record = await play_match(
        MatchConfig(
            game="stripes",
            options={},
            bots=(tbot("slow", fail_turn=1), tbot("good")),
            time_control=tc,
        )
    )
    assert record.result["reason"] == "time_forfeit"
    detail = record.result["detail"]
    assert "no reply to turn within" in detail
    assert "flush" not in detail and "nothing arrived" not in detail, detail


def test_stderr_excerpt_keeps_the_line_naming_the_error():
    node = (
        "node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\n"
        "Error: Cannot find module 'msgpack-lite'\nRequire stack:\n- /bot/bot.js\n"
        + "".join(f"    at frame{i} (node:internal/x:{i})\n" for i in range(10))
        + "{\n  code: 'MODULE_NOT_FOUND',\n  requireStack: [ '/bot/bot.js' ]\n}\n\n"
        "Node.js v20.20.2\n"
    )
    excerpt = stderr_lines(node).splitlines()
    assert "Error: Cannot find module 'msgpack-lite'" in excerpt
    assert excerpt[0] == "node:internal/modules/cjs/loader:1210"
    assert excerpt[-1] == "Node.js v20.20.2"
    assert len(excerpt) <= 9
    python = "Traceback (most recent call last):\n" + "  frame\n" * 20 + "ValueError: bad\n"
    assert stderr_lines(python).splitlines()[-1] == "ValueError: bad"
    assert stderr_lines("one\n\ntwo\n") == "one\ntwo"


async def test_node_cannot_find_module_is_in_the_report():
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    bot = load_bot(f"node {HERE / 'bots' / 'missing_module.js'}")
    f = await failure_of(bot)
    assert f["reason"] == "failed_start"
    assert "Cannot find module 'msgpack-lite'" in f["detail"]
    assert "Cannot find module 'msgpack-lite'" in f["stderr_tail"]
    assert "it was sent hello" not in f["detail"]  # a missing module is no encoding problem


async def test_a_crash_and_an_early_exit_name_their_turn():
    for mode, status in (("crash", 3), ("quit", 0)):
        record = await play_match(
            MatchConfig(
                game="papagra",
                options={},
                bots=(tbot("good"), tbot(mode, fail_turn=3)),
                time_control=TC,
            )
        )
        res = record.result
        assert res["reason"] == "crash" and res["loser_seat"] == 1
        # the bot's third turn is the game's turn 6
        expected = f"in turn 6: stdout closed: exited with status {status}"
        assert expected in res["detail"] and expected in res["failure"]["detail"]
        assert res["failure"]["turn"] == 6


@pytest.mark.parametrize("seat", [0, 1])
async def test_two_moves_back_to_back_get_the_same_message_in_both_seats(seat):
    """Papagra's turn 1 takes one action and every later turn two: a bot that sends both
    actions of a turn as two moves without waiting is told so, in either seat, rather than
    having its second move taken as the answer to the next request ("g1 is occupied")."""
    bots = [tbot("good"), tbot("good")]
    bots[seat] = tbot("both_moves", fail_turn=2)
    record = await play_match(
        MatchConfig(game="papagra", options={}, bots=tuple(bots), time_control=TC)
    )
    res = record.result
    assert res["reason"] == "protocol_error" and res["loser_seat"] == seat, res
    assert (
        "sent 'move' while no request was pending: a move answers one turn request"
        in (res["detail"])
    )
