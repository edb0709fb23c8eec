"""Sandboxed builds (arena.referee.build): a build gets its own directory to write and nothing
else: no network, nothing outside, a time limit; a real C build works."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.referee.bots import BuildError, load_bot
from arena.referee.build import build_bot
from arena.sandbox.process import capabilities

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory every uid can reach (pytest's own are 0700 under root), as a league's
    unpacked bots are, so the build runs under a uid of its own where the machine allows."""
    top = Path(tempfile.mkdtemp(prefix="arena-build-test-"))
    top.chmod(0o755)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def bot_dir(top: Path, build: list[str]) -> Path:
    d = top / "bot"
    d.mkdir()
    (d / "bot.toml").write_text(f'name = "b"\ncommand = ["./out"]\nbuild = {json.dumps(build)}\n')
    return d


def confined() -> None:
    caps = capabilities()
    if not (caps.netns and caps.mountns):
        pytest.skip(f"no network/mount namespace here: {caps.describe()}")


async def test_c_bot_builds_in_the_sandbox(open_dir: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    shutil.copytree(ROOT / "bots" / "random-c", open_dir / "random-c")
    (open_dir / "random-c" / "random_bot").unlink(missing_ok=True)
    bot = load_bot(open_dir / "random-c")
    out = await build_bot(bot)
    assert out is not None and out.command[0] == "cc"
    binary = open_dir / "random-c" / "random_bot"
    assert binary.stat().st_mode & stat.S_IXUSR
    assert binary.stat().st_uid == os.geteuid()  # taken back from the build's uid
    assert not bot.needs_build()
    assert await build_bot(bot) is None  # up to date: nothing to do


async def test_build_runs_as_its_own_uid_and_writes_its_directory(open_dir: Path) -> None:
    confined()
    d = bot_dir(open_dir, ["sh", "-c", "id -u > out; chmod 4755 out"])
    await build_bot(load_bot(d), force=True)
    written = d / "out"
    if capabilities().uids:
        assert int(written.read_text()) != os.geteuid()
    assert written.stat().st_uid == os.geteuid()
    assert not written.stat().st_mode & (stat.S_ISUID | stat.S_ISGID)


async def test_build_output_is_given_back_readable(open_dir: Path) -> None:
    """A build that hides its output (chmod 700) cannot make its bot run as the arena's uid:
    the directory comes back with normal modes."""
    d = bot_dir(
        open_dir,
        ["sh", "-c", "mkdir -p sub && echo x > sub/out && chmod 700 sub . && chmod 4700 sub/out"],
    )
    await build_bot(load_bot(d), force=True)
    assert stat.S_IMODE(d.stat().st_mode) == 0o755
    assert stat.S_IMODE((d / "sub").stat().st_mode) == 0o755
    assert stat.S_IMODE((d / "sub" / "out").stat().st_mode) == 0o755


async def test_build_leaving_a_link_outside_fails(open_dir: Path) -> None:
    d = bot_dir(open_dir, ["sh", "-c", "ln -s /etc/passwd out"])
    with pytest.raises(BuildError, match=r"left a symbolic link leading outside .*: out"):
        await build_bot(load_bot(d), force=True)


async def test_build_cannot_reach_the_network(open_dir: Path) -> None:
    """A listener on the machine's loopback that the test itself can reach: the build cannot."""
    confined()
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        script = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
        d = bot_dir(open_dir, ["python3", "-c", script])
        with pytest.raises(BuildError) as err:
            await build_bot(load_bot(d), force=True)
    assert "failed: exited with status 1" in str(err.value)
    assert "Network is unreachable" in str(err.value) or "Connection refused" in str(err.value)


async def test_build_cannot_write_outside_its_directory(open_dir: Path) -> None:
    confined()
    target = open_dir / "escaped"
    d = bot_dir(open_dir, ["sh", "-c", f"echo built > out && echo x > {target}"])
    with pytest.raises(BuildError) as err:
        await build_bot(load_bot(d), force=True)
    assert "Read-only file system" in str(err.value)
    assert not target.exists()
    assert (d / "out").read_text() == "built\n"


async def test_looping_build_is_killed_at_the_time_limit(open_dir: Path) -> None:
    d = bot_dir(open_dir, ["sh", "-c", "sleep 1000 & while :; do :; done"])
    started = time.monotonic()
    with pytest.raises(BuildError, match=r"timed out after 2 s"):
        await build_bot(load_bot(d), time_limit=2, force=True)
    assert time.monotonic() - started < 30
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _cmd(p) == b"sleep\x001000\x00"]


async def test_build_output_is_capped(open_dir: Path) -> None:
    d = bot_dir(open_dir, ["sh", "-c", "yes flood | head -c 5000000 >&2; exit 3"])
    with pytest.raises(BuildError) as err:
        await build_bot(load_bot(d), force=True, output_bytes=1000)
    message = str(err.value)
    assert "failed: exited with status 3" in message and "flood" in message
    assert len(message) < 1500


async def test_missing_build_command(open_dir: Path) -> None:
    d = bot_dir(open_dir, ["no-such-compiler", "x.c"])
    with pytest.raises(BuildError, match="cannot start"):
        await build_bot(load_bot(d), force=True)


def _cmd(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
