"""The process launcher against real child processes."""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
import time

import pytest
import trio

from arena.sandbox import LaunchError, LaunchSpec, Limits, launcher_for


def py(code: str) -> tuple[str, ...]:
    return (sys.executable, "-c", code)


async def read_all(stream: trio.abc.ReceiveStream) -> bytes:
    out = bytearray()
    while chunk := await stream.receive_some(65536):
        out += chunk
    return bytes(out)


async def test_echo_roundtrip_and_exit_status():
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("process").start(LaunchSpec("cat", ("cat",)), nursery)
        async with bot:
            await bot.stdin.send_all(b"hello\n")
            assert await bot.stdout.receive_some(100) == b"hello\n"
            await bot.stdin.aclose()
            info = await bot.wait()
            assert info.returncode == 0 and info.signal is None
            assert not info.killed_by_arena
            assert bot.exit_info() == info


async def test_environment_is_scrubbed_and_workdir_is_private(monkeypatch):
    monkeypatch.setenv("ARENA_SECRET", "hunter2")
    spec = LaunchSpec(
        "env",
        py("import os, json; print(json.dumps([dict(os.environ), os.getcwd()]))"),
        env={"EXTRA": "1"},
    )
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("process").start(spec, nursery)
        async with bot:
            out = await read_all(bot.stdout)
            await bot.wait()
    env, cwd = json.loads(out)
    assert "ARENA_SECRET" not in env
    assert env["EXTRA"] == "1"
    assert env["LANG"] == "C.UTF-8"
    assert env["HOME"] == cwd
    assert not await trio.Path(cwd).exists(), "fresh workdir removed"


async def test_stderr_tail_is_bounded():
    code = "import sys\nfor i in range(20000): sys.stderr.write(f'line {i}\\n')\n"
    spec = LaunchSpec("noisy", py(code), limits=Limits(stderr_bytes=1000))
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("process").start(spec, nursery)
        async with bot:
            await bot.wait()
        # aclose waits (bounded) for stderr to be drained, so the tail is complete now
        tail = bot.stderr_tail()
    assert len(tail.encode()) <= 1000
    assert tail.endswith("line 19999\n")


async def test_kill_ends_the_whole_group_and_reports_it():
    # the child leaves the process group (setsid) and must still be killed
    script = "setsid sleep 60 & echo $!; sleep 60"
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("process").start(
            LaunchSpec("sleeper", ("sh", "-c", script)), nursery
        )
        async with bot:
            line = await bot.stdout.receive_some(100)
            assert line.endswith(b"\n"), bot.stderr_tail()
            child = int(line)
            await bot.kill()
            info = await bot.wait()
            assert info.killed_by_arena
            assert info.signal is not None
    assert await trio.to_thread.run_sync(gone_within, child, 5.0)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def gone_within(pid: int, seconds: float) -> bool:
    """Poll /proc (in a worker thread): a killed process vanishes once its reaper runs."""
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


async def test_missing_executable_is_a_launch_error():
    async with trio.open_nursery() as nursery:
        with pytest.raises(LaunchError):
            await launcher_for("process").start(LaunchSpec("ghost", ("/nonexistent/bot",)), nursery)


async def test_aclose_is_idempotent():
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("process").start(LaunchSpec("sleep", ("sleep", "60")), nursery)
        await bot.aclose()
        await bot.aclose()
        info = bot.exit_info()
        assert info is not None and info.killed_by_arena


def _ppid_and_uid() -> LaunchSpec:
    return LaunchSpec("ids", ("sh", "-c", "echo $PPID $(id -u); exec cat"))


async def _ids(bot) -> list[int]:
    line = b""
    with trio.fail_after(10):
        while not line.endswith(b"\n"):
            chunk = await bot.stdout.receive_some(100)
            assert chunk, bot.stderr_tail()
            line += chunk
    return [int(x) for x in line.split()]


def serving(spawner) -> bool:
    """Wait (on its socket, up to 30 s) for a spawner to say it serves."""
    if not spawner.serving():
        select.select([spawner.sock], [], [], 30)
    return spawner.serving()


def no_fork(*args, **kwargs):
    raise AssertionError("the arena forked the bot itself")


async def test_the_spawner_forks_bots_as_the_arenas_own_children(monkeypatch):
    """The bot spawner (arena/sandbox/zygote.py) forks the bots, yet each is this process's
    child (CLONE_PARENT): waited for, reaped and signalled like one of its own forks."""
    from arena.sandbox import spawner as forks
    from arena.sandbox import zygote

    if zygote.clone_number() is None:
        pytest.skip("no bot spawner on this machine (architecture)")
    spawner = forks._spawner_of(os.getpid(), threading.get_ident())
    assert spawner is not None and serving(spawner)
    monkeypatch.setattr(forks, "_fork", no_fork)
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("process").start(_ppid_and_uid(), nursery)
        async with bot:
            ppid, _uid = await _ids(bot)
            assert ppid == os.getpid() != spawner.proc.pid
            await bot.stdin.aclose()
            assert (await bot.wait()).returncode == 0


