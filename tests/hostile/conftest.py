"""Fixtures for the hostile catalogue: the static hostile binary, its FROM scratch image, and
process accounting by a token every hostile process carries in its argv."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.referee import BotSpec
from arena.sandbox import Limits

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "bots" / "hostile.c"
IMAGE = "arena-test/hostile:latest"
DOCKERFILE = 'FROM scratch\nCOPY hostile /hostile\nUSER 65534:65534\nCMD ["/hostile", "good"]\n'


@pytest.fixture(scope="session")
def hostile_dir() -> Iterator[Path]:
    """A world-readable directory holding the static hostile binary (so that the sandbox's
    unprivileged uid can run it) and a Dockerfile for the image."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc): cannot build the hostile bots")
    d = Path(tempfile.mkdtemp(prefix="arena-hostile-"))
    d.chmod(0o755)
    try:
        r = subprocess.run(
            ["cc", "-static", "-O2", "-o", str(d / "hostile"), str(SOURCE)],
            capture_output=True,
            text=True,
            check=False,
        )
        if r.returncode != 0:
            pytest.skip(f"cannot build a static hostile bot (libc6-dev?): {r.stderr[-300:]}")
        (d / "Dockerfile").write_text(DOCKERFILE)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def hostile_image(hostile_dir: Path) -> str:
    """The hostile binary as a FROM scratch image (docker tests skip without an engine)."""
    from arena.sandbox.docker import docker_available

    reason = docker_available()
    if reason is not None:
        pytest.skip(reason)
    import docker

    client = docker.from_env()
    try:
        client.images.build(path=str(hostile_dir), tag=IMAGE, rm=True, forcerm=True)
    finally:
        client.close()
    return IMAGE


@pytest.fixture
def token() -> str:
    """A unique word in every hostile process's argv (children inherit it)."""
    return f"arena-hostile-{secrets.token_hex(6)}"


def hostile_bot(
    mode: str,
    isolation: str,
    token: str,
    directory: Path,
    arg: str = "",
    limits: Limits | None = None,
) -> BotSpec:
    program = str(directory / "hostile") if isolation == "process" else "/hostile"
    command = (program, mode, token, *([arg] if arg else []))
    return BotSpec(
        name=f"hostile-{mode}",
        command=command,
        workdir=directory,
        encoding="json",
        isolation=isolation,
        image=IMAGE,
        limits=limits or Limits(memory_mb=64, processes=32),
        manifest=directory / "bot.toml",
    )


def processes_with(token: str) -> list[tuple[int, str]]:
    """Live (non-zombie) processes whose command line contains `token`."""
    found = []
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry.name}/stat") as f:
                state = f.read().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if token in cmdline and state != "Z":
            found.append((int(entry.name), cmdline))
    return found


def wait_gone(token: str, seconds: float = 5.0) -> list[tuple[int, str]]:
    """Processes still carrying `token` after up to `seconds` (run in a worker thread)."""
    deadline = time.monotonic() + seconds
    while True:
        left = processes_with(token)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def rss_kib() -> int:
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
