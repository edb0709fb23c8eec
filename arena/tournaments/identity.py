"""When a results file may be continued by a changed config, and what the pair numbers are.

A recorded game stays valid as long as nothing it was played under changes: its two bots'
settings, its game's options, the time control, the seed and the openings. So a config may
*add* bots, games and rounds to a finished or running tournament, and only the new pairings
are scheduled; it may not remove a bot, game or pairing, nor change a setting of one already
played, because the file would then mix games played under different conditions. Those
changes are listed by name in the error, so the user sees exactly what to undo (or starts a new
results file).

Games are named by pair number (`r1-papagra-p3-a`), so pair numbers must not move when the pool
grows: the file stores its pairings by bot name, those keep their numbers (and orientation),
and new pairings are numbered after them.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

Pair = tuple[str, str]


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What `new` changes of `old` (both from TournamentConfig.identity) that the recorded
    games depend on; additions are not changes."""
    out: list[str] = []
    for key in ("time_control", "seed", "opening_turns", "openings", "knockout"):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):  # name the fields that differ
            diffs = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
            out += [f"{key}.{k} changed from {_show(a.get(k))} to {_show(b.get(k))}" for k in diffs]
        else:
            out.append(f"{key} changed from {_show(a)} to {_show(b)}")
    for kind in ("bots", "games"):
        word = kind[:-1]
        old_items, new_items = old.get(kind, {}), new.get(kind, {})
        for name, settings in old_items.items():
            if name not in new_items:
                out.append(f"{word} {name!r} removed")
                continue
            for k in sorted(set(settings) | set(new_items[name])):
                a, b = settings.get(k), new_items[name].get(k)
                if a != b:
                    out.append(f"{word} {name!r}: {k} changed from {_show(a)} to {_show(b)}")
    return out


def pair_table(old: Sequence[Pair], wanted: Sequence[Pair]) -> tuple[list[Pair], list[Pair]]:
    """(the pairings to play, numbered by position; pairings of `old` no longer wanted).

    Pairings of `old` keep their number and orientation; wanted ones not in `old` follow, in
    the order given.
    """
    wanted_keys = {frozenset(p) for p in wanted}
    old_keys = {frozenset(p) for p in old}
    dropped = [p for p in old if frozenset(p) not in wanted_keys]
    table = [p for p in old if frozenset(p) in wanted_keys]
    table += [p for p in wanted if frozenset(p) not in old_keys]
    return table, dropped


def legacy_pairs(bots: Sequence[str]) -> list[Pair]:
    """The pairings of a results file written before they were stored: every pair, in order."""
    return [(bots[i], bots[j]) for i, j in itertools.combinations(range(len(bots)), 2)]


def legacy_changes(
    meta: Mapping[str, Any], identity: Mapping[str, Any], bot_names: Sequence[str]
) -> list[str]:
    """What `identity` (a config's) changes of a results file written before pools could grow.

    Such a file keeps its identity only as a fingerprint, which any difference breaks, so every
    difference is listed, additions and order included; the old side is rebuilt from the config
    summary and bot names the file stores. Empty when the file stores no summary."""
    config = meta.get("config") or {}
    if not config.get("games"):
        return []
    old = {
        "bots": {name: {} for name in meta.get("bots", [])},
        "games": {
            g["label"]: {"name": g["name"], "options": dict(g.get("options") or {})}
            for g in config["games"]
        },
        "time_control": config.get("time_control"),
        "seed": config.get("seed"),
        "opening_turns": config.get("opening_turns"),
    }
    new = {
        "bots": {name: {} for name in bot_names},
        "games": {
            label: {"name": g["name"], "options": dict(g.get("options") or {})}
            for label, g in identity.get("games", {}).items()
        },
        "time_control": identity.get("time_control"),
        "seed": identity.get("seed"),
        "opening_turns": identity.get("opening_turns"),
    }
    out = changes(old, new)
    for kind in ("bots", "games"):
        word = kind[:-1]
        out += [f"{word} {name!r} added" for name in new[kind] if name not in old[kind]]
        kept_old = [n for n in old[kind] if n in new[kind]]
        if kept_old != [n for n in new[kind] if n in old[kind]]:
            out.append(f"{kind} in another order")
    return out
