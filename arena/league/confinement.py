"""How the league confines submitted bots: refuse to serve when it cannot, cap what manifests ask.

A league runs programs uploaded by strangers around the clock, so "contained as far as the
machine allows" (the local arena's policy, docs/security.md) is not enough: `serve` asks
`confinement_problem` and refuses to start when bots could not be confined, unless the operator
passes `--unsafe` on purpose. The league's sandbox settings are a ceiling: a manifest may ask
for less (less memory, fewer processes), never for more, and never for the network unless the
league allows it (`Limits.capped_by`, applied by the referee to `MatchConfig.limits`). The
isolation mode is the league's, whatever the manifest says.
"""

from __future__ import annotations

import os

from arena.sandbox import ISOLATION_MODES, Limits
from arena.sandbox.process import Capabilities, capabilities


def confinement_problem(isolation: str, caps: Capabilities | None = None) -> str | None:
    """None when this machine can confine bots in `isolation` mode, else why not (one line).

    process mode needs root (a uid of its own per bot, no capabilities), a memory and a pids
    cgroup, and the network and mount namespaces; docker mode needs a reachable Docker engine.
    `caps` replaces the probed capabilities (tests pass reduced sets). Blocking (it may probe
    the machine or the Docker engine): call it before the event loop or in a thread.
    """
    if isolation not in ISOLATION_MODES:
        return f"unknown isolation mode {isolation!r} (valid: {', '.join(ISOLATION_MODES)})"
    if isolation == "docker":
        from arena.sandbox.docker import docker_available

        return docker_available()
    caps = caps if caps is not None else capabilities()
    missing = []
    if not caps.root or not caps.uids:
        missing.append(
            f"the server runs as uid {os.geteuid()}, not root, so bots would run as its own user"
        )
    if caps.cgroups.memory is None:
        missing.append("no memory cgroup")
    if caps.cgroups.pids is None:
        missing.append("no pids cgroup")
    if not caps.netns:
        missing.append("no network namespace (bots could reach the network)")
    if not caps.mountns:
        missing.append("no mount namespace (bots could write wherever their uid may)")
    if not missing:
        return None
    return "process isolation cannot confine bots here: " + "; ".join(missing)


def capped_limits(requested: Limits, ceiling: Limits) -> Limits:
    """What a submitted bot gets: its manifest's request under the league's ceiling. The rule
    is the referee's own, `Limits.capped_by` (arena/sandbox/limits.py), kept here by name for
    the league's executors."""
    return requested.capped_by(ceiling)
