"""Process-mode containment layers, each tested for real where the machine gives it, and the
fallbacks tested by switching layers off (ProcessLauncher(caps=...))."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from arena.sandbox import LaunchSpec, Limits
from arena.sandbox.cgroups import BotCgroup, CgroupSystem, sweep_stale
from arena.sandbox.hostres import processes_of_uid
from arena.sandbox.limits import BOUNDS
from arena.sandbox.process import (
    Capabilities,
    ProcessBot,
    ProcessLauncher,
    capabilities,
)

CAPS = capabilities()
needs_uid = pytest.mark.skipif(not CAPS.uids, reason="needs root (unique uids)")
needs_cgroup = pytest.mark.skipif(not CAPS.cgroups.usable, reason="no writable cgroup here")


async def first_line(bot: ProcessBot) -> str:
    data = b""
    with trio.fail_after(10):
        while not data.endswith(b"\n"):
            chunk = await bot.stdout.receive_some(4096)
            assert chunk, f"bot ended early; stderr: {bot.stderr_tail()}"
            data += chunk
    return data.decode().splitlines()[0].strip()


async def run_to_end(spec: LaunchSpec) -> tuple[str, str]:
    """Start the bot and read its stdout to the end: all it wrote, and its stderr's tail."""
    async with trio.open_nursery() as nursery:
        bot = await ProcessLauncher().start(spec, nursery)
        async with bot:
            out = b""
            with trio.fail_after(60):
                while chunk := await bot.stdout.receive_some(4096):
                    out += chunk
    return out.decode(), bot.stderr_tail()


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def gone_within(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


@needs_uid
async def test_concurrent_bots_get_distinct_unprivileged_uids():
    spec = LaunchSpec("id", ("sh", "-c", "id -u; sleep 60"))
    launcher = ProcessLauncher()
    async with trio.open_nursery() as nursery:
        a = await launcher.start(spec, nursery)
        b = await launcher.start(spec, nursery)
        async with a, b:
            assert isinstance(a, ProcessBot) and isinstance(b, ProcessBot)
            ua, ub = int(await first_line(a)), int(await first_line(b))
            assert ua != ub
            assert ua != 0 and ub != 0
            assert {ua, ub} == {a.uid, b.uid}


@pytest.mark.skipif(not CAPS.netns, reason="no network namespaces here")
async def test_no_network_by_default_and_network_on_request():
    script = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ,; echo"
    launcher = ProcessLauncher()
    async with trio.open_nursery() as nursery:
        closed = await launcher.start(LaunchSpec("n", ("sh", "-c", script)), nursery)
        async with closed:
            assert await first_line(closed) == "lo,"
        spec = LaunchSpec("n", ("sh", "-c", script), limits=Limits(network=True))
        opened = await launcher.start(spec, nursery)
        async with opened:
            assert await first_line(opened) != "lo,"


@needs_uid
@pytest.mark.skipif(not CAPS.netns, reason="no network namespaces here")
async def test_a_uids_bots_take_turns_in_its_own_empty_network_namespace():
    """A uid's network namespace serves its next bot (none is created per bot), never two
    uids at once, and holds no network either way."""
    script = (
        "echo $(readlink /proc/self/ns/net) "
        "$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,); exec sleep 60"
    )
    spec = LaunchSpec("ns", ("sh", "-c", script))
    launcher = ProcessLauncher()
    me = os.readlink("/proc/self/ns/net")
    seen: dict[int, list[str]] = {}
    async with trio.open_nursery() as nursery:
        for _ in range(3):
            a = await launcher.start(spec, nursery)
            b = await launcher.start(spec, nursery)  # at the same time: another uid
            async with a, b:
                assert isinstance(a, ProcessBot) and isinstance(b, ProcessBot)
                assert a.uid != b.uid
                for bot in (a, b):
                    ns, devices = (await first_line(bot)).split()
                    assert devices == "lo,"  # no other device
                    assert ns != me
                    assert bot.uid is not None
                    seen.setdefault(bot.uid, []).append(ns)
    # each uid kept one namespace across its bots, and no two uids shared one
    assert all(len(set(v)) == 1 for v in seen.values()), seen
    assert len({v[0] for v in seen.values()}) == len(seen), seen
    assert max(len(v) for v in seen.values()) >= 2, seen  # a uid served several bots


def variants() -> list:
    out = [pytest.param(CAPS, id="all-layers")]
    if CAPS.uids and CAPS.cgroups.usable:
        out.append(
            pytest.param(dataclasses.replace(CAPS, cgroups=CgroupSystem()), id="uid-no-cgroup")
        )
    if CAPS.cgroups.usable:
        out.append(pytest.param(dataclasses.replace(CAPS, uids=False), id="cgroup-no-uid"))
    return out


@pytest.mark.parametrize("caps", variants())
async def test_setsid_child_dies_with_the_bot(caps: Capabilities):
    """A child that left the process group is still ended, by cgroup or by uid."""
    if not (caps.uids or caps.cgroups.usable):
        pytest.skip("only a process group here: setsid children can escape (docs/security.md)")
    launcher = ProcessLauncher(caps=caps)
    script = "setsid sleep 60 & echo $!; sleep 60"
    async with trio.open_nursery() as nursery:
        bot = await launcher.start(LaunchSpec("s", ("sh", "-c", script)), nursery)
        async with bot:
            child = int(await first_line(bot))
            assert alive(child)
    assert await trio.to_thread.run_sync(gone_within, [child], 5.0) == []


@pytest.mark.parametrize("caps", variants())
async def test_fork_bomb_is_bounded_and_fully_killed(caps: Capabilities):
    if not (caps.uids or caps.cgroups.usable):
        pytest.skip("neither a cgroup nor a unique uid: a fork bomb would not be bounded")
    launcher = ProcessLauncher(caps=caps)
    # a shell fork bomb whose members leave the process group; prints the leader's pid first
    script = "echo $$; b() { setsid sh -c 'while :; do :; done' & b & }; b; sleep 60"
    spec = LaunchSpec("bomb", ("sh", "-c", script), limits=Limits(processes=24))
    async with trio.open_nursery() as nursery:
        bot = await launcher.start(spec, nursery)
        assert isinstance(bot, ProcessBot)
        async with bot:
            await first_line(bot)
            with trio.move_on_after(0.5):
                await bot.wait()
            members = bot.processes()
            assert len(members) <= 24 + 2  # the limit (and a margin for processes being reaped)
        uid = bot.uid
    left = await trio.to_thread.run_sync(gone_within, sorted(members), 5.0)
    assert left == []
    if uid is not None:
        assert processes_of_uid(uid) == []


@needs_cgroup
@pytest.mark.skipif(CAPS.cgroups.memory is None, reason="no memory cgroup here")
async def test_memory_limit_is_detected():
    code = "x = []\nwhile True: x.append(bytearray(1 << 20))\n"
    spec = LaunchSpec("hog", (sys.executable, "-c", code), limits=Limits(memory_mb=48))
    async with trio.open_nursery() as nursery:
        bot = await ProcessLauncher().start(spec, nursery)
        async with bot:
            with trio.fail_after(30):
                info = await bot.wait()
    assert info.memory_exceeded, (info, bot.stderr_tail())
    assert info.describe() == "killed: memory limit exceeded"


async def test_the_largest_open_files_limit_starts():
    """open_files at its bound starts a bot: the rlimit is lowered to what this process may
    give (its own hard limit) instead of failing every start with "not allowed to raise
    maximum limit" (root without CAP_SYS_RESOURCE, as in most containers, cannot either)."""
    import resource

    top = BOUNDS["open_files"][1]
    spec = LaunchSpec("many", ("sh", "-c", "ulimit -n"), limits=Limits(open_files=top))
    out, _ = await run_to_end(spec)
    own = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert int(out) == min(top, own)


async def test_rlimits_apply_to_the_bot():
    script = "ulimit -n; ulimit -c; ulimit -f"
    spec = LaunchSpec("ulimit", ("sh", "-c", script), limits=Limits(open_files=77, file_size_mb=2))
    out, _ = await run_to_end(spec)
    nofile, core, fsize = out.split()
    assert nofile == "77"
    assert core == "0"
    assert int(fsize) * 512 == 2 * 1024 * 1024  # sh reports 512-byte blocks


@pytest.fixture
def world() -> Iterator[Path]:
    """Like /tmp: world-writable and reachable, so only a read-only mount protects it."""
    d = Path(tempfile.mkdtemp(prefix="arena-world-"))
    d.chmod(0o1777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(not CAPS.mountns, reason="no mount namespaces here")
async def test_filesystem_is_read_only_but_the_private_tmpdir(world: Path):
    script = (
        'echo ok > "$TMPDIR/mine" && cat "$TMPDIR/mine"; '
        f"echo x > {world}/theirs 2>/dev/null && echo wrote || echo refused; "
        "echo y > /dev/null && echo devnull-ok"
    )
    out, stderr = await run_to_end(LaunchSpec("fs", ("sh", "-c", script)))
    assert out.split() == ["ok", "refused", "devnull-ok"], stderr
    assert not await trio.Path(world / "theirs").exists()


@pytest.mark.skipif(not CAPS.mountns, reason="no mount namespaces here")
async def test_private_tmpdir_is_a_small_tmpfs_and_the_default_cwd():
    """Without a workdir the bot starts in its private directory, writable by relative
    paths, and bounded by limits.tmpfs_mb."""
    script = (
        "echo hi > rel && cat rel; "
        "head -c 3000000 /dev/zero > big 2>/dev/null && echo fits || echo full; "
        'df -k "$TMPDIR" | tail -n 1'
    )
    spec = LaunchSpec("tmp", ("sh", "-c", script), limits=Limits(tmpfs_mb=2))
    out, stderr = await run_to_end(spec)
    lines = out.splitlines()
    assert lines[:2] == ["hi", "full"], (lines, stderr)
    assert lines[2].split()[1] == "2048"  # 1K-blocks of the tmpfs


def fstype(path: str) -> str:
    """The type of the filesystem holding `path` (the longest mount point above it)."""
    best, kind = "", ""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = fields[4]
            under = path == point or path.startswith(point.rstrip("/") + "/")
            if under and len(point) >= len(best):
                best, kind = point, fields[fields.index("-") + 1]
    return kind


async def test_the_private_tmpdir_goes_with_the_bot():
    """The bot's temporary directory is removed when it is closed; with a mount namespace
    (where it is only the mount point of the bot's own tmpfs) it is made on a tmpfs, where
    making and removing it costs microseconds instead of a disk's journal."""
    out, stderr = await run_to_end(LaunchSpec("tmp", ("sh", "-c", 'echo "$TMPDIR"')))
    path = out.strip()
    assert path.startswith("/") and "arena-bot-" in path, (out, stderr)
    assert not await trio.Path(path).exists()
    if CAPS.mountns:
        assert fstype(str(Path(path).parent)) == "tmpfs"


@needs_cgroup
def test_cgroups_of_dead_arenas_are_swept():
    """An arena killed with SIGKILL leaves its bots' cgroups: the next arena removes them."""
    import subprocess

    child = subprocess.Popen(["true"])
    child.wait()  # a pid that no longer runs: the "crashed arena"
    system = CAPS.cgroups
    parents = {p for p in (system.v2, system.memory, system.pids, system.freezer) if p}
    stale = [p / f"arena-{child.pid}-deadbeef" for p in parents]
    for d in stale:
        d.mkdir()
    assert sweep_stale(system) >= len(stale)
    assert not any(d.exists() for d in stale)


async def test_bare_fallback_still_plays_and_kills_its_group():
    """No cgroup, no uid switch, no namespaces (an unprivileged arena): the process group."""
    bare = Capabilities(root=False, uids=False, cgroups=CgroupSystem())
    script = "sleep 60 & echo $!; read line; echo got $line; sleep 60"
    async with trio.open_nursery() as nursery:
        bot = await ProcessLauncher(caps=bare).start(LaunchSpec("b", ("sh", "-c", script)), nursery)
        async with bot:
            child = int(await first_line(bot))
            await bot.stdin.send_all(b"ping\n")
            assert await first_line(bot) == "got ping"
    assert await trio.to_thread.run_sync(gone_within, [child], 5.0) == []
    assert bot.exit_info() is not None and bot.exit_info().killed_by_arena


def test_describe_names_every_layer():
    text = ProcessLauncher.describe()
    assert "cgroups:" in text and "network" in text


# -- cgroup layout detection on fake trees (real files, the kernel's names) -----------------


def _fake(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)


def test_detects_pure_v2_and_writes_v2_limits(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("ARENA_NO_CGROUP", raising=False)
    monkeypatch.setattr("arena.sandbox.cgroups._own_paths", lambda: {"": "/"})
    _fake(tmp_path, {"cgroup.controllers": "cpu memory pids\n", "cgroup.subtree_control": ""})
    system = CgroupSystem.detect(tmp_path)
    assert system.v2 == tmp_path
    assert system.memory == tmp_path and system.memory_v2
    assert system.pids == tmp_path and system.pids_v2
    cg = BotCgroup.create(system, 64 << 20, 32)
    d = cg.dirs["v2"]
    assert (d / "memory.max").read_text() == str(64 << 20)
    assert (d / "pids.max").read_text() == "32"
    cg.add(os.getpid())  # a plain file here; the kernel would move the process
    assert cg.pids() == {os.getpid()}
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert cg.memory_exceeded()


def test_detects_hybrid_v1_layout(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("ARENA_NO_CGROUP", raising=False)
    monkeypatch.setattr(
        "arena.sandbox.cgroups._own_paths",
        lambda: {"": "/", "memory": "/job", "pids": "/", "freezer": "/"},
    )
    _fake(
        tmp_path,
        {
            "unified/cgroup.controllers": "",
            "memory/job/memory.limit_in_bytes": "",
            "pids/pids.max": "max",
            "freezer/freezer.state": "THAWED",
        },
    )
    system = CgroupSystem.detect(tmp_path)
    assert system.v2 == tmp_path / "unified"
    assert system.memory == tmp_path / "memory" / "job" and not system.memory_v2
    assert system.pids == tmp_path / "pids"
    assert system.freezer == tmp_path / "freezer"
    cg = BotCgroup.create(system, 1 << 30, 64)
    assert (cg.dirs["memory"] / "memory.limit_in_bytes").read_text() == str(1 << 30)
    (cg.dirs["memory"] / "memory.oom_control").write_text("under_oom 0\noom_kill 2\n")
    assert cg.memory_exceeded()


def test_no_cgroup_hierarchy_is_reported(tmp_path: Path):
    system = CgroupSystem.detect(tmp_path / "nothing")
    assert not system.usable
    assert "no cgroup" in system.describe()


# -- interpreters the bot's uid could not reach (pyenv under /root) --------------------------


@needs_uid
@pytest.mark.skipif(not CAPS.mountns, reason="no mount namespaces here")
async def test_python_bot_runs_under_its_own_uid():
    """The arena's own interpreter (with msgpack and the bots' SDK, as Python bots use it)
    runs under the bot's uid even when it lives in a directory that uid cannot enter: only
    the way to it is exposed, in the bot's own mount namespace."""
    code = (
        "import os, sys, msgpack, protocol\n"
        "parent = os.path.dirname(sys.base_prefix)\n"
        "while os.path.dirname(parent) != '/': parent = os.path.dirname(parent)\n"
        "print(os.getuid(), parent, *sorted(os.listdir(parent)))\n"
    )
    spec = LaunchSpec("py", (sys.executable, "-c", code))
    async with trio.open_nursery() as nursery:
        bot = await ProcessLauncher().start(spec, nursery)
        assert isinstance(bot, ProcessBot)
        async with bot:
            uid, top, *listing = (await first_line(bot)).split()
    assert int(uid) == bot.uid and bot.uid not in (None, 0), (uid, bot.notes)
    host = sorted(os.listdir(top))
    if os.stat(top).st_mode & 0o001 == 0:  # e.g. /root: only the interpreter's entry shows
        assert len(listing) == 1 and listing[0] in host, (listing, bot.notes)
    else:
        assert listing == host


def test_exposures_cover_only_blocked_directories(world: Path):
    from arena.sandbox.exposure import exposures_for

    world.chmod(0o755)
    closed = world / "closed"
    (closed / "open" / "bin").mkdir(parents=True)
    (closed / "secret").mkdir()
    (closed / "open" / "bin" / "prog").write_text("")
    (closed / "open" / "shut").mkdir(mode=0o700)
    (closed / "open" / "shut" / "x").write_text("")
    (closed / "open" / "private").write_text("")
    (closed / "open" / "private").chmod(0o600)
    closed.chmod(0o700)
    uid = 70999
    found = exposures_for([closed / "open" / "bin" / "prog"], uid)
    assert found is not None
    assert [(e.directory, e.names) for e in found] == [(str(closed), ("open",))]
    # a blocked directory below an exposed entry is covered in turn, after its parent
    found = exposures_for([closed / "open" / "shut" / "x", closed / "open" / "bin"], uid)
    assert found is not None
    assert [(e.directory, e.names) for e in found] == [
        (str(closed), ("open",)),
        (str(closed / "open" / "shut"), ("x",)),
    ]
    # a file the uid cannot read: exposing cannot help
    assert exposures_for([closed / "open" / "private"], uid) is None
    # nothing blocked (root may go everywhere): nothing to expose
    assert exposures_for([closed / "open" / "bin" / "prog"], 0) == ()


def _id_program(top: Path) -> tuple[str, str]:
    """A program printing its uid in `top`/bin, all reachable by every uid."""
    top.chmod(0o755)
    (top / "bin").mkdir()
    prog = top / "bin" / "prog"
    prog.write_text("#!/bin/sh\nid -u\n")
    prog.chmod(0o755)
    return str(top / "bin"), str(prog)


@needs_uid
async def test_reachability_is_checked_again_at_every_start(world: Path):
    """The bot's paths are walked at every start, not remembered: a directory closed to
    other uids between two starts (a slot's two games) changes the second start's plan, and
    opening it again gives the bot its own uid back, without a stale plan either way."""
    bindir, prog = _id_program(world)
    spec = LaunchSpec("prog", (prog,))

    async def start() -> tuple[int | None, tuple[str, ...], str]:
        async with trio.open_nursery() as nursery:
            bot = await ProcessLauncher().start(spec, nursery)
            assert isinstance(bot, ProcessBot)
            async with bot:
                return bot.uid, bot.notes, await first_line(bot)

    uid, notes, out = await start()
    assert uid not in (None, 0) and int(out) == uid and notes == (), notes
    os.chmod(bindir, 0o700)
    uid, notes, out = await start()
    if CAPS.mountns:  # the closed directory is covered, the program alone bound back
        assert uid not in (None, 0) and int(out) == uid, (out, notes)
        assert notes == (f"exposed: {prog}",), notes
    else:  # the arena's own uid, and the reason said
        assert uid is None and int(out) == os.geteuid(), (out, notes)
        assert notes == (f"{bindir} is not reachable by an unprivileged uid",), notes
    os.chmod(bindir, 0o755)
    uid, notes, out = await start()
    assert uid not in (None, 0) and int(out) == uid and notes == (), notes


def test_scratch_base_is_made_again_if_it_went(tmp_path: Path, monkeypatch):
    """The scratch base is checked once per process; if a cleaner removed it meanwhile, the
    next bot's directory is made in a base made (and checked) again, not a start failure."""
    import functools

    from arena.sandbox import hostres

    base = tmp_path / "base"
    made: list[bool] = []

    @functools.cache
    def fake_base(mountns: bool) -> Path:
        made.append(mountns)
        base.mkdir(mode=0o711, exist_ok=True)
        return base

    monkeypatch.setattr(hostres, "_scratch_base", fake_base)
    first = hostres.make_scratch(True)
    assert first.parent == base and first.stat().st_mode & 0o777 == 0o700
    assert hostres.make_scratch(True) != first and made == [True]  # checked once
    shutil.rmtree(base)
    again = hostres.make_scratch(True)
    assert again.parent == base and again.is_dir() and made == [True, True]
