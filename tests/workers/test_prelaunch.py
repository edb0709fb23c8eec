"""When `arena tournament run` may fork its worker processes (arena/workers/prelaunch.py).

A fork copies only the calling thread: forking while trio runs (its threads, its wakeup fd,
its signal handlers) or while any other thread lives could leave the worker with a lock held
forever. `can_fork` says no then, and the workers are started as new interpreters instead.
Each case runs in a fresh interpreter, so nothing of the test runner's (its threads) counts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import threading, trio
from arena.workers.prelaunch import can_fork

print("plain", can_fork())

async def inside():
    print("inside trio.run", can_fork())

trio.run(inside)
print("after trio.run", can_fork())
stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
print("with a thread", can_fork())
stop.set()
t.join()
print("thread gone", can_fork())
"""


def test_fork_only_before_trio_runs_and_with_one_thread() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert out == [
        "plain True",
        "inside trio.run False",
        "after trio.run True",
        "with a thread False",
        "thread gone True",
    ]
