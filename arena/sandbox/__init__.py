"""Isolation modes for running untrusted bots: `process` (default) and `docker`."""

from __future__ import annotations

from arena.sandbox.base import (
    BotProcess,
    ExitInfo,
    Launcher,
    LaunchError,
    LaunchSpec,
    SandboxFault,
)
from arena.sandbox.limits import Limits, LimitsError

ISOLATION_MODES = ("process", "docker")


def launcher_for(isolation: str) -> Launcher:
    """The launcher for an isolation mode name (imported lazily: docker is optional)."""
    if isolation == "process":
        from arena.sandbox.process import ProcessLauncher

        return ProcessLauncher()
    if isolation == "docker":
        from arena.sandbox.docker import DockerLauncher

        return DockerLauncher()
    raise ValueError(f"unknown isolation mode {isolation!r} (valid: {', '.join(ISOLATION_MODES)})")


__all__ = [
    "ISOLATION_MODES",
    "BotProcess",
    "ExitInfo",
    "LaunchError",
    "LaunchSpec",
    "Launcher",
    "Limits",
    "LimitsError",
    "SandboxFault",
    "launcher_for",
]
