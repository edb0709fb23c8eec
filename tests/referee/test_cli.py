"""`arena match`, `arena replay` and `arena check` end to end (bots are real processes)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time

import pytest

from arena.cli import main

from .conftest import BOTS, TESTBOT, bot_processes


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_match_json(capsys):
    code, out, _ = run(
        capsys,
        "match",
        "stripes",
        str(BOTS / "random-py"),
        str(BOTS / "random-py"),
        "--json",
        "--seed",
        "4",
        "--tc",
        "10+0.1",
    )
    assert code == 0
    summary = json.loads(out)
    assert {"game", "winner", "result", "reason", "scores", "turns"} <= set(summary)
    assert summary["game"] == "stripes" and summary["winner"] in (0, 1, None)
    assert summary["result"] in ("1-0", "0-1", "1/2-1/2")
    assert summary["seed"] == 4 and summary["turns"] > 0


def test_match_prints_boards_logs_and_result_then_replay(capsys, tmp_path):
    record = tmp_path / "game.json"
    logger = f"{sys.executable} {TESTBOT} log_between"
    code, out, _ = run(
        capsys,
        "match",
        "wrigglers",
        str(BOTS / "random-py"),
        logger,
        "--option",
        "max_turns=6",
        "--seed",
        "1",
        "--record",
        str(record),
        "--move-time",
        "2",
    )
    assert code == 0
    assert "turn 1: dark (random-py)" in out
    assert "a b c d e f g h i" in out  # the board
    assert "log] thinking after turn 2" in out
    assert "by max_turns" in out.splitlines()[-2]

    code, out, _ = run(capsys, "replay", str(record))
    assert code == 0
    assert "turn 6: light (testbot)" in out
    assert "log] thinking after turn 2" in out
    assert "by max_turns" in out
    code, out, _ = run(capsys, "replay", str(record), "--turn", "2")
    assert code == 0 and out.startswith("a b c")


def test_match_quiet_reports_a_forfeit(capsys):
    bad = f"{sys.executable} {TESTBOT} illegal zz99"
    code, out, _ = run(capsys, "match", "stripes", str(BOTS / "random-py"), bad, "--quiet")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("1-0  red (random-py) wins by illegal_action")
    assert "zz99" in lines[1]


def test_check_passes_a_good_bot(capsys):
    code, out, _ = run(
        capsys,
        "check",
        str(BOTS / "random-py"),
        "--game",
        "stripes",
        "--game",
        "quadraphages",
        "--turns",
        "6",
    )
    assert code == 0, out
    assert "ok   stripes as red" in out and "ok   quadraphages as O" in out
    assert out.strip().endswith("all checks passed")


def test_check_says_what_is_wrong(capsys):
    bad = f"{sys.executable} {TESTBOT} illegal c9"
    code, out, _ = run(capsys, "check", bad, "--game", "stripes", "--turns", "6")
    assert code == 1
    assert "FAIL stripes as red: sent c9 in stripes: " in out
    assert "problem(s)" in out


def test_check_stops_at_a_broken_handshake(capsys):
    bad = f"{sys.executable} {TESTBOT} never_ready"
    code, out, _ = run(capsys, "check", bad, "--startup", "0.5")
    assert code == 1
    assert "did not answer hello within 0.5 s" in out
    assert "the handshake failed" in out
    assert out.count("FAIL") == 1
    # the line says what failed: the handshake, in which game and seat
    assert "FAIL handshake (papagra as pink): did not answer hello within 0.5 s" in out


def test_user_errors_are_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "match", "chess", "a", "b")
    assert code == 2 and err.startswith("arena: error: unknown game 'chess'")
    code, _, err = run(capsys, "match", "stripes", str(tmp_path), str(BOTS / "random-py"))
    assert code == 2 and "has no bot.toml" in err
    code, _, err = run(capsys, "match", "stripes", "x", "y", "--option", "size")
    assert code == 2 and "expected KEY=VALUE" in err
    code, _, err = run(capsys, "match", "stripes", "x", "y", "-o", "nope=1")
    assert code == 2 and "unknown option 'nope'" in err
    code, _, err = run(capsys, "match", "stripes", "cat", "cat", "--tc", "soon")
    assert code == 2 and "time control 'soon'" in err
    bad = tmp_path / "r.json"
    bad.write_text("{}")
    code, _, err = run(capsys, "replay", str(bad))
    assert code == 2 and "not an arena game record" in err


def test_entry_point_exit_status():
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "match", "chess", "a", "b"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "arena: error: unknown game 'chess' "
        "(valid games: papagra, wrigglers, stripes, quadraphages, hexaphage)"
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_match_leaves_no_bot_behind(sig):
    slow = f"{sys.executable} {TESTBOT} slow"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "match", "stripes", slow, str(BOTS / "random-py"), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        # a shell without job control starts background jobs with SIGINT ignored: undo that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 20
    # the bot itself, not the arena command line that names it
    while not any("testbot.py slow" in cmd and " arena " not in cmd for _, cmd in bot_processes()):
        assert time.monotonic() < deadline, "the slow bot never started"
        time.sleep(0.02)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 130, out
    assert b"arena: interrupted" in out
    # the autouse fixture checks that both bots are gone


@pytest.mark.parametrize("game", ["papagra"])
def test_check_handles_multi_action_games(capsys, game):
    code, out, _ = run(capsys, "check", str(BOTS / "random-py"), "--game", game, "--turns", "5")
    assert code == 0, out


def test_check_prints_a_crash_stderr_once(capsys):
    bad = f"{sys.executable} {TESTBOT} crash"
    code, out, _ = run(capsys, "check", bad, "--game", "stripes", "--turns", "6")
    assert code == 1
    assert "FAIL stripes as red: crashed: in turn 1: stdout closed: exited with status 3" in out
    assert out.count("Traceback: boom") == 2, out  # once per game (red, blue), not twice each
    assert "     stderr: Traceback: boom" in out
    assert "last stderr lines" not in out


def test_check_shows_the_line_naming_a_node_error(capsys, tmp_path):
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    bot = f"node {TESTBOT.parent / 'missing_module.js'}"
    code, out, _ = run(capsys, "check", bot, "--game", "stripes")
    assert code == 1
    assert "     stderr: Error: Cannot find module 'msgpack-lite'" in out
    assert out.count("Cannot find module") == 1, out
    assert "the handshake failed" in out
