"""`arena league submit --wait` when it stops following a candidate test before the verdict,
with a real server and the real client process: `--verdict-timeout` reached (one line saying the
test goes on, exit 2) and Ctrl-C (SIGINT to the process: one line, no traceback, exit 130); in
both cases the test goes on on the server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .support import ROOT, Server, add_user, make_league
from .test_candidates_e2e import bot_add, named_copy, verdict

pytestmark = pytest.mark.slow
ARENA = (sys.executable, "-m", "arena")


def _submit(server: Server, bot: Path, token: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*ARENA, "league", "submit", server.url, str(bot), "--token", token, "--wait", *extra],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _games(server: Server, bot: str, number: int) -> int:
    v = verdict(server, bot, number)
    return v["games"] if v else 0


def test_verdict_timeout_and_ctrl_c_stop_following_not_the_test(tmp_path: Path) -> None:
    # two random bots and bounds far apart for them: the tests run on for hundreds of games
    directory = make_league(
        tmp_path / "league", games='["stripes"]', elo0="-5", elo1="5", max_pairs="250"
    )
    token = add_user(directory, "ann")
    bot_add(directory, named_copy("random-py", "mine", tmp_path), "ann")
    bot_add(directory, named_copy("random-py", "other", tmp_path), "ann")
    with Server(directory) as server:
        # --verdict-timeout reached: one line, exit 2, the test goes on
        proc = _submit(
            server,
            named_copy("random-py", "mine", tmp_path / "v2"),
            token,
            "--verdict-timeout",
            "1",
        )
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 2, (out, err, server.log()[-2000:])
        assert "verdict: stripes v2 vs v1: testing; LLR " in out
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("arena: error: still testing after 1 s; the test goes on: GET ")
        assert lines[0].endswith("/api/v1/bots/mine/versions/2")
        before = _games(server, "mine", 2)
        server.wait_for(
            lambda: _games(server, "mine", 2) > before + 1, what="the test to go on after"
        )
        assert verdict(server, "mine", 2)["state"] == "testing"

        # Ctrl-C while following: one line, exit 130, no traceback, the test goes on
        proc = _submit(server, named_copy("random-py", "mine", tmp_path / "v3"), token)
        assert proc.stdout is not None
        while True:  # read until it follows the verdict (the pipe's end bounds the loop)
            line = proc.stdout.readline()
            assert line, (proc.wait(timeout=60), proc.stderr.read() if proc.stderr else "")
            if line.startswith("verdict: stripes v3 vs v2: testing"):
                break
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, (rest, err)
        assert "Traceback" not in err
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("arena: stopped following; the test goes on: GET ")
        assert lines[0].endswith("/api/v1/bots/mine/versions/3")
        before = _games(server, "mine", 3)
        server.wait_for(
            lambda: _games(server, "mine", 3) > before + 1, what="the test to go on after Ctrl-C"
        )
        assert verdict(server, "mine", 3)["state"] == "testing"
