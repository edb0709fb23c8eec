"""The per-bot CPU cap (`limits.cpus`): a bot's whole tree, however many busy processes it
runs, uses at most its cap, so that it cannot take the cores the bots of other games need.
Real processes in real cgroups; the layouts the machine does not have on fake trees (real files,
the kernel's names). The cap seen from the referee (a neighbour game is not stalled, a capped
bot's own slowness is not forgiven): tests/referee/test_fair_clocks.py."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from arena.sandbox import LaunchSpec, Limits
from arena.sandbox.cgroups import BotCgroup, CgroupSystem
from arena.sandbox.limits import LimitsError
from arena.sandbox.process import Capabilities, ProcessLauncher, capabilities

CAPS = capabilities()
needs_cap = pytest.mark.skipif(
    CAPS.cgroups.cpu is None, reason="no cgroup CPU controller here: bots are not capped"
)
CORES = os.cpu_count() or 1

#: N busy processes that never end (the shell forks them: no compiler needed)
SWARM = "i=0; while [ $i -lt {n} ]; do (while :; do :; done) & i=$((i+1)); done; echo go; wait"


async def cpu_over(spec: LaunchSpec, seconds: float) -> tuple[float, float, int]:
    """Start `spec` (a SWARM), and measure its cgroup's CPU time and its throttling over
    `seconds` of wall time once every helper runs: (CPU s, wall s, throttled ns)."""
    async with trio.open_nursery() as nursery:
        bot = await ProcessLauncher().start(spec, nursery)
        async with bot:
            assert bot.counters is not None
            with trio.fail_after(30):  # every helper is forked (and runs) before `go`
                assert await bot.stdout.receive_some(10) == b"go\n"
            before, t0 = bot.counters.sample(), trio.current_time()
            await trio.sleep(seconds)  # the measuring window, not a synchronisation
            after, t1 = bot.counters.sample(), trio.current_time()
            assert before is not None and after is not None
            cap = bot.counters.cap
            notes = bot.notes
    assert cap == spec.limits.cpus, notes
    return (after.cpu - before.cpu) / 1e9, t1 - t0, after.throttled - before.throttled


@needs_cap
@pytest.mark.skipif(CORES < 2, reason="a cap of one CPU caps nothing on one core")
@pytest.mark.parametrize(("cpus", "helpers"), [(1.0, 8), (0.2, 8)])
async def test_a_swarm_of_busy_processes_uses_at_most_its_cap(cpus, helpers):
    """Eight busy processes on a 2-core machine (beside whatever else runs on it) would take
    both cores; capped, the whole tree gets `cpus` CPUs at most, and the throttling that
    costs it is counted where the accounting reads it (arena/referee/blame.py subtracts it
    from the host's share)."""
    spec = LaunchSpec("swarm", ("sh", "-c", SWARM.format(n=helpers)), limits=Limits(cpus=cpus))
    cpu, wall, throttled = await cpu_over(spec, 2.0)
    # a generous margin: the quota is exact per 100 ms period, give or take a period's slice
    assert cpu <= cpus * wall * 1.15 + 0.02, (cpu, wall)
    if cpu > 0.8 * cpus * wall:  # it reached its cap (a loaded machine may keep it below)
        assert throttled > 0, "at its cap, yet never throttled"


@needs_cap
async def test_the_default_cap_is_one_cpu_and_a_cap_of_the_whole_machine_is_none():
    spec = LaunchSpec("sleeper", ("sleep", "60"))
    async with trio.open_nursery() as nursery:
        capped = await ProcessLauncher().start(spec, nursery)
        whole = await ProcessLauncher().start(
            LaunchSpec("sleeper", ("sleep", "60"), limits=Limits(cpus=float(CORES))), nursery
        )
        async with capped, whole:
            assert capped.counters is not None and whole.counters is not None
            assert capped.counters.cap == (1.0 if CORES > 1 else None)
            assert whole.counters.cap is None
            assert any("CPU not capped" in n for n in whole.notes)


async def test_without_a_cpu_controller_the_bot_runs_uncapped_and_says_so():
    """The fallback: no CPU controller (here: a cgroup system without one), no cap; the
    capability report and the bot's notes say so, and the record's `cpu_cap` is null."""
    import dataclasses

    no_cpu = dataclasses.replace(CAPS.cgroups, cpu=None, cpu_v2=False)
    caps = dataclasses.replace(CAPS, cgroups=no_cpu)
    assert "CPU NOT capped" in caps.describe()
    async with trio.open_nursery() as nursery:
        bot = await ProcessLauncher(caps=caps).start(LaunchSpec("s", ("sleep", "60")), nursery)
        async with bot:
            assert bot.counters is None or bot.counters.cap is None
            assert any("CPU not capped" in n for n in bot.notes), bot.notes
    bare = Capabilities(root=False, cgroups=CgroupSystem(notes=("test",)))
    assert "CPU NOT capped" in bare.describe()


@needs_cap
def test_the_capability_report_names_the_cap():
    assert "CPU capped per bot" in ProcessLauncher.describe()
    assert "CPU cap (v" in CAPS.cgroups.describe()


# -- layouts on fake trees -------------------------------------------------------------------


def _fake(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)


def test_pure_v2_caps_by_cpu_max_and_reads_throttled_usec(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("ARENA_NO_CGROUP", raising=False)
    monkeypatch.setattr("arena.sandbox.cgroups._own_paths", lambda: {"": "/"})
    _fake(tmp_path, {"cgroup.controllers": "cpu memory pids\n", "cgroup.subtree_control": ""})
    system = CgroupSystem.detect(tmp_path)
    assert system.cpu == tmp_path and system.cpu_v2
    cg = BotCgroup.create(system, 64 << 20, 32, 0.5)
    d = cg.dirs["v2"]
    assert (d / "cpu.max").read_text() == "50000 100000"
    assert cg.cpu_cap == 0.5 and "cpu" not in cg.dirs  # one directory: the v2 one
    (d / "cpu.stat").write_text("usage_usec 7\nnr_throttled 1\nthrottled_usec 1500\n")
    (d / "cgroup.threads").write_text("")
    counters = cg.cpu_counters()
    assert counters is not None and counters.cap == 0.5
    sample = counters.sample()
    assert sample is not None and sample.cpu == 7000 and sample.throttled == 1_500_000
    counters.close()


def test_hybrid_caps_by_the_v1_cpu_controller_and_reads_throttled_time(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("ARENA_NO_CGROUP", raising=False)
    monkeypatch.setattr(
        "arena.sandbox.cgroups._own_paths",
        lambda: {"": "/", "memory": "/", "pids": "/", "cpu": "/", "cpuacct": "/"},
    )
    _fake(
        tmp_path,
        {
            "unified/cgroup.controllers": "",
            "unified/cpu.stat": "usage_usec 0\n",
            "memory/memory.limit_in_bytes": "",
            "pids/pids.max": "max",
            "cpu/cpu.cfs_quota_us": "-1",
        },
    )
    system = CgroupSystem.detect(tmp_path)
    assert system.cpu == tmp_path / "cpu" and not system.cpu_v2
    cg = BotCgroup.create(system, 1 << 30, 64, 1.0)
    assert (cg.dirs["cpu"] / "cpu.cfs_quota_us").read_text() == "100000"
    assert cg.dirs["cpu"] / "cgroup.procs" in map(Path, cg.procs_files())
    (cg.dirs["v2"] / "cpu.stat").write_text("usage_usec 3\n")
    (cg.dirs["v2"] / "cgroup.threads").write_text("")
    (cg.dirs["cpu"] / "cpu.stat").write_text("nr_periods 4\nnr_throttled 2\nthrottled_time 9\n")
    counters = cg.cpu_counters()
    assert counters is not None and counters.source == "cgroup v2" and counters.cap == 1.0
    sample = counters.sample()
    assert sample is not None and sample.throttled == 9
    counters.close()
    # not asked for a cap (limits.cpus the whole machine): no cpu directory at all
    assert "cpu" not in BotCgroup.create(system, 1 << 30, 64).dirs


def test_cpu_and_cpuacct_mounted_together_make_one_directory(tmp_path: Path, monkeypatch):
    """`cpu,cpuacct` with its two links (systemd's hybrid layout): one directory per bot."""
    monkeypatch.delenv("ARENA_NO_CGROUP", raising=False)
    monkeypatch.setattr(
        "arena.sandbox.cgroups._own_paths", lambda: {"cpu": "/", "cpuacct": "/", "memory": "/"}
    )
    _fake(
        tmp_path,
        {
            "memory/memory.limit_in_bytes": "",
            "cpu,cpuacct/cpu.cfs_quota_us": "-1",
            "cpu,cpuacct/cpuacct.usage": "0",
        },
    )
    (tmp_path / "cpu").symlink_to("cpu,cpuacct")
    (tmp_path / "cpuacct").symlink_to("cpu,cpuacct")
    system = CgroupSystem.detect(tmp_path)
    assert system.cpu == system.cpuacct == tmp_path / "cpu,cpuacct"
    cg = BotCgroup.create(system, 1 << 30, 64, 2.0)
    assert cg.dirs["cpu"] == cg.dirs["cpuacct"]
    assert (cg.dirs["cpu"] / "cpu.cfs_quota_us").read_text() == "200000"


def test_a_refused_quota_leaves_the_bot_uncapped_not_without_cgroup(tmp_path: Path, monkeypatch):
    """v1 refuses a child's quota above its parent's: the bot keeps its cgroup (memory, pids,
    kill) and runs uncapped, and says why."""
    monkeypatch.delenv("ARENA_NO_CGROUP", raising=False)
    monkeypatch.setattr("arena.sandbox.cgroups._own_paths", lambda: {"memory": "/", "cpu": "/"})
    _fake(tmp_path, {"memory/memory.limit_in_bytes": "", "cpu/cpu.cfs_quota_us": "-1"})
    system = CgroupSystem.detect(tmp_path)
    real_write = __import__("arena.sandbox.cgroups", fromlist=["_write"])._write

    def refusing(path: str, text: str) -> None:
        if path.endswith("cpu.cfs_quota_us"):
            raise OSError(22, "Invalid argument")
        real_write(path, text)

    monkeypatch.setattr("arena.sandbox.cgroups._write", refusing)
    cg = BotCgroup.create(system, 1 << 30, 64, 1.0)
    assert cg.cpu_cap is None and "refused" in cg.cap_note
    assert "memory" in cg.dirs


# -- the limit itself --------------------------------------------------------------------------


def test_cpus_is_a_limit_like_the_others():
    assert Limits().cpus == 1.0
    assert Limits().with_values({"cpus": 0.25}).cpus == 0.25
    assert Limits().with_values({"cpus": 2}).cpus == 2.0
    assert Limits().with_values({"cpus": "1.5"}, "--limit", text=True).cpus == 1.5
    # a manifest asks; the operator's ceiling decides
    assert Limits.requested(cpus=4.0).capped_by(Limits(cpus=1.0)).cpus == 1.0
    assert Limits.requested().capped_by(Limits(cpus=0.5)).cpus == 0.5
    for bad in (0, -1, 0.001, 2000, True, "fast", math.nan, math.inf):
        with pytest.raises(LimitsError) as err:
            Limits().with_values({"cpus": bad})
        assert err.value.key == "limits.cpus"


@given(st.floats(min_value=0.01, max_value=1024), st.floats(min_value=0.01, max_value=1024))
def test_the_granted_cap_is_never_above_the_operators(asked: float, ceiling: float):
    granted = Limits.requested(cpus=asked).capped_by(Limits(cpus=ceiling))
    assert granted.cpus <= ceiling and granted.cpus <= asked
    quota = granted.cpu_quota(machine=8)
    assert quota is None if granted.cpus >= 8 else quota == granted.cpus
