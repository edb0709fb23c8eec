"""Tournament configuration: a TOML file validated into a frozen `TournamentConfig`.

Every problem is reported as one `ConfigError` naming the file, the key and what is wrong,
because a tournament is usually started and left alone: a typo must fail at once, not after an
hour of games. The format is documented key by key in docs/tournament.md. The checker and
the words a league's settings share (time controls, the games list) are
arena/tournaments/checks.py; a format's own per-bot keys come from arena/tournaments/formats.py.

Paths (bot manifests, the results file) are relative to the config file's directory, so a
config works the same whatever directory `arena tournament run` is started from.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.games.base import MAX_TURNS
from arena.oversubscription import available_cpus
from arena.referee.clock import TimeControl
from arena.sandbox import ISOLATION_MODES, Limits, LimitsError
from arena.tournaments.checks import (
    Checker,
    ConfigError,
    GameEntry,
    read_games,
    read_openings,
    read_time_control,
    replace_clock,
    show,
)
from arena.tournaments.formats import FORMATS, bot_keys
from arena.tournaments.knockout import MAX_MATCH_PAIRS, Rules
from arena.tournaments.sprt import SprtError, SprtParams
from protocol.messages import SEED_MAX

_TOP_KEYS = (
    "name",
    "seed",
    "rounds",
    "concurrency",
    "oversubscribe",
    "pin_cores",
    "isolation",
    "results",
    "max_attempts",
    "bots",
    "games",
    "time_control",
    "clock",
    "openings",
    "format",
    "sprt",
    "limits",
    "reuse",
    "database",
    "knockout",
)
#: a bot table's keys; the formats' flags (`challenger`) come from arena/tournaments/formats.py
_BOT_KEYS = ("path", "command", "name", *bot_keys(), "time_control", "args", "env", "options")
_SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model")
_KNOCKOUT_KEYS = ("pairs", "extra_pairs")


#: bounds that keep a typo from building a schedule of billions of games
MAX_ROUNDS = 10_000


@dataclass(frozen=True)
class BotEntry:
    """One participant as written in the config; resolved to a BotSpec by the runner.

    `source` is what `load_bot` receives: an absolute manifest path/directory, or a plain
    command line when the config used the `command` form. `alias` overrides the manifest's name
    (needed when two entries share a manifest name, e.g. one bot with two settings).

    The per-entry settings let one manifest serve several configurations: `time_control`
    replaces the tournament's for this bot's seat (time odds), `args` are appended to its
    command, `env` is added to its environment, `options` reach the bot in `hello.bot_options`.
    `challenger` marks the bots a gauntlet tests against the others.
    """

    source: str
    alias: str | None = None
    is_command: bool = False
    challenger: bool = False
    time_control: TimeControl | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def settings(self) -> dict[str, Any]:
        """The per-bot settings a game's conditions depend on (part of the identity)."""
        return {
            "time_control": self.time_control.to_dict() if self.time_control else None,
            "args": list(self.args),
            "env": dict(self.env),
            "options": dict(self.options),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "alias": self.alias,
            "is_command": self.is_command,
            "challenger": self.challenger,
            **self.settings(),
        }


