"""The league's confinement check on this machine and on reduced capability sets, and the
ceiling rule for manifest limits."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from arena.league.confinement import capped_limits, confinement_problem
from arena.sandbox import Limits
from arena.sandbox.cgroups import CgroupSystem
from arena.sandbox.docker import docker_available
from arena.sandbox.process import Capabilities, capabilities


def test_full_capabilities_confine() -> None:
    caps = capabilities()
    if not (caps.root and caps.netns and caps.mountns and caps.cgroups.memory):
        pytest.skip(f"this machine cannot confine bots: {caps.describe()}")
    assert confinement_problem("process") is None


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"root": False, "uids": False}, "not root"),
        ({"netns": False}, "no network namespace"),
        ({"mountns": False}, "no mount namespace"),
        ({"cgroups": CgroupSystem(notes=("none",))}, "no memory cgroup; no pids cgroup"),
    ],
)
def test_each_missing_layer_is_named(change: dict, words: str) -> None:
    full = Capabilities(
        root=True,
        uids=True,
        netns=True,
        mountns=True,
        cgroups=CgroupSystem(memory=Path("."), pids=Path(".")),
    )
    assert confinement_problem("process", full) is None
    problem = confinement_problem("process", replace(full, **change))
    assert problem is not None
    assert problem.startswith("process isolation cannot confine bots here: ")
    assert words in problem


def test_docker_mode_follows_the_engine() -> None:
    assert confinement_problem("docker") == docker_available()


def test_unknown_mode() -> None:
    assert "unknown isolation mode 'vm'" in (confinement_problem("vm") or "")


def test_manifest_limits_are_capped_by_the_league() -> None:
    ceiling = Limits(memory_mb=512, cpu_seconds=30, processes=16, network=False)
    asked = Limits(memory_mb=4096, cpu_seconds=None, processes=8, network=True, tmpfs_mb=8)
    got = capped_limits(asked, ceiling)
    assert got.memory_mb == 512 and got.processes == 8 and got.tmpfs_mb == 8
    assert got.cpu_seconds == 30 and got.network is False
    assert capped_limits(Limits(network=True), Limits(network=True)).network is True
    assert capped_limits(Limits(cpu_seconds=5), Limits()).cpu_seconds == 5