async def _capability_sets(nursery) -> dict[str, int]:
    spec = LaunchSpec("caps", ("sh", "-c", "grep ^Cap /proc/self/status"))
    bot = await launcher_for("process").start(spec, nursery)
    async with bot:
        out = await read_all(bot.stdout)
        assert (await bot.wait()).returncode == 0, bot.stderr_tail()
    return {k: int(v, 16) for k, v in (line.split(":") for line in out.decode().splitlines())}


@pytest.mark.parametrize("forker", ["spawner", "arena"])
async def test_bots_have_no_capabilities_whoever_forks_them(forker, monkeypatch):
    """The spawner empties its bounding set once, at its first bot, instead of each child
    doing it: a bot it forks has an empty bounding set all the same, as one the arena forks
    itself (and no capability in any other set, the second bot of a spawner too)."""
    from arena.sandbox import process, zygote
    from arena.sandbox import spawner as forks

    if forker == "spawner":
        if zygote.clone_number() is None:
            pytest.skip("no bot spawner on this machine (architecture)")
        spawner = forks._spawner_of(os.getpid(), threading.get_ident())
        assert spawner is not None and serving(spawner)
        monkeypatch.setattr(forks, "_fork", no_fork)
    else:
        monkeypatch.setattr(forks, "_spawner", lambda: None)
    async with trio.open_nursery() as nursery:
        for _ in range(2):
            sets = await _capability_sets(nursery)
            assert {k: sets[k] for k in ("CapInh", "CapPrm", "CapEff", "CapAmb")} == dict.fromkeys(
                ("CapInh", "CapPrm", "CapEff", "CapAmb"), 0
            )
            if process.capabilities().uids:  # root: the bounding set too
                assert sets["CapBnd"] == 0


async def test_bots_outlive_a_dead_spawner_and_later_ones_are_forked_here(monkeypatch):
    """A spawner that dies costs nothing: its bots are the arena's children and play on,
    and the next bots are forked by the arena itself, as contained as before."""
    from arena.sandbox import spawner as forks
    from arena.sandbox import zygote

    if zygote.clone_number() is None:
        pytest.skip("no bot spawner on this machine (architecture)")
    spawner = forks._Spawner()  # a spawner of this test's own (the shared one stays)
    monkeypatch.setattr(forks, "_spawner", lambda: spawner if spawner.serving() else None)
    try:
        assert serving(spawner)
        async with trio.open_nursery() as nursery:
            with monkeypatch.context() as m:
                m.setattr(forks, "_fork", no_fork)
                first = await launcher_for("process").start(_ppid_and_uid(), nursery)
            async with first:
                before = await _ids(first)
                spawner.proc.kill()
                spawner.proc.wait()
                second = await launcher_for("process").start(_ppid_and_uid(), nursery)
                async with second:
                    after = await _ids(second)
                    assert spawner.broken  # the dead spawner was noticed and is not used again
                    assert before[0] == after[0] == os.getpid()
                    assert before[1] == after[1] or before[1] * after[1] != 0  # same containment
                    for bot in (first, second):
                        await bot.stdin.send_all(b"still here\n")
                        assert await bot.stdout.receive_some(100) == b"still here\n"
                        await bot.stdin.aclose()
                        assert (await bot.wait()).returncode == 0
    finally:
        spawner.close()


async def test_bots_are_forked_here_until_the_spawner_serves(monkeypatch):
    """The spawner starts in the background: a bot started before it says it is ready is
    forked by the arena itself (a single game never waits for the spawner's start)."""
    from arena.sandbox import spawner as forks

    spawner = forks._Spawner.__new__(forks._Spawner)  # one that has not said it is ready
    spawner.broken, spawner.ready = False, False
    spawner.sock, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    spawner.sock.setblocking(False)
    monkeypatch.setattr(forks, "_spawner_of", lambda pid, thread: spawner)
    try:
        assert forks._spawner() is None
        async with trio.open_nursery() as nursery:
            bot = await launcher_for("process").start(_ppid_and_uid(), nursery)
            async with bot:
                assert (await _ids(bot))[0] == os.getpid()
        other.send(b"ready")
        assert forks._spawner() is spawner
    finally:
        spawner.sock.close()
        other.close()


async def test_a_bots_sleeps_end_on_time():
    """The bot's timer slack is the least there is (1 ns, not the 50 us every process
    inherits): a bot that sleeps is woken when its sleep ends, and what delays it beyond that
    is run-queue wait, which the fair clocks count as the host's (docs/security.md)."""
    code = "import ctypes; print(ctypes.CDLL(None).prctl(30, 0, 0, 0, 0))"  # PR_GET_TIMERSLACK
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("process").start(LaunchSpec("slack", py(code)), nursery)
        async with bot:
            out = await read_all(bot.stdout)
            await bot.wait()
    assert out.split() == [b"1"]
