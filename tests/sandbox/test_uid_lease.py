"""The uid lease's mark: a uid released clean is handed out again without a /proc scan; a uid
whose holder did not prove it clean (crash, leftovers) is scanned, and skipped while any
process of it lives. Real lock files, real processes running as the uid."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from arena.sandbox import LaunchSpec, SandboxFault
from arena.sandbox.hostres import UidLease
from arena.sandbox.process import ProcessLauncher, capabilities

CAPS = capabilities()
pytestmark = pytest.mark.skipif(not CAPS.uids, reason="needs root (unique uids)")


@pytest.fixture
def uid() -> Iterator[int]:
    """A uid of its own, outside the arena's default range, and its lock file removed after."""
    uid = 93000 + secrets.randbelow(5000)
    yield uid
    for base in (Path("/run"), Path("/tmp")):
        (base / "arena-sandbox-uids" / f"{uid}.lock").unlink(missing_ok=True)


def lock_text(uid: int) -> bytes:
    run = Path("/run")
    base = run if os.access(run, os.W_OK) else Path("/tmp")
    return (base / "arena-sandbox-uids" / f"{uid}.lock").read_bytes()


def sleeper_as(uid: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"], user=uid, group=uid, cwd="/")


def test_marks_follow_the_lease(uid):
    lease = UidLease.acquire(uid, 1)
    assert lease.uid == uid
    assert lock_text(uid) == UidLease.BUSY
    lease.release(clean=True)
    assert lock_text(uid) == UidLease.CLEAN
    lease = UidLease.acquire(uid, 1)
    assert lock_text(uid) == UidLease.BUSY
    lease.release()  # not proven clean
    assert lock_text(uid) == UidLease.BUSY


def test_a_uid_not_released_clean_is_scanned_and_skipped_while_its_processes_live(uid):
    UidLease.acquire(uid, 1).release()  # as an arena that crashed holding it leaves it
    leftover = sleeper_as(uid)
    try:
        with pytest.raises(SandboxFault, match="in use"):
            UidLease.acquire(uid, 1)
    finally:
        leftover.kill()
        leftover.wait()
    lease = UidLease.acquire(uid, 1)  # the leftover is gone: usable again
    assert lease.uid == uid
    lease.release(clean=True)


def test_a_uid_held_by_someone_else_is_not_handed_out(uid):
    held = UidLease.acquire(uid, 1)
    try:
        with pytest.raises(SandboxFault, match="in use"):
            UidLease.acquire(uid, 1)
    finally:
        held.release(clean=True)


def test_a_bot_that_ran_releases_its_uid_clean(uid, tmp_path):
    """The launcher's cleanup proves the tree gone (cgroup removed or scan): the mark says
    so, and the next bot on that uid starts without a scan."""

    async def main() -> None:
        spec = LaunchSpec("sleeper", (sys.executable, "-c", "import sys; sys.stdin.read()"))
        async with trio.open_nursery() as nursery:
            bot = await ProcessLauncher(uid_base=uid, uid_count=1).start(spec, nursery)
            assert bot.uid == uid  # type: ignore[attr-defined]
            assert lock_text(uid) == UidLease.BUSY
            await bot.aclose()
        assert lock_text(uid) == UidLease.CLEAN

    trio.run(main)


def test_the_lock_directory_is_made_again_if_it_went(uid: int, tmp_path: Path, monkeypatch):
    """The lock directory is made and checked once per process; removed meanwhile, it is
    made (and checked) again at the next lease instead of failing the start."""
    import functools

    from arena.sandbox import hostres

    lockdir = tmp_path / "uids"
    made: list[str] = []

    @functools.cache
    def fake_dir() -> str:
        lockdir.mkdir(mode=0o700, exist_ok=True)
        made.append(str(lockdir))
        return str(lockdir)

    monkeypatch.setattr(hostres, "_checked_lock_dir", fake_dir)
    UidLease.acquire(uid, 1).release(clean=True)
    UidLease.acquire(uid, 1).release(clean=True)
    assert len(made) == 1 and (lockdir / f"{uid}.lock").read_bytes() == UidLease.CLEAN
    for f in lockdir.iterdir():
        f.unlink()
    lockdir.rmdir()
    lease = UidLease.acquire(uid, 1)
    assert len(made) == 2 and (lockdir / f"{uid}.lock").read_bytes() == UidLease.BUSY
    lease.release(clean=True)
