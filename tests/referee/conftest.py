"""Referee test fixtures: misbehaving test bots on demand, and a process-leak check after
every test (no bot process, nor anything a bot started, may outlive its game)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from arena.referee import BotSpec, load_bot

HERE = Path(__file__).resolve().parent
TESTBOT = HERE / "bots" / "testbot.py"
ROOT = HERE.parents[1]
BOTS = ROOT / "bots"
#: environment entry that marks the test bots of this test session (and what they spawn):
#: other sessions running the same tests at the same time are not ours to count
SESSION_MARK = f"ARENA_TESTBOT_SESSION={os.getpid()}".encode()


def tbot(
    mode: str = "good",
    arg: str = "",
    *,
    fail_turn: int = 1,
    encoding: str = "msgpack",
) -> BotSpec:
    """A test bot that plays legal random actions until MODE makes it fail (see testbot.py)."""
    command = f"{sys.executable} {TESTBOT} {mode}" + (f" {arg}" if arg else "")
    spec = load_bot(("json:" if encoding == "json" else "") + command)
    env = {
        "TESTBOT_FAIL_TURN": str(fail_turn),
        "TESTBOT_ENCODING": encoding,
        "ARENA_TESTBOT_SESSION": str(os.getpid()),
    }
    return replace(spec, name=f"test-{mode}", env=tuple(sorted(env.items())))


def bundled(name: str) -> BotSpec:
    """A bundled bot by directory name; skips when its language is not installed."""
    if name == "random-c" and shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on PATH: cannot build bots/random-c")
    if name == "random-js" and shutil.which("node") is None:
        pytest.skip("node is not installed: cannot run bots/random-js")
    return load_bot(BOTS / name)


def _proc_table() -> dict[int, tuple[int, str, str, bool]]:
    """pid -> (ppid, state, cmdline, marked) for every live process we can read."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as f:
                    marked = SESSION_MARK in f.read().split(b"\0")
            except OSError:
                marked = False
        except OSError:
            continue
        rest = stat[stat.rindex(")") + 2 :].split()
        table[int(entry.name)] = (int(rest[1]), rest[0], cmd, marked)
    return table


#: the arena's own bot spawner (arena/sandbox/zygote.py): one per arena process, started with
#: its first bot and kept for the process's life, so not a bot that outlived its game
SPAWNER = "arena.sandbox.zygote"


def bot_processes() -> set[tuple[int, str]]:
    """Live (non-zombie) descendants of this test process, and any process carrying this
    session's test bot mark (a grandchild re-parented to init after its parent died); the
    arena's bot spawner aside (its bots are this process's children all the same)."""
    table = _proc_table()
    me = os.getpid()
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = set()
    stack = list(children.get(me, []))
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        _, state, cmd, _ = table[pid]
        if state != "Z" and SPAWNER not in cmd:
            found.add((pid, cmd))
    for pid, (_, state, cmd, marked) in table.items():
        if state != "Z" and marked and pid != me:
            found.add((pid, cmd))
    return found


@pytest.fixture(autouse=True)
def no_leaked_processes() -> Iterator[None]:
    before = bot_processes()
    yield
    # processes killed at the end of the game may take a moment to disappear: poll briefly
    deadline = time.monotonic() + 3.0
    while True:
        left = bot_processes() - before
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not left, f"bot processes outlived the test: {sorted(left)}"
