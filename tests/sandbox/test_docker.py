"""The docker launcher against a real Docker engine (skipped, with the reason, without one)."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from arena.sandbox import LaunchError, LaunchSpec, Limits, launcher_for
from arena.sandbox.docker import LABEL, docker_available

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
RANDOM_C = REPO / "bots" / "random-c"
IMAGE = "arena-bots/random-c"


@pytest.fixture(scope="module")
def client() -> Iterator[object]:
    reason = docker_available()
    if reason is not None:
        pytest.skip(reason)
    import docker

    c = docker.from_env()
    yield c
    c.close()


@pytest.fixture(scope="module")
def random_c_image(client) -> str:
    """bots/random-c/Dockerfile built the documented way: a static binary, FROM scratch."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    with tempfile.TemporaryDirectory() as ctx:
        r = subprocess.run(
            ["cc", "-static", "-O2", "-o", f"{ctx}/random_bot", str(RANDOM_C / "random_bot.c")],
            capture_output=True,
            text=True,
            check=False,
        )
        if r.returncode != 0:
            pytest.skip(f"cannot link a static binary (libc6-dev?): {r.stderr[-300:]}")
        shutil.copy(RANDOM_C / "Dockerfile", ctx)
        client.images.build(path=ctx, tag=IMAGE, rm=True, forcerm=True)
    return IMAGE


def arena_containers(client) -> list[object]:
    """Bot containers of this test process (other arenas may run on the machine meanwhile)."""
    from arena.sandbox.docker import OWNER_LABEL, owner

    return client.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner()}"})


async def read_line(stream: trio.abc.ReceiveStream) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = await stream.receive_some(65536)
        if not chunk:
            break
        data += chunk
    return data


async def test_protocol_over_the_attach_socket(client, random_c_image):
    hello = {
        "type": "hello",
        "protocol": 1,
        "game": "wrigglers",
        "options": {},
        "seat": 0,
        "colour": "dark",
        "opponent": "x",
        "match_id": "t",
        "time_control": {"startup": 10, "base": None, "increment": 0, "move_time": 1, "margin": 0},
        "max_message_bytes": 1 << 20,
        "seed": 1,
    }
    spec = LaunchSpec("random-c", ("/random_bot",), isolation="docker", image=random_c_image)
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("docker").start(spec, nursery)
        async with bot:
            await bot.stdin.send_all(json.dumps(hello).encode() + b"\n")
            with trio.fail_after(20):
                reply = json.loads(await read_line(bot.stdout))
            assert reply["type"] == "ready"
            await bot.stdin.aclose()  # EOF on the bot's stdin: it exits
            with trio.fail_after(20):
                info = await bot.wait()
            assert info.returncode is not None
            assert not info.killed_by_arena
    assert arena_containers(client) == []


async def test_container_is_locked_down_and_removed(client, hostile_like_image):
    """Inspect a running bot container: every restriction of docs/security.md is set."""
    spec = LaunchSpec(
        "sleeper",
        ("/random_bot",),
        isolation="docker",
        image=hostile_like_image,
        limits=Limits(memory_mb=96, processes=20, tmpfs_mb=8),
    )
    async with trio.open_nursery() as nursery:
        bot = await launcher_for("docker").start(spec, nursery)
        async with bot:
            attrs = await trio.to_thread.run_sync(
                lambda: client.api.inspect_container(bot.container_id)
            )
            hc = attrs["HostConfig"]
            assert hc["NetworkMode"] == "none"
            assert hc["Memory"] == hc["MemorySwap"] == 96 * 1024 * 1024
            assert hc["PidsLimit"] == 20
            assert hc["NanoCpus"] > 0
            assert hc["ReadonlyRootfs"] is True
            assert "size=8m" in hc["Tmpfs"]["/tmp"]
            assert hc["CapDrop"] == ["ALL"]
            assert "no-new-privileges" in hc["SecurityOpt"]
            assert hc["Init"] is True
            assert attrs["Config"]["User"] not in ("", "0", "root")
            await bot.kill()
            info = await bot.wait()
            assert info.killed_by_arena
    assert arena_containers(client) == []


@pytest.fixture(scope="module")
def hostile_like_image(random_c_image) -> str:
    return random_c_image


async def test_missing_image_is_a_launch_error(client):
    spec = LaunchSpec("ghost", ("/bot",), isolation="docker", image="arena-test/no-such-image")
    async with trio.open_nursery() as nursery:
        with pytest.raises(LaunchError):
            await launcher_for("docker").start(spec, nursery)


async def test_missing_executable_in_image_fails_the_start(client, random_c_image):
    """The init process (not the daemon) runs the command, so a missing program is either a
    LaunchError or an immediate exit that the referee reports as failed_start."""
    spec = LaunchSpec("ghost", ("/no/such/bot",), isolation="docker", image=random_c_image)
    async with trio.open_nursery() as nursery:
        try:
            bot = await launcher_for("docker").start(spec, nursery)
        except LaunchError:
            pass
        else:
            async with bot:
                with trio.fail_after(20):
                    info = await bot.wait()
                assert info.returncode not in (None, 0)
                assert await read_line(bot.stdout) == b""
    assert arena_containers(client) == []


async def test_docker_tournament_config_plays_random_c_in_docker(client, random_c_image, tmp_path):
    """tournaments/docker.toml as shipped (results redirected, one game entry)."""
    from arena.tournaments.config import config_from_dict
    from arena.tournaments.runner import run_tournament
    from arena.tournaments.store import Store

    path = REPO / "tournaments" / "docker.toml"
    data = tomllib.loads(path.read_text())
    data["results"] = str(tmp_path / "docker.sqlite")
    data["games"] = data["games"][:1]
    config = config_from_dict(data, base_dir=path.parent, where=str(path), stem="docker")
    with trio.fail_after(120):
        outcome = await run_tournament(config)
    assert outcome.status == "complete"
    store = Store(tmp_path / "docker.sqlite")
    try:
        rows = store.games()
    finally:
        store.close()
    assert len(rows) == 2
    for row in rows:
        assert not row.forfeit, row
    assert arena_containers(client) == []


def test_containers_of_dead_arenas_are_swept(client, random_c_image):
    import subprocess

    from arena.sandbox.docker import OWNER_LABEL, sweep_stale

    child = subprocess.Popen(["true"])
    child.wait()  # the pid of an arena that is gone
    labels = {LABEL: "stale", OWNER_LABEL: f"{socket.gethostname()}:{child.pid}"}
    c = client.containers.create(random_c_image, labels=labels)
    alive = client.containers.create(
        random_c_image, labels={LABEL: "live", OWNER_LABEL: f"{socket.gethostname()}:1"}
    )
    try:
        assert sweep_stale(client) >= 1
        ids = {x.id for x in client.containers.list(all=True, filters={"label": LABEL})}
        assert c.id not in ids
        assert alive.id in ids
    finally:
        alive.remove(force=True)
        with contextlib.suppress(Exception):
            c.remove(force=True)
