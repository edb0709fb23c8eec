"""Resource limits for one bot, and who decides them.

A bot's manifest belongs to the bot's author, so what it says is a request, never a grant: the
operator's limits (the `arena match --limit` flags, a tournament config's `[limits]`, a
league's settings) are the ceiling, and `Limits.capped_by` gives the bot the smaller of the
two, field by field. `network` is granted only when both ask for it. A manifest that leaves a
limit out asks for the most it may have, so it gets the operator's value.

Every value is checked against `BOUNDS` wherever it comes from (manifest, config, flag), so
that no limit can be zero, negative or absurd: a negative `memory_mb` once meant no memory
limit at all, and an `open_files` above the arena's own ceiling made every start fail.

`cpus` is the one limit that is not an integer: like docker's `--cpus` it may be a fraction
of a CPU (a kernel CPU quota of `cpus` x 100 ms per 100 ms period). It bounds all the bot's
processes and threads together, so that a bot running many busy processes takes no more of
the machine than one honest bot does, and never starves the bots of another game.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

#: the accepted range of every numeric limit, inclusive
BOUNDS: dict[str, tuple[float, float]] = {
    "memory_mb": (1, 1 << 20),  # 1 TiB
    "cpu_seconds": (1, 1 << 20),  # 12 days
    "processes": (1, 1 << 15),  # the kernel's default pid_max
    "file_size_mb": (1, 1 << 20),
    "open_files": (1, 1 << 20),  # the kernel's default nr_open
    "stderr_bytes": (1, 1 << 24),  # kept in the referee's memory
    "tmpfs_mb": (1, 1 << 16),
    # the kernel's smallest quota is 1 ms per 100 ms period
    "cpus": (0.01, 1024),
}
#: the limits that may be fractions (the others are integers)
FRACTIONAL = frozenset({"cpus"})


class LimitsError(ValueError):
    """A limit of the wrong type or out of bounds; the message names the key
    (`limits.memory_mb ...`), the caller adds the file or flag it came from."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"{key} {problem}")
        self.key = key
        self.problem = problem


@dataclass(frozen=True)
class Limits:
    """Resource limits for one bot; the defaults are the ceiling `arena match` and
    tournaments use unless the operator sets others.

    `cpu_seconds` None means: derived by the referee from the time control (total budget plus
    a safety factor), so a busy-looping bot is killed by the kernel even if the referee's own
    deadline handling were to fail.
    """

    memory_mb: int = 1024
    cpu_seconds: int | None = None
    processes: int = 64
    file_size_mb: int = 16
    open_files: int = 256
    network: bool = False
    stderr_bytes: int = 64 * 1024
    tmpfs_mb: int = 64  # size of the bot's writable temporary directory (/tmp in docker)
    #: CPUs the bot's whole tree may use at once (a cgroup CPU quota; docker's `--cpus`)
    cpus: float = 1.0

    @classmethod
    def requested(cls, **asked: Any) -> Limits:
        """A bot's request: what it names, and the most it may have for the rest (so the
        operator's ceiling decides those); no network unless asked."""
        most = {k: float(hi) if k in FRACTIONAL else int(hi) for k, (_, hi) in BOUNDS.items()}
        del most["cpu_seconds"]
        return cls(**{**most, **asked})

    def cpu_quota(self, machine: int | None = None) -> float | None:
        """The CPU cap to set, in CPUs: None when `cpus` is at least the `machine`'s CPUs
        (default: this one's), since a quota that large caps nothing."""
        cores = machine if machine is not None else os.cpu_count() or 1
        return self.cpus if self.cpus < cores else None

    def capped_by(self, ceiling: Limits) -> Limits:
        """What the bot gets: this request, limited by the operator's `ceiling` field by field
        (`cpu_seconds` None on either side means no number from that side)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            mine, cap = getattr(self, f.name), getattr(ceiling, f.name)
            if f.name == "network":
                out[f.name] = mine and cap
            elif mine is None or cap is None:
                out[f.name] = cap if mine is None else mine
            else:
                out[f.name] = min(mine, cap)
        return Limits(**out)

    def with_values(
        self, table: Mapping[str, Any], prefix: str = "limits", *, text: bool = False
    ) -> Limits:
        """These limits with the keys of `table` replaced, every value checked: TOML values,
        or with `text` the strings of a command line. Raises LimitsError naming the key."""
        valid = [f.name for f in fields(self)]
        if not isinstance(table, Mapping):
            raise LimitsError(prefix, "must be a table")
        values: dict[str, Any] = {}
        for key, value in table.items():
            # `limits.memory_mb` in a file, `--limit memory_mb` on a command line
            name = f"{prefix} {key}" if prefix.startswith("-") else f"{prefix}.{key}"
            if key not in valid:
                raise LimitsError(name, f"is not a limit (valid keys: {', '.join(valid)})")
            values[key] = _checked(name, key, value, text)
        return replace(self, **values)


def _checked(name: str, key: str, value: Any, text: bool) -> Any:
    if key == "network":
        if text and isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if not isinstance(value, bool):
            raise LimitsError(name, f"must be true or false, got {value!r}")
        return value
    lo, hi = BOUNDS[key]
    if key in FRACTIONAL:
        if text and isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise LimitsError(name, f"must be a number from {lo:g} to {hi:g}, got {value!r}")
        if not lo <= value <= hi:  # NaN fails this too
            raise LimitsError(name, f"must be from {lo:g} to {hi:g}, got {value}")
        return float(value)
    if text and isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise LimitsError(name, f"must be an integer from {lo} to {hi}, got {value!r}")
    if not lo <= value <= hi:
        raise LimitsError(name, f"must be from {lo} to {hi}, got {value}")
    return value
