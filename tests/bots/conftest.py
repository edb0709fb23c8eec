"""Fixtures that start the bundled bots (building the C bot once, skipping without cc/node)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .botpipe import BOTS, BotPipe


@pytest.fixture(scope="session")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """random-c built into a temp dir with the manifest's own command."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on PATH: cannot build bots/random-c")
    out = tmp_path_factory.mktemp("random-c")
    shutil.copy(BOTS / "random-c" / "random_bot.c", out)
    subprocess.run(
        ["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", "random_bot", "random_bot.c"],
        cwd=out,
        check=True,
        capture_output=True,
    )
    return out / "random_bot"


@pytest.fixture(scope="session")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.skip("node is not installed: cannot run bots/random-js")
    return path


@pytest.fixture
def start_bot(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Factory: start_bot(bot_id, encoding) -> BotPipe, killed at teardown whatever happens."""
    started: list[BotPipe] = []

    def start(bot_id: str, encoding: str) -> BotPipe:
        if bot_id == "random-py":
            argv, cwd = [sys.executable, "bot.py"], BOTS / "random-py"
        elif bot_id == "strong":
            argv, cwd = [sys.executable, "bot.py"], BOTS / "strong"
        elif bot_id == "random-c":
            exe = request.getfixturevalue("c_bot")
            argv, cwd = [str(exe)], exe.parent
        elif bot_id == "random-js":
            argv, cwd = [request.getfixturevalue("node"), "bot.js"], BOTS / "random-js"
        else:
            raise ValueError(bot_id)
        bot = BotPipe(argv, cwd, encoding)
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.kill()