@dataclass(frozen=True)
class TournamentConfig:
    """A validated tournament config. `path` is None for configs built in code."""

    name: str
    bots: tuple[BotEntry, ...]
    games: tuple[GameEntry, ...]
    time_control: TimeControl
    results: Path
    seed: int = 0
    rounds: int = 1
    concurrency: int = field(default_factory=available_cpus)
    #: run a concurrency above the CPUs available all the same (arena/oversubscription.py)
    oversubscribe: bool = False
    pin_cores: bool = False
    isolation: str | None = None
    max_attempts: int = 3
    opening_turns: int = 2
    #: the most any bot gets (`[limits]`); a manifest can only ask for less
    limits: Limits = field(default_factory=Limits)
    #: how games with an openings file pick theirs: "sequential" or "random" (seeded)
    opening_order: str = "sequential"
    opening_seed: int = 0
    path: Path | None = None
    format: str = "round-robin"
    sprt: SprtParams | None = None
    #: keep the processes of bots that offer sessions between their games (docs/protocol.md)
    reuse: bool = False
    #: a league's PostgreSQL URL: the games are played by its `arena league worker`s
    #: (arena/league/tourjobs.py); not part of the identity (where games run changes nothing)
    database: str | None = None
    #: a knockout's match rules (`[knockout]`: pairs, extra_pairs); used by that format only
    knockout: Rules = field(default_factory=Rules)

    def with_clock(self, clock: str) -> TournamentConfig:
        """The config with every time control charging `clock` (`arena tournament run
        --clock`): the common one and each bot's own."""
        bots = tuple(
            b
            if b.time_control is None
            else dataclasses.replace(b, time_control=replace_clock(b.time_control, clock))
            for b in self.bots
        )
        tc = replace_clock(self.time_control, clock)
        return dataclasses.replace(self, time_control=tc, bots=bots)

    def identity(self, bot_names: list[str]) -> dict[str, Any]:
        """What every game's conditions depend on, by bot name and game label.

        Stored in the results file. A later config may add bots, games and rounds (the games
        played stay valid, only new pairings are scheduled) but not change what is here for a
        bot or game already there: see arena/tournaments/identity.py.
        """
        return {
            "bots": {n: b.settings() for n, b in zip(bot_names, self.bots, strict=True)},
            "games": {g.label: g.settings() for g in self.games},
            "time_control": self.time_control.to_dict(),
            "seed": self.seed,
            "opening_turns": self.opening_turns,
            **(
                {"openings": {"order": self.opening_order, "seed": self.opening_seed}}
                if any(g.openings for g in self.games)
                else {}
            ),
            # a bracket is seeded by the bots' order and cut by its rules: neither may change
            # under recorded games (nor may bots be added: the seeding would change)
            **(
                {
                    "knockout": {
                        "pairs": self.knockout.pairs,
                        "extra_pairs": self.knockout.extra_pairs,
                        "seeds": list(bot_names),
                    }
                }
                if self.format == "knockout"
                else {}
            ),
        }

    def schedule_identity(self, bot_names: list[str]) -> dict[str, Any]:
        """The identity of results files written before pools could grow (their fingerprint).

        Kept so that such a file is still resumed by an unchanged config.
        """
        return {
            "bots": list(bot_names),
            "games": [[g.label, g.name, dict(g.options)] for g in self.games],
            "time_control": self.time_control.to_dict(),
            "seed": self.seed,
            "opening_turns": self.opening_turns,
        }

    def fingerprint(self, bot_names: list[str]) -> str:
        blob = json.dumps(self.schedule_identity(bot_names), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary, stored in the results file so reports work without the config."""
        return {
            "name": self.name,
            "path": str(self.path) if self.path else None,
            "bots": [b.to_dict() for b in self.bots],
            "games": [
                {
                    "name": g.name,
                    "options": dict(g.options),
                    "label": g.label,
                    "openings": g.openings_file,
                }
                for g in self.games
            ],
            "time_control": self.time_control.to_dict(),
            "results": str(self.results),
            "seed": self.seed,
            "rounds": self.rounds,
            "concurrency": self.concurrency,
            "oversubscribe": self.oversubscribe,
            "pin_cores": self.pin_cores,
            "isolation": self.isolation,
            "max_attempts": self.max_attempts,
            "opening_turns": self.opening_turns,
            "opening_order": self.opening_order,
            "opening_seed": self.opening_seed,
            "format": self.format,
            "sprt": self.sprt.to_dict() if self.sprt else None,
            "limits": dataclasses.asdict(self.limits),
            "reuse": self.reuse,
            "knockout": dataclasses.asdict(self.knockout),
        }


def _bot_settings(c: Checker, key: str, t: Mapping[str, Any]) -> dict[str, Any]:
    """The per-entry settings of a bot table (see BotEntry)."""
    out: dict[str, Any] = {}
    for flag in bot_keys():
        if flag in t:
            out[flag] = c.boolean(f"{key}.{flag}", t[flag])
    if "time_control" in t:
        out["time_control"] = read_time_control(c, t["time_control"], f"{key}.time_control")
    if "args" in t:
        args = t["args"]
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise c.fail(f"{key}.args", f"expected a list of strings, got {show(args)}")
        out["args"] = tuple(args)
    if "env" in t:
        env = t["env"]
        if not isinstance(env, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()
        ):
            raise c.fail(f"{key}.env", f"expected a table of strings, got {show(env)}")
        out["env"] = tuple(sorted(env.items()))
    if "options" in t:
        options = t["options"]
        if not isinstance(options, Mapping):
            raise c.fail(f"{key}.options", f"expected a table of bot options, got {show(options)}")
        out["options"] = dict(options)
    return out


def _bots(c: Checker, raw: Any, base_dir: Path) -> tuple[BotEntry, ...]:
    if raw is None:
        raise c.fail("bots", "missing: list at least two bots (manifest paths)")
    if not isinstance(raw, list):
        raise c.fail("bots", f"expected a list of bot manifest paths, got {show(raw)}")
    out: list[BotEntry] = []
    for i, item in enumerate(raw):
        key = f"bots[{i}]"
        alias = None
        settings: dict[str, Any] = {}
        if isinstance(item, str):
            path_text, command = item, None
        elif isinstance(item, Mapping):
            t = c.table(key, item, _BOT_KEYS)
            if ("path" in t) == ("command" in t):
                raise c.fail(key, "give exactly one of 'path' (a manifest) or 'command'")
            path_text = t.get("path")
            command = t.get("command")
            if "name" in t:
                alias = c.string(f"{key}.name", t["name"])
            settings = _bot_settings(c, key, t)
        else:
            raise c.fail(key, f"expected a manifest path or a table, got {show(item)}")
        if command is not None:
            source = c.string(f"{key}.command", command)
            out.append(BotEntry(source, alias, is_command=True, **settings))
            continue
        path_text = c.string(key if isinstance(item, str) else f"{key}.path", path_text)
        p = Path(path_text).expanduser()
        if not p.is_absolute():
            p = base_dir / p
        p = Path(os.path.normpath(p))
        if not (p.is_file() or (p / "bot.toml").is_file()):
            raise c.fail(key, f"no bot manifest at {p} (a bot.toml or a directory holding one)")
        out.append(BotEntry(str(p), alias, **settings))
    if len(out) < 2:
        raise c.fail("bots", f"a tournament needs at least two bots, got {len(out)}")
    aliases = [b.alias for b in out if b.alias]
    dup = {a for a in aliases if aliases.count(a) > 1}
    if dup:
        raise c.fail("bots", f"duplicate bot name {sorted(dup)[0]!r}")
    return tuple(out)


def load_config(
    path: str | os.PathLike[str], *, concurrency: int | None = None
) -> TournamentConfig:
    """Read and validate a tournament config file; `concurrency` overrides the file's value."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"no tournament config at {p}")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: not valid TOML: {e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not a UTF-8 text file") from None
    return config_from_dict(
        data,
        base_dir=p.resolve().parent,
        where=str(p),
        stem=p.stem,
        path=p.resolve(),
        concurrency=concurrency,
    )


def config_from_dict(
    data: Mapping[str, Any],
    *,
    base_dir: Path,
    where: str = "<config>",
    stem: str = "tournament",
    path: Path | None = None,
    concurrency: int | None = None,
) -> TournamentConfig:
    """Validate an already-parsed config (tests and tools build configs this way)."""
    c = Checker(where)
    c.table("", data, _TOP_KEYS)
    name = c.string("name", data.get("name", stem))
    seed = c.integer("seed", data.get("seed", 0), lo=0)
    if seed > SEED_MAX:
        raise c.fail("seed", f"must be at most {SEED_MAX} (2^63-1), got {seed}")
    rounds = c.integer("rounds", data.get("rounds", 1), lo=1, hi=MAX_ROUNDS)
    conc = data.get("concurrency", 0)
    conc = c.integer("concurrency", conc, lo=0) or available_cpus()
    if concurrency is not None:
        # the caller's (the -j flag's) value, checked by the caller: 0 is all cores, as here
        conc = concurrency or available_cpus()
    pin = c.boolean("pin_cores", data.get("pin_cores", False))
    isolation = data.get("isolation")
    if isolation is not None and isolation not in ISOLATION_MODES:
        raise c.fail(
            "isolation", f"expected one of {', '.join(ISOLATION_MODES)}, got {show(isolation)}"
        )
    max_attempts = c.integer("max_attempts", data.get("max_attempts", 3), lo=1, hi=100)
    results_raw = data.get("results", f"results/{stem}.sqlite")
    results = Path(c.string("results", results_raw)).expanduser()
    if not results.is_absolute():
        results = base_dir / results
    opening_turns, opening_order, opening_seed = 2, "sequential", seed
    if "openings" in data:
        o = c.table("openings", data["openings"], ("turns", "order", "seed", "file"))
        opening_turns = c.integer("openings.turns", o.get("turns", 2), lo=0, hi=MAX_TURNS)
        opening_order = o.get("order", "sequential")
        if opening_order not in ("sequential", "random"):
            raise c.fail(
                "openings.order", f"expected sequential or random, got {show(opening_order)}"
            )
        opening_seed = c.integer("openings.seed", o.get("seed", seed))
    games = read_games(c, data.get("games"), base_dir)
    if "openings" in data and "file" in data["openings"]:
        # one file for every game without its own (a config of one game, as `arena sprt`)
        file = c.string("openings.file", data["openings"]["file"])
        games = tuple(g if g.openings else _with_openings(c, g, file, base_dir) for g in games)
    bots = _bots(c, data.get("bots"), base_dir)
    fmt = _format(c, data.get("format", "round-robin"), bots)
    try:
        limits = Limits().with_values(data.get("limits", {}))
    except LimitsError as e:
        raise c.fail(e.key, e.problem) from None
    return TournamentConfig(
        name=name,
        bots=bots,
        games=games,
        time_control=read_time_control(c, data.get("time_control"), clock=data.get("clock")),
        results=Path(os.path.normpath(results)),
        seed=seed,
        rounds=rounds,
        concurrency=conc,
        oversubscribe=c.boolean("oversubscribe", data.get("oversubscribe", False)),
        pin_cores=pin,
        isolation=isolation,
        max_attempts=max_attempts,
        opening_turns=opening_turns,
        limits=limits,
        opening_order=opening_order,
        opening_seed=opening_seed,
        path=path,
        format=fmt,
        sprt=_sprt(c, data.get("sprt"), fmt, bots),
        reuse=c.boolean("reuse", data.get("reuse", False)),
        database=_database(c, data.get("database")),
        knockout=_knockout(c, data, fmt, games, rounds),
    )


def _knockout(
    c: Checker, data: Mapping[str, Any], fmt: str, games: tuple[GameEntry, ...], rounds: int
) -> Rules:
    """The [knockout] table: a match's game pairs and tie-break pairs (knockout.py's Rules)."""
    if fmt != "knockout":
        if "knockout" in data:
            raise c.fail("knockout", 'only a format = "knockout" has a [knockout] table')
        return Rules()
    if len(games) != 1:
        raise c.fail("games", f"a knockout plays one game (one [[games]] entry), got {len(games)}")
    if rounds != 1:
        raise c.fail("rounds", "a knockout has no rounds: raise knockout.pairs for longer matches")
    t = c.table("knockout", data.get("knockout", {}), _KNOCKOUT_KEYS)
    pairs = c.integer("knockout.pairs", t.get("pairs", 1), lo=1, hi=MAX_MATCH_PAIRS)
    extra = c.integer(
        "knockout.extra_pairs", t.get("extra_pairs", 1), lo=0, hi=MAX_MATCH_PAIRS - pairs
    )
    return Rules(pairs, extra)


def _database(c: Checker, value: Any) -> str | None:
    if value is None:
        return None
    url = c.string("database", value)
    if not url.startswith("postgresql"):
        raise c.fail(
            "database", f"expected a PostgreSQL URL (postgresql+psycopg://...), got {show(url)}"
        )
    return url


def _with_openings(c: Checker, g: GameEntry, file: str, base_dir: Path) -> GameEntry:
    path = Path(file).expanduser()
    path = Path(os.path.normpath(path if path.is_absolute() else base_dir / path))
    openings = read_openings(c, "openings.file", path, g.name, dict(g.options))
    return GameEntry(g.name, g.options, g.label, openings, str(path))


def _format(c: Checker, raw: Any, bots: tuple[BotEntry, ...]) -> str:
    if raw not in FORMATS:
        raise c.fail("format", f"expected one of {', '.join(FORMATS)}, got {show(raw)}")
    problem = FORMATS[raw](bots).check()
    if problem:
        raise c.fail(problem[0], problem[1])
    return str(raw)


def _sprt(c: Checker, raw: Any, fmt: str, bots: tuple[BotEntry, ...]) -> SprtParams | None:
    """The [sprt] table: a stopping rule for a test of one bot (see arena/tournaments/sprt.py)."""
    if raw is None:
        return None
    t = c.table("sprt", raw, _SPRT_KEYS)
    kw: dict[str, Any] = {}
    for k in ("elo0", "elo1", "alpha", "beta"):
        if k in t:
            v = t[k]
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise c.fail(f"sprt.{k}", f"expected a number, got {show(v)}")
            kw[k] = float(v)
    if "model" in t:
        kw["model"] = t["model"]
    try:
        params = SprtParams(**kw)
    except SprtError as e:
        raise c.fail("sprt", str(e)) from None
    if FORMATS[fmt](bots).tested_bot() is None:
        raise c.fail(
            "sprt",
            "an SPRT tests one bot: use two bots, or a gauntlet with exactly one challenger",
        )
    return params
