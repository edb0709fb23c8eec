"""check_startable: a bot that cannot start is found before any game (missing program, not
executable, failed build, docker without an image or with an image that is not there)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from arena.referee import load_bot
from arena.referee.bots import BuildError
from arena.referee.preflight import BotCannotStart, check_startable
from arena.sandbox.docker import docker_available

from .conftest import BOTS


def manifest(tmp_path: Path, text: str) -> Path:
    (tmp_path / "bot.toml").write_text('name = "b"\n' + text)
    return tmp_path


def test_bundled_bots_are_startable():
    for name in ("random-py", "random-c", "random-js"):
        check_startable(load_bot(BOTS / name))


def test_a_missing_program_is_found(tmp_path):
    bot = load_bot(manifest(tmp_path, 'command = ["./missing"]\n'))
    with pytest.raises(BotCannotStart, match=r"bot b: cannot start \./missing: no such file"):
        check_startable(bot)


def test_a_program_that_is_not_executable_is_found(tmp_path):
    (tmp_path / "prog").write_text("#!/bin/sh\n")
    bot = load_bot(manifest(tmp_path, 'command = ["./prog"]\n'))
    with pytest.raises(BotCannotStart, match="not executable"):
        check_startable(bot)
    os.chmod(tmp_path / "prog", 0o755)
    check_startable(bot)


def test_a_program_not_on_path_is_found(tmp_path):
    bot = load_bot(manifest(tmp_path, 'command = ["no-such-interpreter-anywhere", "x"]\n'))
    with pytest.raises(BotCannotStart, match="not found in PATH"):
        check_startable(bot)


def test_a_failing_build_is_found(tmp_path):
    bot = load_bot(manifest(tmp_path, 'command = ["./out"]\nbuild = ["sh", "-c", "exit 3"]\n'))
    with pytest.raises(BuildError, match="failed with status 3"):
        check_startable(bot)


def test_docker_isolation_needs_an_image():
    bot = load_bot(f"{sys.executable} {BOTS / 'random-py' / 'bot.py'}")
    with pytest.raises(BotCannotStart, match="docker mode needs an image"):
        check_startable(bot, isolation="docker")


@pytest.mark.docker
@pytest.mark.skipif(docker_available() is not None, reason=f"no docker: {docker_available()}")
def test_a_docker_image_that_is_not_there_is_found(tmp_path):
    bot = load_bot(
        manifest(
            tmp_path,
            'command = ["./x"]\nisolation = "docker"\nimage = "arena-test/never-built:0"\n',
        )
    )
    with pytest.raises(BotCannotStart, match="no docker image 'arena-test/never-built:0'"):
        check_startable(bot)
