"""The hostile catalogue, played for real through the referee in both isolation modes.

For every hostile bot: the game ends within the time control plus a bounded grace, the hostile
bot loses with the expected reason code, its opponent (a well-behaved build of the same binary)
wins without any failure of its own, no process of either bot is left, and the referee's
memory stays bounded.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest
import trio

from arena.referee import MatchConfig, TimeControl, play_match
from arena.sandbox.process import capabilities

from .conftest import hostile_bot, rss_kib, wait_gone

STARTUP = 5.0
MOVE_TIME = 0.3
#: kill, reap and cleanup time allowed on top of the time control (loaded 2-core machine)
GRACE = 8.0

# mode -> (allowed reasons in process mode, allowed reasons in docker mode)
CATALOGUE: dict[str, tuple[set[str], set[str]]] = {
    "busy": ({"time_forfeit"}, {"time_forfeit"}),
    "busy_start": ({"failed_start"}, {"failed_start"}),
    "sleep": ({"time_forfeit"}, {"time_forfeit"}),
    "hang_after_one": ({"time_forfeit"}, {"time_forfeit"}),
    "exit_now": ({"failed_start"}, {"failed_start"}),
    "signal": ({"crash"}, {"crash"}),
    # docker's attach stream cannot tell a closed stdout from a silent one
    "close_stdout": ({"crash"}, {"crash", "time_forfeit"}),
    "garbage": ({"protocol_error"}, {"protocol_error"}),
    "oversize": ({"protocol_error"}, {"protocol_error"}),
    "flood_stdout": ({"time_forfeit"}, {"time_forfeit"}),
    "flood_raw": ({"protocol_error"}, {"protocol_error"}),
    "flood_stderr": ({"time_forfeit"}, {"time_forfeit"}),
    # 32 processes of kernel memory may also hit the 64 MiB limit first
    "fork_bomb": ({"time_forfeit", "memory_limit"}, {"time_forfeit", "memory_limit"}),
    "memory_hog": ({"memory_limit"}, {"memory_limit"}),
    "network": ({"crash"}, {"crash"}),
    "write_outside": ({"crash"}, {"crash"}),
    "sigstop_parent": ({"crash"}, {"crash"}),
    "fake_stderr": ({"time_forfeit"}, {"time_forfeit"}),
    "orphan": ({"crash"}, {"crash"}),
    "kill_opponent": ({"crash"}, {"crash"}),
}

ISOLATIONS = [
    pytest.param("process", id="process"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]


@pytest.mark.parametrize("isolation", ISOLATIONS)
@pytest.mark.parametrize("mode", sorted(CATALOGUE))
async def test_hostile_bot_loses_cleanly(mode, isolation, request, hostile_dir, token):
    if isolation == "docker":
        request.getfixturevalue("hostile_image")
    caps = capabilities()
    needs_uid = ("sigstop_parent", "write_outside", "kill_opponent")
    if isolation == "process" and mode in needs_uid and not caps.uids:
        pytest.skip("process mode contains this only with an unprivileged uid (arena as root)")
    if isolation == "process" and mode == "memory_hog" and caps.cgroups.memory is None:
        CATALOGUE[mode][0].add("crash")  # no memory cgroup: rlimit, the bot dies of ENOMEM
    hostile_seat = sorted(CATALOGUE).index(mode) % 2  # cover both seats

    arg = ""
    connections: list[object] = []
    victim_dir = None
    async with trio.open_nursery() as nursery:
        if mode == "network":
            # loopback only: the tests never send traffic off this machine. A bot in its own
            # empty network namespace (process) or with network "none" (docker, asserted in
            # tests/sandbox/test_docker.py) has no route to the host's listener.
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
            port = listeners[0].socket.getsockname()[1]
            arg = f"127.0.0.1:{port}"

            async def accept() -> None:
                async with listeners[0]:
                    while True:
                        conn = await listeners[0].accept()
                        connections.append(conn)

            nursery.start_soon(accept)
        if mode == "write_outside":
            # the arena's own files: a root-owned, world-readable directory; world-writable
            # too (like /tmp) where a read-only mount namespace must protect it by itself
            victim_dir = Path(tempfile.mkdtemp(prefix="arena-victim-"))
            victim_dir.chmod(0o1777 if caps.mountns else 0o755)
            arg = str(victim_dir / "pwned")

        # a bot that never answers costs the whole startup time: keep that one short
        startup = STARTUP if mode != "busy_start" else (1.5 if isolation == "process" else 3.0)
        hostile = hostile_bot(mode, isolation, token, hostile_dir, arg)
        good = hostile_bot("good", isolation, token, hostile_dir)
        bots = (hostile, good) if hostile_seat == 0 else (good, hostile)
        config = MatchConfig(
            game="wrigglers",
            options={},
            bots=bots,
            time_control=TimeControl(startup=startup, move_time=MOVE_TIME),
            seed=7,
            match_id=f"hostile-{mode}-{isolation}",
        )
        rss_before = rss_kib()
        t0 = time.monotonic()
        record = await play_match(config)
        elapsed = time.monotonic() - t0
        rss_after = rss_kib()
        nursery.cancel_scope.cancel()

    result = record.result
    allowed = CATALOGUE[mode][0 if isolation == "process" else 1]
    assert result["loser_seat"] == hostile_seat, result
    assert result["winner"] == 1 - hostile_seat, result
    assert result["reason"] in allowed, result
    assert result["failure"]["seat"] == hostile_seat
    assert elapsed < STARTUP + 2 * MOVE_TIME + GRACE, elapsed
    # nothing of either bot survives the game
    left = await trio.to_thread.run_sync(wait_gone, token, 3.0)
    assert not left, left
    # the referee's memory stays bounded whatever the bot floods
    assert rss_after - rss_before < 64 * 1024, (rss_before, rss_after)
    assert all(len(tail.encode()) <= hostile.limits.stderr_bytes + 8 for tail in record.stderr)
    if mode == "network":
        assert connections == [], "the bot reached the network"
    if mode == "write_outside":
        assert victim_dir is not None
        assert not (victim_dir / "pwned").exists(), "the bot wrote outside its directory"
        victim_dir.rmdir()
    if mode == "kill_opponent":
        assert "killed 0" in record.stderr[hostile_seat], record.stderr
        if isolation == "process":  # it saw its opponent and could not touch it
            assert "found 0" not in record.stderr[hostile_seat], record.stderr
    if mode == "fake_stderr":
        assert result["reason"] == "time_forfeit"
