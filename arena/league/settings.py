"""A league's settings: `league.toml` in the league directory, validated into `LeagueSettings`.

The league runs unattended for weeks, so every problem is reported at start as one error naming
the file and the key (arena/tournaments/checks.py, the tournament config's checker). Paths (the
SQLite database, the archive store, unpacked bots) are relative to the league directory, so a
league directory can be moved. The sandbox limits here are a ceiling: a manifest may ask for
less, never for more.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.referee.clock import TimeControl
from arena.sandbox import ISOLATION_MODES, Limits
from arena.sandbox.limits import LimitsError
from arena.tournaments.checks import (
    Checker,
    ConfigError,
    GameEntry,
    read_games,
    read_time_control,
    show,
)

SETTINGS_NAME = "league.toml"
_DEFAULT_TC = TimeControl(base=5.0, increment=0.05)
_DEFAULT_LIMITS = Limits(memory_mb=512, processes=32, open_files=128)

_TOP_KEYS = (
    "name",
    "database",
    "listen",
    "concurrency",
    "oversubscribe",
    "isolation",
    "max_attempts",
    "reuse",
    "opening_turns",
    "games",
    "time_control",
    "clock",
    "limits",
    "matchmaking",
    "ratings",
    "submissions",
    "play",
)
_MATCHMAKING_KEYS = ("placement_games", "window", "wide_window_chance")
_RATINGS_KEYS = ("official_every",)
_PLAY_KEYS = ("clock", "max_base", "max_increment", "max_games", "disconnect_grace")
_SUBMISSION_KEYS = (
    "max_archive_mb",
    "max_unpacked_mb",
    "max_members",
    "per_hour",
    "validation_time_control",
)

#: what `arena league init` writes: every key with its default and why it matters
DEFAULT_TOML = """\
# arena league settings (docs/league.md). Paths are relative to this directory.

name = "{name}"

# SQLite in WAL mode by default (a file here); for PostgreSQL:
# database = "postgresql+psycopg://user:password@host:5432/dbname"
database = "sqlite:///league.sqlite"

# where `arena league serve` listens (HOST:PORT)
listen = "127.0.0.1:8000"

# games played at once (one referee worker process each)
concurrency = 2

# a concurrency above this machine's CPUs is refused (bots waiting for a CPU would lose on time
# they did not use); true runs it anyway, here and on every 'arena league worker'
oversubscribe = false

# how bots are confined: "process" (full confinement when the server runs as root) or "docker"
isolation = "process"

# a game voided by the platform (sandbox fault, lost worker) is replayed up to this many times
max_attempts = 3

# keep the process of a bot that offers sessions (`ready.sessions`, docs/protocol.md) for its
# next game in the same slot instead of starting it per game; any failure ends the process
reuse = false

# random complete turns played before the bots move, so games between two deterministic bots differ
opening_turns = 2

# enabled variants and their options, as in a tournament config (`arena games` lists them)
games = ["papagra", "wrigglers", "stripes", "quadraphages", "hexaphage"]

# the clock of every rated game: BASE+INCREMENT seconds, or a table (startup, base, increment,
# move_time, margin, clock, wall_cap; with a move_time and no base also bank, a time bank per
# game, and first_move, the time of each bot's first turn: docs/league.md)
time_control = "5+0.05"
# what a reply is charged: "wall" (its wall time less the host's share) or "cpu" (the CPU time
# the bot used, its wall time capped at wall_cap = 3 deadlines); docs/league.md says which to pick
clock = "wall"

# the ceiling for every bot: a manifest may ask for less, never for more
[limits]
memory_mb = 512
processes = 32
file_size_mb = 16
open_files = 128
stderr_bytes = 65536
# CPUs a bot's processes and threads may use together (a fraction is fine): its cap
cpus = 1.0

[matchmaking]
# games a new version plays first in each variant (placement), before normal matchmaking
placement_games = 10
# the opponent is drawn among this many bots nearest in rating...
window = 4
# ...except with this probability, when it is drawn among all bots
wide_window_chance = 0.1

[ratings]
# seconds between refits of the official Bradley-Terry table (95% intervals)
official_every = 300

[submissions]
max_archive_mb = 10
max_unpacked_mb = 50
max_members = 2000
# submissions per account and hour
per_hour = 20
# the clock of the validation games against the bundled random bot
validation_time_control = "5+0.05"

