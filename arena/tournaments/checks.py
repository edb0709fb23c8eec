"""The config vocabulary: what a tournament config and a league's settings both check.

Every problem is reported as one `ConfigError` naming the file, the key and what is wrong
(`Checker.fail`: `FILE: key 'k': problem`), because a tournament or a league is usually started
and left alone: a typo must fail at once, not after an hour of games. A tournament config
(arena/tournaments/config.py) and a league's `league.toml` (arena/league/settings.py) share the
checker, the time control (a "BASE+INC" string or a table, with a sibling `clock`) and the list of
games (names or tables, each game's options validated by its own engine), so both files accept
the same words in the same way; each keeps only its own keys.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.games import GAME_NAMES, make_game
from arena.games.errors import GameError
from arena.referee.clock import CLOCKS, TC_KEYS, TimeControl, TimeControlError
from arena.tournaments.openings import OpeningError, digest, load_openings

_TC_KEYS = TC_KEYS
#: the numbers of a time control table (`clock` is a word)
_TC_NUMBERS = tuple(k for k in TC_KEYS if k != "clock")


class ConfigError(ArenaError):
    """A bad tournament config or league settings; the message names the file and the key."""


class Checker:
    """Collects the file name so every error reads `FILE: key 'k': problem`."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.where}: key '{key}': {problem}")

    def integer(self, key: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {show(value)}")
        if lo is not None and value < lo:
            raise self.fail(key, f"must be at least {lo}, got {value}")
        if hi is not None and value > hi:
            raise self.fail(key, f"must be at most {hi}, got {value}")
        return value

    def number(self, key: str, value: Any, positive: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"expected a number of seconds, got {show(value)}")
        x = float(value)
        if not math.isfinite(x) or x < 0 or (positive and x == 0):
            need = "greater than 0" if positive else "at least 0"
            raise self.fail(key, f"must be {need}, got {value}")
        return x

    def string(self, key: str, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"expected a non-empty string, got {show(value)}")
        return value

    def boolean(self, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {show(value)}")
        return value

    def table(self, key: str, value: Any, allowed: tuple[str, ...]) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(key, f"expected a table, got {show(value)}")
        for k in value:
            if k not in allowed:
                raise self.fail(
                    f"{key}.{k}" if key else k, f"unknown key (valid keys: {', '.join(allowed)})"
                )
        return value


def show(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def read_time_control(
    c: Checker, raw: Any, key: str = "time_control", clock: Any = None
) -> TimeControl:
    """A time control: "BASE+INC" or a table; `clock` is a sibling `clock = "cpu"` key (the
    table may say `clock` itself, not both)."""
    tc = _time_control_only(c, raw, key)
    if clock is None:
        return tc
    if isinstance(raw, Mapping) and "clock" in raw:
        raise c.fail("clock", f"the clock is set in {key} already")
    return dataclasses.replace(tc, clock=read_clock(c, "clock", clock))


def replace_clock(tc: TimeControl, clock: str) -> TimeControl:
    return dataclasses.replace(tc, clock=clock)


def read_clock(c: Checker, key: str, value: Any) -> str:
    if value not in CLOCKS:
        raise c.fail(key, f"expected one of {', '.join(CLOCKS)}, got {show(value)}")
    return str(value)


def _time_control_only(c: Checker, raw: Any, key: str) -> TimeControl:
    if raw is None:
        return TimeControl(base=10.0, increment=0.1)
    if isinstance(raw, str):
        try:
            return TimeControl.parse(raw)
        except TimeControlError as e:
            if "at most" in str(e):
                raise c.fail(key, str(e).removeprefix("time control: ")) from None
            raise c.fail(
                key, f'expected BASE+INCREMENT in seconds like "5+0.05", got {raw!r}'
            ) from None
    t = c.table(key, raw, _TC_KEYS)
    kw: dict[str, Any] = {}
    for k in _TC_NUMBERS:
        if k in t:
            positive = k in ("startup", "base", "move_time", "first_move")
            kw[k] = c.number(f"{key}.{k}", t[k], positive=positive)
    if "clock" in t:
        kw["clock"] = read_clock(c, f"{key}.clock", t["clock"])
    if kw.get("base") is None and "increment" in kw:
        raise c.fail(f"{key}.increment", f"needs {key}.base (a Fischer clock)")
    if kw.get("base") is None and kw.get("move_time") is None:
        raise c.fail(key, "set base (Fischer clock) or move_time (or both)")
    try:
        return TimeControl(**kw)
    except TimeControlError as e:
        named = key if e.key is None else f"{key}.{e.key}"
        raise c.fail(named, str(e).removeprefix("time control: ")) from None


@dataclass(frozen=True)
class GameEntry:
    """One game variant with its options; `label` identifies it in ids and reports.

    `openings` are the checked openings of the entry's openings file (`openings_file`); none
    means random legal openings (arena/tournaments/schedule.py).
    """

    name: str
    options: Mapping[str, Any]
    label: str
    openings: tuple[tuple[tuple[str, ...], ...], ...] = field(default=(), hash=False)
    openings_file: str | None = None

    def settings(self) -> dict[str, Any]:
        """What this game's conditions depend on (part of the tournament's identity)."""
        out: dict[str, Any] = {"name": self.name, "options": dict(self.options)}
        if self.openings:
            out["openings"] = digest(self.openings)
        return out


def read_games(c: Checker, raw: Any, base_dir: Path) -> tuple[GameEntry, ...]:
    if raw is None:
        raw = list(GAME_NAMES)
    if not isinstance(raw, list) or not raw:
        raise c.fail("games", f"expected a non-empty list of game names or tables, got {show(raw)}")
    out: list[GameEntry] = []
    for i, item in enumerate(raw):
        key = f"games[{i}]"
        openings_file = None
        if isinstance(item, str):
            name, options, label = item, {}, item
        elif isinstance(item, Mapping):
            t = c.table(key, item, ("name", "options", "label", "openings"))
            if "openings" in t:
                openings_file = c.string(f"{key}.openings", t["openings"])
            if "name" not in t:
                raise c.fail(f"{key}.name", f"missing (one of: {', '.join(GAME_NAMES)})")
            name = c.string(f"{key}.name", t["name"])
            options = t.get("options", {})
            if not isinstance(options, Mapping):
                raise c.fail(
                    f"{key}.options", f"expected a table of game options, got {show(options)}"
                )
            label = c.string(f"{key}.label", t.get("label", name))
        else:
            raise c.fail(key, f"expected a game name or a table, got {show(item)}")
        if name not in GAME_NAMES:
            raise c.fail(key, f"unknown game {name!r} (valid games: {', '.join(GAME_NAMES)})")
        if not all(ch.isalnum() or ch in "-_" for ch in label):
            raise c.fail(f"{key}.label", f"use letters, digits, '-' and '_' only, got {label!r}")
        options = dict(options)
        _check_game_options(c, key, name, options)
        openings: tuple = ()
        if openings_file is not None:
            path = Path(openings_file).expanduser()
            path = Path(os.path.normpath(path if path.is_absolute() else base_dir / path))
            openings_file = str(path)
            openings = read_openings(c, f"{key}.openings", path, name, options)
        out.append(GameEntry(name, options, label, openings, openings_file))
    labels = [g.label for g in out]
    dup = {lab for lab in labels if labels.count(lab) > 1}
    if dup:
        raise c.fail(
            "games", f"game {sorted(dup)[0]!r} listed twice; give each entry a distinct 'label'"
        )
    return tuple(out)


def read_openings(c: Checker, key: str, path: Path, name: str, options: dict[str, Any]) -> tuple:
    try:
        return load_openings(path, name, options)
    except OpeningError as e:
        raise c.fail(key, str(e)) from None


def _check_game_options(c: Checker, key: str, name: str, options: dict[str, Any]) -> None:
    """Let the engine itself validate the options, so the config accepts exactly what it does."""
    try:
        make_game(name, options)
    except GameError as e:
        raise c.fail(f"{key}.options", str(e)) from None
    except ModuleNotFoundError as e:  # engine not installed in this checkout: checked at play time
        if not (e.name or "").startswith("arena.games"):
            raise
