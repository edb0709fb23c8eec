"""A bot's counters as the referee reads them per request (arena/sandbox/cpuacct.py), against a
real bot in its own cgroup: the lean reads of a one-task bot can only ever measure more CPU time
than it used, never less, and a bot seen with other tasks is read in full from then on."""

from __future__ import annotations

import sys

import pytest
import trio

from arena.sandbox import LaunchSpec, launcher_for

#: answers `ok` to every line; on `fork`, first a helper burns 50 ms of CPU and exits
BOT = """
import os, sys, time
def burn(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass
for line in sys.stdin:
    if line.strip() == "fork":
        pid = os.fork()
        if pid == 0:
            burn(0.05)
            os._exit(0)
        os.waitpid(pid, 0)
    print("ok", flush=True)
"""


async def ask(bot, line: bytes) -> None:
    await bot.stdin.send_all(line)
    got = b""
    while not got.endswith(b"ok\n"):
        got += await bot.stdout.receive_some(100)


async def test_lean_reads_never_count_less_cpu_and_a_helper_ends_them():
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("process").start(
            LaunchSpec("counted", (sys.executable, "-c", BOT)), nursery
        )
        async with bot:
            counters = bot.counters
            if counters is None:
                pytest.skip("no cgroup of the bot's own on this machine")
            await ask(bot, b"nop\n")
            first = counters.snapshot(lean=True)  # a full read: it anchors the lean ones
            assert first is not None and first[4]
            await ask(bot, b"nop\n")
            lean = counters.snapshot(lean=True)
            assert lean is not None and isinstance(lean[0], tuple), "a one-task bot reads lean"
            full = counters.sample()
            assert full is not None
            derived = counters.parse(lean).cpu
            # derived before the full read, so never above it (but for the cgroup counter's
            # whole microseconds); and close for a one-task bot
            assert derived <= full.cpu + 1000 and full.cpu < derived + 20_000_000
            assert counters.lean_ok

            await ask(bot, b"fork\n")  # a helper came and went between two requests
            lean = counters.snapshot(lean=True)
            assert lean is not None and isinstance(lean[0], tuple)
            full = counters.sample()
            assert full is not None
            # its 50 ms are missing from the derived figure: the reply's CPU can only be high
            assert full.cpu - counters.parse(lean).cpu >= 45_000_000
            assert not counters.lean_ok, "the full read saw CPU time beyond the one task"
            again = counters.snapshot(lean=True)
            assert again is not None and isinstance(again[0], bytes), "read in full from now on"