[play]
# a person against a bot in the browser (the /play page): the person's clock. The bot keeps the
# league's time_control; the person picks BASE+INCREMENT in the form, this one by default...
clock = "300+5"
# ...and at most this long (seconds)
max_base = 1800
max_increment = 60
# games against people in play at once on this server (their bots run here)
max_games = 4
# seconds a game waits, on the person's turn, for a browser that lost its connection
disconnect_grace = 60
"""


@dataclass(frozen=True)
class Matchmaking:
    placement_games: int = 10
    window: int = 4
    wide_window_chance: float = 0.1


@dataclass(frozen=True)
class Submissions:
    max_archive_mb: int = 10
    max_unpacked_mb: int = 50
    max_members: int = 2000
    per_hour: int = 20
    validation_time_control: TimeControl = field(default_factory=lambda: _DEFAULT_TC)


@dataclass(frozen=True)
class Play:
    """Games of a person against a bot (arena/league/challenges.py): the person's clock and
    its bounds, how many such games at once, how long a lost connection is waited for."""

    clock: TimeControl = field(default_factory=lambda: TimeControl(base=300.0, increment=5.0))
    max_base: float = 1800.0
    max_increment: float = 60.0
    max_games: int = 4
    disconnect_grace: float = 60.0


@dataclass(frozen=True)
class LeagueSettings:
    """A validated league. `root` is the league directory; everything else derives from it."""

    root: Path
    name: str = "league"
    database: str = "sqlite:///league.sqlite"
    host: str = "127.0.0.1"
    port: int = 8000
    concurrency: int = 2
    #: play a concurrency above the CPUs available all the same (arena/oversubscription.py),
    #: here and on the workers, who read it from the database
    oversubscribe: bool = False
    isolation: str = "process"
    max_attempts: int = 3
    #: bot sessions (docs/protocol.md): a slot keeps a bot's process for its next game
    reuse: bool = False
    opening_turns: int = 2
    games: tuple[GameEntry, ...] = ()
    time_control: TimeControl = field(default_factory=lambda: _DEFAULT_TC)
    limits: Limits = field(default_factory=lambda: _DEFAULT_LIMITS)
    matchmaking: Matchmaking = field(default_factory=Matchmaking)
    official_every: float = 300.0
    submissions: Submissions = field(default_factory=Submissions)
    play: Play = field(default_factory=Play)

    @property
    def database_url(self) -> str:
        """The SQLAlchemy URL, a relative SQLite path resolved against the league directory."""
        prefix = "sqlite:///"
        if self.database.startswith(prefix):
            rest = self.database[len(prefix) :]
            if rest and rest != ":memory:" and not rest.startswith("/"):
                return prefix + str(self.root / rest)
        return self.database

    @property
    def archives_dir(self) -> Path:
        """The content-addressed store of submitted archives (sha256 names)."""
        return self.root / "archives"

    @property
    def bots_dir(self) -> Path:
        """Unpacked and built versions, one directory per version id."""
        return self.root / "bots"

    def game(self, label: str) -> GameEntry:
        for g in self.games:
            if g.label == label:
                return g
        raise KeyError(label)


def load_settings(directory: str | os.PathLike[str]) -> LeagueSettings:
    """Read and validate DIR/league.toml."""
    root = Path(directory).expanduser().resolve()
    path = root / SETTINGS_NAME
    if not path.is_file():
        raise ConfigError(
            f"no league at {root} (no {SETTINGS_NAME}; create one with 'arena league init')"
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a UTF-8 text file") from None
    return settings_from_dict(data, root=root, where=str(path))


def settings_from_dict(
    data: Mapping[str, Any], *, root: Path, where: str = "<league settings>"
) -> LeagueSettings:
    """Validate already-parsed settings (tests build leagues this way)."""
    c = Checker(where)
    c.table("", data, _TOP_KEYS)
    database = c.string("database", data.get("database", "sqlite:///league.sqlite"))
    if not database.startswith(("sqlite:///", "postgresql")):
        raise c.fail(
            "database",
            f"expected sqlite:///FILE or postgresql+psycopg://..., got {database!r}",
        )
    host, port = _listen(c, data.get("listen", "127.0.0.1:8000"))
    isolation = data.get("isolation", "process")
    if isolation not in ISOLATION_MODES:
        raise c.fail(
            "isolation", f"expected one of {', '.join(ISOLATION_MODES)}, got {show(isolation)}"
        )
    tc = data.get("time_control", "5+0.05")
    official = c.number(
        "ratings.official_every",
        _sub(c, data, "ratings", _RATINGS_KEYS).get("official_every", 300),
        positive=True,
    )
    return LeagueSettings(
        root=root,
        name=c.string("name", data.get("name", root.name or "league")),
        database=database,
        host=host,
        port=port,
        concurrency=c.integer("concurrency", data.get("concurrency", 2), lo=1),
        oversubscribe=c.boolean("oversubscribe", data.get("oversubscribe", False)),
        isolation=isolation,
        max_attempts=c.integer("max_attempts", data.get("max_attempts", 3), lo=1),
        reuse=c.boolean("reuse", data.get("reuse", False)),
        opening_turns=c.integer("opening_turns", data.get("opening_turns", 2), lo=0),
        games=read_games(c, data.get("games"), root),
        time_control=read_time_control(c, tc, clock=data.get("clock")),
        limits=_limits(c, data.get("limits", {})),
        matchmaking=_matchmaking(c, _sub(c, data, "matchmaking", _MATCHMAKING_KEYS)),
        official_every=official,
        submissions=_submissions(c, _sub(c, data, "submissions", _SUBMISSION_KEYS)),
        play=_play(c, _sub(c, data, "play", _PLAY_KEYS)),
    )


def _sub(c: Checker, data: Mapping[str, Any], key: str, keys: tuple[str, ...]) -> Mapping:
    return c.table(key, data.get(key, {}), keys)


def _listen(c: Checker, raw: Any) -> tuple[str, int]:
    text = c.string("listen", raw)
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise c.fail("listen", f"expected HOST:PORT like 127.0.0.1:8000, got {text!r}")
    return host.strip("[]"), int(port)


def _limits(c: Checker, raw: Any) -> Limits:
    try:
        return _DEFAULT_LIMITS.with_values(raw)
    except LimitsError as e:
        raise c.fail(e.key, e.problem) from None


def _matchmaking(c: Checker, t: Mapping[str, Any]) -> Matchmaking:
    chance = c.number("matchmaking.wide_window_chance", t.get("wide_window_chance", 0.1))
    if chance > 1:
        raise c.fail("matchmaking.wide_window_chance", f"must be at most 1, got {chance}")
    return Matchmaking(
        placement_games=c.integer(
            "matchmaking.placement_games", t.get("placement_games", 10), lo=0
        ),
        window=c.integer("matchmaking.window", t.get("window", 4), lo=1),
        wide_window_chance=chance,
    )


def _submissions(c: Checker, t: Mapping[str, Any]) -> Submissions:
    d = Submissions()
    tc = t.get("validation_time_control")
    return Submissions(
        max_archive_mb=c.integer(
            "submissions.max_archive_mb", t.get("max_archive_mb", d.max_archive_mb), lo=1
        ),
        max_unpacked_mb=c.integer(
            "submissions.max_unpacked_mb", t.get("max_unpacked_mb", d.max_unpacked_mb), lo=1
        ),
        max_members=c.integer("submissions.max_members", t.get("max_members", d.max_members), lo=1),
        per_hour=c.integer("submissions.per_hour", t.get("per_hour", d.per_hour), lo=1),
        validation_time_control=(
            d.validation_time_control
            if tc is None
            else read_time_control(
                Checker(f"{c.where}: [submissions]"), tc, "validation_time_control"
            )
        ),
    )


def _play(c: Checker, t: Mapping[str, Any]) -> Play:
    d = Play()
    play = Play(
        max_base=c.number("play.max_base", t.get("max_base", d.max_base), positive=True),
        max_increment=c.number("play.max_increment", t.get("max_increment", d.max_increment)),
        max_games=c.integer("play.max_games", t.get("max_games", d.max_games), lo=0),
        disconnect_grace=c.number(
            "play.disconnect_grace", t.get("disconnect_grace", d.disconnect_grace), positive=True
        ),
    )
    tc = t.get("clock")
    if tc is not None:
        tc = read_time_control(Checker(f"{c.where}: [play]"), tc, "clock")
        problem = play_clock_problem(play, tc)
        if problem:
            raise c.fail("play.clock", problem)
        play = dataclasses.replace(play, clock=tc)
    return play


def play_clock_problem(play: Play, tc: TimeControl) -> str | None:
    """Why a person may not play with this clock in this league, or None."""
    if tc.base is None:
        return "a person's clock needs a base time (BASE+INCREMENT)"
    if tc.base > play.max_base:
        return f"base {tc.base:g} s is longer than this league allows ({play.max_base:g} s)"
    if tc.increment > play.max_increment:
        return (
            f"increment {tc.increment:g} s is longer than this league allows "
            f"({play.max_increment:g} s)"
        )
    return None


def write_default(directory: Path, name: str) -> Path:
    """Write a commented league.toml with every default; refuse to overwrite one."""
    path = directory / SETTINGS_NAME
    if path.exists():
        raise ConfigError(f"{path} exists already; this directory holds a league")
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_private(path, DEFAULT_TOML.format(name=name))
    return path


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner may read (0600 from its creation, whatever the umask):
    league.toml may hold the database's password."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(text)
