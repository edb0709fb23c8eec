"""A referee killed outright (SIGKILL: no cleanup code runs) must not leave its bots running:
the kernel kills them through their parent-death signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.sandbox.hostres import scratch_base, sweep_stale_scratch

from .conftest import processes_with, wait_gone


def bots_running(token: str, referee: int, count: int, seconds: float) -> list[int]:
    """Poll /proc until `count` processes other than the referee carry `token`."""
    deadline = time.monotonic() + seconds
    while True:
        found = [pid for pid, _ in processes_with(token) if pid != referee]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def test_sigkilled_referee_leaves_no_bot(hostile_dir: Path, token: str) -> None:
    hostile = hostile_dir / "hostile"
    # a bot that waits forever on its turn, and its opponent waiting for its own turn
    sleeper, good = f"json:{hostile} sleep {token}", f"json:{hostile} good {token}"
    argv = [sys.executable, "-m", "arena", "match", "wrigglers", sleeper, good]
    referee = subprocess.Popen(
        [*argv, "--move-time", "60", "--startup", "30", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        bots = bots_running(token, referee.pid, 2, 30.0)
        assert len(bots) == 2, (bots, referee.poll())
        os.kill(referee.pid, signal.SIGKILL)
        referee.wait()
        left = wait_gone(token, 5.0)
        assert left == [], left
        # its bots' temporary directories are the next arena's to remove (on a tmpfs of the
        # arena's own where the bots have a mount namespace, else in the temporary directory)
        places = dict.fromkeys([scratch_base(True), Path(tempfile.gettempdir())])

        def left_behind() -> list[Path]:
            return [p for d in places for p in d.glob(f"arena-bot-{referee.pid}-*")]

        assert left_behind()
        for place in places:
            sweep_stale_scratch(place)
        assert not left_behind()
    finally:
        if referee.poll() is None:
            referee.kill()
            referee.wait()
        assert referee.stderr is not None
        referee.stderr.close()
