"""The league's database: one MetaData, every Table, and the queries as typed functions.

Every function takes a SQLAlchemy `Connection` inside a transaction the caller opened (see
`Database`), so a service call composes several of them atomically; blocking, they run in a
worker thread (`trio.to_thread.run_sync`). The same schema runs on SQLite (WAL, the default) and
PostgreSQL; migrations live in arena/league/migrations (Alembic), `create_all` is for tests.

Exactly-once recording. A game row is the job: the scheduler claims it (`claim_game`, state
queued -> running, attempt + 1), an executor plays it, and the result is written by
`record_result` with a conditional UPDATE on (game id, attempt, state running) in the same
transaction as the record, the seats' outcomes and the rating update. Zero rows updated means
the attempt is stale (the game was voided and reclaimed, or already recorded): the result is
dropped and nothing changes. A platform fault (`void_attempt`) is conditional the same way and
puts the game back in the queue, unrated, until `max_attempts`. A server killed mid-game leaves
rows `running`; `void_running` at the next start requeues them. So every game is recorded at
most once, and every claimed game is eventually recorded or marked failed.

The games and seats tables are not league-specific: a game names its variant, options, seed,
opening and clock and its two seated versions, so a tournament's schedule fits the same rows
(`schedule_key` holds a tournament game id, unique, for idempotent inserts).
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    event,
)
from sqlalchemy.engine import Connection, Engine

from arena.league.privacy import neutral_paths, public_detail, public_manifest
from arena.league.ratings import MU0, SIGMA0, Skill, rate
from arena.referee.record import FORFEIT_REASONS, now_iso


class GameState(StrEnum):
    """Where a game (a job) is: queued -> running -> finished, or failed after max attempts."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


class VoidKind(StrEnum):
    """Why the platform voided an attempt (never rated, replayed)."""

    SANDBOX_FAULT = "sandbox_fault"
    REFEREE_FAULT = "referee_fault"
    WORKER_LOST = "worker_lost"
    INTERNAL_ERROR = "internal_error"
    SERVER_STOPPED = "server_stopped"
    ARCHIVE_FAULT = "archive_fault"  # a worker could not fetch or verify a bot's archive
    #: the referee voided the game: the host, not a bot, made a reply late (`HostStall`,
    #: docs/protocol.md); counted against the worker that played it (arena/league/fleet.py)
    HOST_STALL = "host_stall"


#: the fault class a referee worker names at the start of a void's reason, by void kind; a
#: `HostStall` is a `RefereeFault`, named by its own class
_FAULT_KINDS = (
    ("HostStall", VoidKind.HOST_STALL),
    ("SandboxFault", VoidKind.SANDBOX_FAULT),
    ("RefereeFault", VoidKind.REFEREE_FAULT),
)


def void_kind_of(reason: str) -> VoidKind:
    """The void kind of a referee worker's void reason (`f"{type(e).__name__}: {e}"`)."""
    for prefix, kind in _FAULT_KINDS:
        if reason.startswith(prefix):
            return kind
    return VoidKind.INTERNAL_ERROR


#: the void kinds in words, for the pages (as arena.referee.record.REASON_WORDS for results)
VOID_WORDS: dict[str, str] = {
    VoidKind.SANDBOX_FAULT: "the sandbox failed",
    VoidKind.REFEREE_FAULT: "the referee failed",
    VoidKind.WORKER_LOST: "its worker was lost",
    VoidKind.INTERNAL_ERROR: "internal error",
    VoidKind.SERVER_STOPPED: "the server stopped",
    VoidKind.ARCHIVE_FAULT: "a bot's archive could not be fetched",
}


class VersionState(StrEnum):
    """A submitted version: validating -> active (plays rated games) or failed; retired when a
    newer version of its bot becomes active or its owner retires the bot; disabled by an
    admin."""

    VALIDATING = "validating"
    ACTIVE = "active"
    FAILED = "failed"
    RETIRED = "retired"
    DISABLED = "disabled"
    #: the seat of a person (`human_version`): never validated, rated or matched
    HUMAN = "human"


#: a version's state as the pages and the API say it (`League.version_state`): `validating`
#: is split into `queued` (waiting) and `validating` (now), `failed` reads `rejected`
SHOWN_VERSION_STATES = (
    "queued",
    "validating",
    "active",
    "rejected",
    "retired",
    "disabled",
    "human",
)


class GameKind(StrEnum):
    RATED = "rated"
    UNRATED = "unrated"
    TOURNAMENT = "tournament"
    #: a person against a bot (arena/league/challenges.py): played by the server itself, never
    #: queued, rated or replayed; a challenge the platform voids has failed for good
    CHALLENGE = "challenge"


metadata = MetaData()

users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("is_admin", Boolean, nullable=False, default=False),
    Column("disabled", Boolean, nullable=False, default=False),
    Column("created_at", String(32), nullable=False),
    #: bumped to end every login session of the account (web/auth.py): logout, a new token,
    #: disabling
    Column("session_epoch", Integer, nullable=False, default=0, server_default="0"),
)

bots = Table(
    "bots",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("owner_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("disabled", Boolean, nullable=False, default=False),
    Column("created_at", String(32), nullable=False),
    # who disabled it: "owner" (retired from its page; the owner may reactivate it) or "admin"
    Column("disabled_by", String(16)),
)

versions = Table(
    "versions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("bot_id", Integer, ForeignKey("bots.id"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("state", String(16), nullable=False),
    Column("archive_sha256", String(64), nullable=False),
    Column("path", Text, nullable=False),  # the unpacked, built bot directory
    Column("manifest", Text, nullable=False),  # JSON: name, version, author, language, limits
    Column("validation", Text),  # JSON report, NULL while validating
    Column("created_at", String(32), nullable=False),
    Column("activated_at", String(32)),
    UniqueConstraint("bot_id", "number"),
    Index("ix_versions_state", "state"),
)

ratings = Table(
    "ratings",
    metadata,
    Column("version_id", Integer, ForeignKey("versions.id"), primary_key=True),
    Column("variant", String(32), primary_key=True),  # a game label of league.toml
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("score", Float, nullable=False),  # mu - 3 sigma, the leaderboard order
    Column("games", Integer, nullable=False, default=0),
    Column("wins", Integer, nullable=False, default=0),
    Column("draws", Integer, nullable=False, default=0),
    Column("losses", Integer, nullable=False, default=0),
    Column("forfeits", Integer, nullable=False, default=0),
    Column("last_game_at", String(32)),
    Index("ix_ratings_variant_score", "variant", "score"),
)

games = Table(
    "games",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("kind", String(16), nullable=False),
    Column("schedule_key", String(128), unique=True),
    Column("variant", String(32), nullable=False),  # the game label
    Column("game_name", String(32), nullable=False),  # the engine (papagra, ...)
    Column("options", Text, nullable=False),  # JSON
    Column("seed", BigInteger, nullable=False),
    Column("opening", Text, nullable=False),  # JSON list of turns
    Column("time_control", Text, nullable=False),  # JSON
    Column("version0", Integer, ForeignKey("versions.id"), nullable=False),
    Column("version1", Integer, ForeignKey("versions.id"), nullable=False),
    Column("state", String(16), nullable=False),
    Column("attempt", Integer, nullable=False, default=0),
    Column("priority", Integer, nullable=False, default=0),
    Column("created_at", String(32), nullable=False),
    Column("claimed_at", String(32)),
    Column("finished_at", String(32)),
    Column("winner", Integer),  # seat; NULL for a draw
    Column("result", String(8)),
    Column("reason", String(64)),
    Column("detail", Text),
    Column("forfeit", Boolean),
    Column("loser_seat", Integer),
    Column("score0", Integer),
    Column("score1", Integer),
    Column("turns", Integer),
    Column("duration", Float),
    Column("rated", Boolean),
    # a voided game waits in the queue until then (arena/league/backoff.py); NULL: at once
    Column("not_before", String(32)),
    Index("ix_games_state_priority", "state", "priority", "id"),
    Index("ix_games_variant_id", "variant", "id"),
    # the API's games list, newest first by finish time (migration 0006)
    Index("ix_games_finished_at", "finished_at", "id"),
)

seats = Table(
    "seats",
    metadata,
    Column("game_id", Integer, ForeignKey("games.id"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("version_id", Integer, ForeignKey("versions.id"), nullable=False),
    Column("bot_id", Integer, ForeignKey("bots.id"), nullable=False),
    Column("variant", String(32), nullable=False),
    Column("outcome", String(8)),  # win, draw, loss, forfeit; NULL until finished
    # the version's rating in this variant before and after a rated game (`_rate`): the pages'
    # rating history; NULL for unrated games
    Column("mu_before", Float),
    Column("sigma_before", Float),
    Column("mu_after", Float),
    Column("sigma_after", Float),
    Index("ix_seats_bot_game", "bot_id", "game_id"),
    Index("ix_seats_version_game", "version_id", "game_id"),
    Index("ix_seats_version_variant_game", "version_id", "variant", "game_id"),
    Index(
        "ix_seats_forfeits",
        "version_id",
        "variant",
        sqlite_where=sa.text("outcome = 'forfeit'"),
        postgresql_where=sa.text("outcome = 'forfeit'"),
    ),
)

records = Table(
    "records",
    metadata,
    Column("game_id", Integer, ForeignKey("games.id"), primary_key=True),
    Column("data", LargeBinary, nullable=False),  # zlib-compressed arena-record/1 JSON
)

voids = Table(
    "voids",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("game_id", Integer, ForeignKey("games.id"), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("reason", Text, nullable=False),
    Column("at", String(32), nullable=False),
    Index("ix_voids_game", "game_id"),
)

# The worker fleet (`arena league worker`, arena/league/fleet.py). A worker's heartbeat is the
# database's clock, so liveness never depends on the workers' clocks agreeing.
workers = Table(
    "workers",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(128), nullable=False, unique=True),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("concurrency", Integer, nullable=False),
    Column("state", String(16), nullable=False),  # running or stopped (lost: heartbeat too old)
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("heartbeat_at", DateTime(timezone=True), nullable=False),
    Column("played", Integer, nullable=False, default=0),
    Column("voided", Integer, nullable=False, default=0),
    Column("stale", Integer, nullable=False, default=0),
    Column("last_failure", Text),
    Column("last_failure_at", String(32)),
    #: games voided as host stalls (`VoidKind.HOST_STALL`), in all
    Column("stalls", Integer, nullable=False, default=0, server_default="0"),
    #: its last games, oldest first: `s` a host stall, `.` any other end (fleet.RECENT kept)
    Column("recent", String(64), nullable=False, default="", server_default=""),
)

# One row per attempt a worker claimed: what each worker is playing, and how each attempt ended
# (recorded, stale, voided, lost).
attempts = Table(
    "attempts",
    metadata,
    Column("game_id", Integer, ForeignKey("games.id"), primary_key=True),
    Column("attempt", Integer, primary_key=True),
    Column("worker", String(128), nullable=False),
    Column("started_at", String(32), nullable=False),
    Column("ended_at", String(32)),
    Column("outcome", String(16)),
    Index("ix_attempts_worker", "worker", "ended_at"),
)

# Small facts the server publishes to its workers through the database (its URL, the secret
# that lets a worker download bot archives).
meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

# Local tournaments played by the league's workers (`arena tournament run --database`,
# arena/tournaments/remote.py): the bots' archives by content hash, and each attempt's outcome,
# inserted once per (run, game, attempt) whatever the number of workers that played it.
tournament_blobs = Table(
    "tournament_blobs",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("data", LargeBinary, nullable=False),
)

tournament_results = Table(
    "tournament_results",
    metadata,
    Column("run", String(64), primary_key=True),
    Column("game_id", String(255), primary_key=True),
    Column("attempt", Integer, primary_key=True),
    Column("kind", String(8), nullable=False),  # record or void
    Column("payload", LargeBinary, nullable=False),  # zlib-compressed JSON: record or reason
    Column("worker", String(128), nullable=False),
    Column("at", String(32), nullable=False),
)

official = Table(
    "official_ratings",
    metadata,
    Column("variant", String(32), primary_key=True),
    Column("version_id", Integer, ForeignKey("versions.id"), primary_key=True),
    Column("elo", Float),
    Column("ci95", Float),
    Column("games", Integer, nullable=False),
    Column("points", Float, nullable=False),
    Column("computed_at", String(32), nullable=False),
)


tallies = Table(
    "tallies",
    metadata,
    # running totals kept in the transactions that change them, so that reading a total is one
    # row, not a count over a million games (`finished`: games recorded)
    Column("name", String(32), primary_key=True),
    Column("value", BigInteger, nullable=False),
)


class StoreError(Exception):
    """A database the league cannot use; raised as LeagueError by the callers that face users."""


# --- the database ----------------------------------------------------------------------------


class Database:
    """An Engine with the league's transaction discipline.

    SQLite: WAL so readers never block the writer; writes start with BEGIN IMMEDIATE so two
    writers never deadlock upgrading a read lock; a 30 s busy timeout. PostgreSQL: READ
    COMMITTED with explicit row locks (`FOR UPDATE`) where a read feeds a write (ratings).
    """

    def __init__(self, url: str, *, pool_size: int = 8) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            self.engine: Engine = sa.create_engine(
                url, connect_args={"check_same_thread": False, "timeout": 30.0}
            )
            event.listen(self.engine, "connect", _sqlite_connect)
            event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self.engine = sa.create_engine(
                url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True
            )

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            conn = conn.execution_options(arena_write=True)
            with conn.begin():
                yield conn

    def dispose(self) -> None:
        self.engine.dispose()


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # SQLAlchemy's begin event emits BEGIN itself
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_begin(conn: Connection) -> None:
    immediate = conn.get_execution_options().get("arena_write")
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


# --- users -----------------------------------------------------------------------------------


def hash_token(token: str) -> str:
    """Tokens are random 256-bit strings, so one unsalted sha256 is enough to store them."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class User:
    id: int
    name: str
    is_admin: bool
    disabled: bool
    #: the account's login sessions carry this; bumping it ends them all
    session_epoch: int = 0


def add_user(conn: Connection, name: str, token: str, *, is_admin: bool = False) -> User:
    uid = conn.execute(
        users.insert().values(
            name=name,
            token_hash=hash_token(token),
            is_admin=is_admin,
            disabled=False,
            created_at=now_iso(),
        )
    ).inserted_primary_key[0]
    return User(uid, name, is_admin, False)


def user_by_name(conn: Connection, name: str) -> User | None:
    row = conn.execute(sa.select(users).where(users.c.name == name)).first()
    return None if row is None else _user(row)


def user_by_id(conn: Connection, user_id: int) -> User | None:
    row = conn.execute(sa.select(users).where(users.c.id == user_id)).first()
    return None if row is None else _user(row)


def user_by_token(conn: Connection, token: str) -> User | None:
    row = conn.execute(sa.select(users).where(users.c.token_hash == hash_token(token))).first()
    return None if row is None else _user(row)


def _user(row: Any) -> User:
    return User(row.id, row.name, row.is_admin, row.disabled, row.session_epoch)


def set_user_disabled(conn: Connection, user_id: int, disabled: bool) -> bool:
    """Disable (or enable) an account; disabling also ends all its login sessions."""
    values: dict[str, Any] = {"disabled": disabled}
    if disabled:
        values["session_epoch"] = users.c.session_epoch + 1
    return conn.execute(users.update().where(users.c.id == user_id).values(**values)).rowcount == 1


def end_sessions(conn: Connection, user_id: int) -> None:
    """End every login session of the account (its cookies carry the old epoch)."""
    conn.execute(
        users.update().where(users.c.id == user_id).values(session_epoch=users.c.session_epoch + 1)
    )


def set_token(conn: Connection, user_id: int, token: str) -> None:
    """Replace the account's API token (only its hash is kept) and end its login sessions:
    a session was opened with the old token."""
    conn.execute(
        users.update()
        .where(users.c.id == user_id)
        .values(token_hash=hash_token(token), session_epoch=users.c.session_epoch + 1)
    )


# --- bots and versions -----------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    id: int
    bot_id: int
    bot: str
    owner_id: int
    number: int
    state: str
    path: str
    archive_sha256: str
    manifest: dict[str, Any]
    validation: dict[str, Any] | None
    created_at: str
    activated_at: str | None


def _version(row: Any) -> Version:
    return Version(
        id=row.id,
        bot_id=row.bot_id,
        bot=row.bot,
        owner_id=row.owner_id,
        number=row.number,
        state=row.state,
        path=row.path,
        archive_sha256=row.archive_sha256,
        manifest=json.loads(row.manifest),
        validation=None if row.validation is None else json.loads(row.validation),
        created_at=row.created_at,
        activated_at=row.activated_at,
    )


_VERSION_COLUMNS = (
    versions,
    bots.c.name.label("bot"),
    bots.c.owner_id,
)


#: the names of people's seats (`human_version`); bot names cannot start with it
HUMAN_PREFIX = "@"


def human_version(conn: Connection, user: User) -> int:
    """The version row that stands for a person in the games they play against bots.

    The games and seats tables hold versions, so a person gets a bot of their own, named
    "@" + their name (a character no bot name may use), with one version in state `human`:
    their games then list, link and filter like any other, while the state keeps the seat out
    of validation, matchmaking, ratings and the leaderboard, and the prefix out of the bot list.
    """
    name = HUMAN_PREFIX + user.name if len(user.name) < 64 else f"{HUMAN_PREFIX}user-{user.id}"
    bot = bot_by_name(conn, name)
    if bot is None:
        bot_id = conn.execute(
            bots.insert().values(name=name, owner_id=user.id, disabled=False, created_at=now_iso())
        ).inserted_primary_key[0]
    else:
        bot_id = bot.id
    vid = conn.execute(
        sa.select(versions.c.id).where(
            versions.c.bot_id == bot_id, versions.c.state == VersionState.HUMAN
        )
    ).scalar()
    if vid is not None:
        return int(vid)
    number = 1 + (
        conn.execute(
            sa.select(sa.func.max(versions.c.number)).where(versions.c.bot_id == bot_id)
        ).scalar()
        or 0
    )
    manifest = {"name": name, "league_name": name, "kind": "human", "author": user.name}
    return int(
        conn.execute(
            versions.insert().values(
                bot_id=bot_id,
                number=number,
                state=VersionState.HUMAN,
                archive_sha256="",
                path="",
                manifest=json.dumps(manifest, sort_keys=True),
                created_at=now_iso(),
            )
        ).inserted_primary_key[0]
    )


def active_bots(conn: Connection) -> list[dict[str, Any]]:
    """The bots a person can challenge: each enabled bot's active version, by name."""
    rows = conn.execute(
        sa.select(bots.c.name, versions.c.number, versions.c.id)
        .join(versions, versions.c.bot_id == bots.c.id)
        .where(versions.c.state == VersionState.ACTIVE, bots.c.disabled.is_(False))
        .order_by(bots.c.name)
    )
    return [{"bot": r.name, "version": r.number, "version_id": r.id} for r in rows]


def fail_challenges(conn: Connection, reason: str) -> int:
    """Challenges left running by a server that stopped: failed (the person is gone)."""
    rows = conn.execute(
        sa.select(games.c.id, games.c.attempt).where(
            games.c.state == GameState.RUNNING, games.c.kind == GameKind.CHALLENGE
        )
    ).all()
    return sum(void_attempt(conn, g, a, VoidKind.SERVER_STOPPED, reason, 1) for g, a in rows)


def bot_by_name(conn: Connection, name: str) -> Any | None:
    return conn.execute(sa.select(bots).where(bots.c.name == name)).first()


def add_version(
    conn: Connection,
    *,
    owner_id: int,
    bot_name: str,
    archive_sha256: str,
    path: str,
    manifest: dict[str, Any],
) -> Version:
    """A new version (state validating) of the owner's bot, creating the bot if it is new.

    The caller checks ownership first (`bot_by_name`); the unique bot name makes a race between
    two users creating the same bot fail for one of them instead of sharing it.
    """
    bot = bot_by_name(conn, bot_name)
    if bot is None:
        bot_id = conn.execute(
            bots.insert().values(
                name=bot_name, owner_id=owner_id, disabled=False, created_at=now_iso()
            )
        ).inserted_primary_key[0]
        number = 1
    else:
        bot_id = bot.id
        number = 1 + (
            conn.execute(
                sa.select(sa.func.max(versions.c.number)).where(versions.c.bot_id == bot_id)
            ).scalar()
            or 0
        )
    vid = conn.execute(
        versions.insert().values(
            bot_id=bot_id,
            number=number,
            state=VersionState.VALIDATING,
            archive_sha256=archive_sha256,
            path=path,
            manifest=json.dumps(manifest, sort_keys=True),
            created_at=now_iso(),
        )
    ).inserted_primary_key[0]
    v = version(conn, vid)
    assert v is not None
    return v


def archive_in_use(conn: Connection, sha: str) -> bool:
    """Whether a version was made from the archive of this sha256 (one archive may serve
    several versions: the same upload twice)."""
    row = conn.execute(sa.select(versions.c.id).where(versions.c.archive_sha256 == sha).limit(1))
    return row.first() is not None


def set_version_path(conn: Connection, version_id: int, path: str) -> None:
    conn.execute(versions.update().where(versions.c.id == version_id).values(path=path))


def version(conn: Connection, version_id: int) -> Version | None:
    row = conn.execute(
        sa.select(*_VERSION_COLUMNS)
        .join(bots, bots.c.id == versions.c.bot_id)
        .where(versions.c.id == version_id)
    ).first()
    return None if row is None else _version(row)


def bot_versions(conn: Connection, bot_id: int) -> list[Version]:
    rows = conn.execute(
        sa.select(*_VERSION_COLUMNS)
        .join(bots, bots.c.id == versions.c.bot_id)
        .where(versions.c.bot_id == bot_id)
        .order_by(versions.c.number.desc())
    )
    return [_version(r) for r in rows]


def versions_in_state(conn: Connection, state: VersionState) -> list[Version]:
    rows = conn.execute(
        sa.select(*_VERSION_COLUMNS)
        .join(bots, bots.c.id == versions.c.bot_id)
        .where(versions.c.state == state)
        .order_by(versions.c.id)
    )
    return [_version(r) for r in rows]


def finish_validation(
    conn: Connection,
    version_id: int,
    report: dict[str, Any],
    passed: bool,
    variants: Sequence[str],
) -> bool:
    """Store a validation report; a passing version becomes active and retires its predecessor.

    The new version starts at its bot's last active mu in each variant with a fresh sigma.
    Conditional on the version still validating: a disabled version stays disabled.
    """
    new_state = VersionState.ACTIVE if passed else VersionState.FAILED
    done = conn.execute(
        versions.update()
        .where(versions.c.id == version_id, versions.c.state == VersionState.VALIDATING)
        .values(
            state=new_state,
            validation=json.dumps(report, sort_keys=True),
            activated_at=now_iso() if passed else None,
        )
    ).rowcount
    if not done or not passed:
        return bool(done)
    bot_id = conn.execute(
        sa.select(versions.c.bot_id).where(versions.c.id == version_id)
    ).scalar_one()
    previous = (
        conn.execute(
            sa.select(versions.c.id).where(
                versions.c.bot_id == bot_id,
                versions.c.id != version_id,
                versions.c.state == VersionState.ACTIVE,
            )
        )
        .scalars()
        .all()
    )
    inherited: dict[str, float] = {}
    if previous:
        for variant, mu in conn.execute(
            sa.select(ratings.c.variant, ratings.c.mu).where(ratings.c.version_id == max(previous))
        ):
            inherited[variant] = mu
        conn.execute(
            versions.update().where(versions.c.id.in_(previous)).values(state=VersionState.RETIRED)
        )
    for variant in variants:
        ensure_rating(conn, version_id, variant, mu=inherited.get(variant, MU0))
    return True


def set_version_state(conn: Connection, version_id: int, state: VersionState) -> bool:
    return (
        conn.execute(
            versions.update().where(versions.c.id == version_id).values(state=state)
        ).rowcount
        == 1
    )


def set_bot_disabled(conn: Connection, bot_id: int, disabled: bool, by: str = "admin") -> bool:
    """Disable a bot (`by` "admin", or "owner": retired): it leaves matchmaking (its active
    version, and any still validating, is disabled, or retired when its owner retired it) and
    keeps its games. Enabling it again puts back its newest version that had passed validation
    as active, and any version stopped while it was validating back in the validation queue."""
    done = conn.execute(
        bots.update()
        .where(bots.c.id == bot_id)
        .values(disabled=disabled, disabled_by=by if disabled else None)
    ).rowcount
    if disabled:
        conn.execute(
            versions.update()
            .where(
                versions.c.bot_id == bot_id,
                versions.c.state.in_([VersionState.ACTIVE, VersionState.VALIDATING]),
            )
            .values(state=VersionState.RETIRED if by == "owner" else VersionState.DISABLED)
        )
        return done == 1
    mine = versions.c.bot_id == bot_id
    stopped = versions.c.state.in_([VersionState.DISABLED, VersionState.RETIRED])
    newest = conn.execute(
        sa.select(sa.func.max(versions.c.id)).where(mine, versions.c.activated_at.is_not(None))
    ).scalar()
    if newest is not None:
        # the newest ever activated: the one that was active when the bot was stopped (the
        # versions a newer one replaced are older)
        conn.execute(
            versions.update()
            .where(versions.c.id == newest, stopped)
            .values(state=VersionState.ACTIVE)
        )
    conn.execute(
        versions.update()
        .where(mine, stopped, versions.c.validation.is_(None))
        .values(state=VersionState.VALIDATING)
    )
    return done == 1


def ensure_rating(conn: Connection, version_id: int, variant: str, *, mu: float = MU0) -> None:
    exists = conn.execute(
        sa.select(ratings.c.version_id).where(
            ratings.c.version_id == version_id, ratings.c.variant == variant
        )
    ).first()
    if exists is None:
        conn.execute(
            ratings.insert().values(
                version_id=version_id,
                variant=variant,
                mu=mu,
                sigma=SIGMA0,
                score=mu - 3 * SIGMA0,
                games=0,
                wins=0,
                draws=0,
                losses=0,
                forfeits=0,
            )
        )


# --- games: create, claim, record, void ------------------------------------------------------


@dataclass(frozen=True)
class NewGame:
    """A game to queue: the variant (label + engine + options), its conditions, its seats."""

    kind: GameKind
    variant: str
    game_name: str
    options: dict[str, Any]
    seed: int
    opening: tuple[tuple[str, ...], ...]
    time_control: dict[str, Any]
    version0: int
    version1: int
    priority: int = 0
    schedule_key: str | None = None


# The statements of the scheduling hot path (create, claim, record, rate: a dozen per game) are
# built once, with bind parameters, rather than per call: SQLAlchemy then skips building the
# expression and its cache key each time, which on a 2-core machine is CPU the games lack.
_p = sa.bindparam

_INSERT_GAME = games.insert().values(
    kind=_p("p_kind"),
    schedule_key=_p("p_schedule_key"),
    variant=_p("p_variant"),
    game_name=_p("p_game_name"),
    options=_p("p_options"),
    seed=_p("p_seed"),
    opening=_p("p_opening"),
    time_control=_p("p_time_control"),
    version0=_p("p_version0"),
    version1=_p("p_version1"),
    state=_p("p_state"),
    attempt=_p("p_attempt"),
    priority=_p("p_priority"),
    created_at=_p("p_now"),
    claimed_at=_p("p_claimed_at"),
)
_SEATED_VERSIONS = sa.select(
    versions.c.id, versions.c.bot_id, versions.c.path, versions.c.manifest
).where(versions.c.id.in_([_p("p_v0"), _p("p_v1")]))
# both seats in one multi-row INSERT (an executemany of two rows goes through psycopg's
# pipeline, which costs the server more CPU than it saves on PostgreSQL)
_INSERT_SEATS = seats.insert().values(
    [
        {
            "game_id": _p("p_game"),
            "seat": seat,
            "version_id": _p(f"p_version{seat}"),
            "bot_id": _p(f"p_bot{seat}"),
            "variant": _p("p_variant"),
        }
        for seat in (0, 1)
    ]
)


def create_game(conn: Connection, g: NewGame) -> int:
    return _insert_game(conn, g, claimed=False)[0]


def start_game(conn: Connection, g: NewGame) -> Claim:
    """`create_game` and `claim_game` in one: the game is born `running` as attempt 1 (no one
    can see it queued in between anyway: both happen in the caller's transaction)."""
    gid, seated = _insert_game(conn, g, claimed=True)
    return Claim(
        game_id=gid,
        attempt=1,
        kind=str(g.kind),
        variant=g.variant,
        game_name=g.game_name,
        options=dict(g.options),
        seed=g.seed,
        opening=tuple(tuple(t) for t in g.opening),
        time_control=dict(g.time_control),
        versions=(g.version0, g.version1),
        paths=(seated[g.version0].path, seated[g.version1].path),
        manifests=(
            json.loads(seated[g.version0].manifest),
            json.loads(seated[g.version1].manifest),
        ),
    )


def _insert_game(conn: Connection, g: NewGame, *, claimed: bool) -> tuple[int, dict[int, Any]]:
    now = now_iso()
    gid = conn.execute(
        _INSERT_GAME,
        {
            "p_kind": str(g.kind),
            "p_schedule_key": g.schedule_key,
            "p_variant": g.variant,
            "p_game_name": g.game_name,
            "p_options": json.dumps(g.options, sort_keys=True),
            "p_seed": g.seed,
            "p_opening": json.dumps([list(t) for t in g.opening]),
            "p_time_control": json.dumps(g.time_control, sort_keys=True),
            "p_version0": g.version0,
            "p_version1": g.version1,
            "p_priority": g.priority,
            "p_now": now,
            "p_state": GameState.RUNNING if claimed else GameState.QUEUED,
            "p_attempt": 1 if claimed else 0,
            "p_claimed_at": now if claimed else None,
        },
    ).inserted_primary_key[0]
    seated = {
        r.id: r for r in conn.execute(_SEATED_VERSIONS, {"p_v0": g.version0, "p_v1": g.version1})
    }
    conn.execute(
        _INSERT_SEATS,
        {
            "p_game": gid,
            "p_variant": g.variant,
            "p_version0": g.version0,
            "p_version1": g.version1,
            "p_bot0": seated[g.version0].bot_id,
            "p_bot1": seated[g.version1].bot_id,
        },
    )
    return int(gid), seated


@dataclass(frozen=True)
class Claim:
    """A claimed attempt: everything an executor needs to play it."""

    game_id: int
    attempt: int
    kind: str
    variant: str
    game_name: str
    options: dict[str, Any]
    seed: int
    opening: tuple[tuple[str, ...], ...]
    time_control: dict[str, Any]
    versions: tuple[int, int]
    paths: tuple[str, str]
    manifests: tuple[dict[str, Any], dict[str, Any]]


_QUEUED_IDS = (
    sa.select(games.c.id)
    .where(
        games.c.state == GameState.QUEUED,
        sa.or_(games.c.not_before.is_(None), games.c.not_before <= _p("p_now")),
    )
    .order_by(games.c.priority.desc(), games.c.id)
    .limit(_p("p_limit"))
)


def queued_game_ids(conn: Connection, limit: int = 1, now: str | None = None) -> list[int]:
    """The queued games that may be claimed at `now` (default: now), in claim order: a game
    waiting out its backoff (`not_before`) is skipped until then."""
    return list(conn.execute(_QUEUED_IDS, {"p_limit": limit, "p_now": now or now_iso()}).scalars())


def next_retry_at(conn: Connection) -> str | None:
    """The earliest time a queued game waiting out its backoff may be claimed."""
    return conn.execute(
        sa.select(sa.func.min(games.c.not_before)).where(
            games.c.state == GameState.QUEUED, games.c.not_before.is_not(None)
        )
    ).scalar()


def iso_at(t: float) -> str:
    """The UTC time `t` (seconds since the epoch) in `now_iso`'s format, which sorts as text."""
    ms = int(t * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{ms:03d}Z"


def seconds_until(iso: str, now: float) -> float:
    """Seconds from `now` (epoch) until the time `iso` (as `iso_at` writes it)."""
    stamp = datetime.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    return stamp.timestamp() + int(iso[20:23]) / 1000 - now


# queued -> running, the next attempt number, and the row as it now is, in one statement
_CLAIM = (
    games.update()
    .where(games.c.id == _p("p_game"), games.c.state == GameState.QUEUED)
    .values(state=GameState.RUNNING, attempt=games.c.attempt + 1, claimed_at=_p("p_now"))
    .returning(*games.c)
)


def claim_game(conn: Connection, game_id: int) -> Claim | None:
    """queued -> running with the next attempt number; None if someone else claimed it."""
    g = conn.execute(_CLAIM, {"p_game": game_id, "p_now": now_iso()}).first()
    if g is None:
        return None
    v = {r.id: r for r in conn.execute(_SEATED_VERSIONS, {"p_v0": g.version0, "p_v1": g.version1})}
    return Claim(
        game_id=g.id,
        attempt=g.attempt,
        kind=g.kind,
        variant=g.variant,
        game_name=g.game_name,
        options=json.loads(g.options),
        seed=g.seed,
        opening=tuple(tuple(t) for t in json.loads(g.opening)),
        time_control=json.loads(g.time_control),
        versions=(g.version0, g.version1),
        paths=(v[g.version0].path, v[g.version1].path),
        manifests=(json.loads(v[g.version0].manifest), json.loads(v[g.version1].manifest)),
    )


def compress_record(record: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(record, separators=(",", ":")).encode(), 6)


def decompress_record(data: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(data))


def _outcome(points: float, forfeit: bool) -> str:
    if points == 1.0:
        return "win"
    if points == 0.5:
        return "draw"
    return "forfeit" if forfeit else "loss"


# the conditional update that makes recording exactly-once; `rated` is decided from the row's
# own kind in the same statement, and the row's seats come back with it
_FINISH = (
    games.update()
    .where(
        games.c.id == _p("p_game"),
        games.c.attempt == _p("p_attempt"),
        games.c.state == GameState.RUNNING,
    )
    .values(
        state=GameState.FINISHED,
        finished_at=_p("p_now"),
        winner=_p("p_winner"),
        result=_p("p_result"),
        reason=_p("p_reason"),
        detail=_p("p_detail"),
        forfeit=_p("p_forfeit"),
        loser_seat=_p("p_loser_seat"),
        score0=_p("p_score0"),
        score1=_p("p_score1"),
        turns=_p("p_turns"),
        duration=_p("p_duration"),
        rated=sa.case(
            (games.c.kind == GameKind.RATED, _p("p_rated", type_=Boolean)), else_=sa.false()
        ),
    )
    .returning(games.c.kind, games.c.variant, games.c.version0, games.c.version1)
)
_INSERT_RECORD = records.insert().values(game_id=_p("p_game"), data=_p("p_data"))
_SEAT_OUTCOMES = (
    seats.update()
    .where(seats.c.game_id == _p("p_game"))
    .values(outcome=sa.case((seats.c.seat == 0, _p("p_out0")), else_=_p("p_out1")))
)
_RATED_SEAT = (
    seats.update()
    .where(seats.c.game_id == _p("p_game"), seats.c.seat == _p("p_seat"))
    .values(
        outcome=_p("p_outcome"),
        mu_before=_p("p_mu_before"),
        sigma_before=_p("p_sigma_before"),
        mu_after=_p("p_mu_after"),
        sigma_after=_p("p_sigma_after"),
    )
)
_LOCK_RATINGS = (
    sa.select(ratings)
    .where(ratings.c.variant == _p("p_variant"), ratings.c.version_id.in_([_p("p_v0"), _p("p_v1")]))
    .order_by(ratings.c.version_id)
    .with_for_update()
)
_UPDATE_RATING = (
    ratings.update()
    .where(ratings.c.version_id == _p("p_version"), ratings.c.variant == _p("p_variant"))
    .values(
        mu=_p("p_mu"),
        sigma=_p("p_sigma"),
        score=_p("p_score"),
        games=ratings.c.games + 1,
        wins=ratings.c.wins + _p("p_win", type_=Integer),
        draws=ratings.c.draws + _p("p_draw", type_=Integer),
        losses=ratings.c.losses + _p("p_loss", type_=Integer),
        forfeits=ratings.c.forfeits + _p("p_forfeit", type_=Integer),
        last_game_at=_p("p_now"),
    )
)


def record_result(
    conn: Connection,
    game_id: int,
    attempt: int,
    record: dict[str, Any],
    record_json: bytes | None = None,
) -> bool:
    """Record a finished attempt exactly once; False (nothing written) if it is stale.

    In one transaction: the conditional UPDATE of the game row, its record, the seats'
    outcomes and, for a rated game, both versions' ratings (rows locked in id order).
    """
    res = record.get("result") or {}
    winner = res.get("winner")
    scores = [*list(res.get("scores") or []), None, None]
    reason = str(res.get("reason", ""))
    forfeit = bool(res.get("forfeit")) or reason in FORFEIT_REASONS
    g = conn.execute(
        _FINISH,
        {
            "p_game": game_id,
            "p_attempt": attempt,
            "p_now": now_iso(),
            "p_winner": winner,
            "p_result": res.get("result") or {0: "1-0", 1: "0-1"}.get(winner, "1/2-1/2"),
            "p_reason": reason[:64],
            "p_detail": str(res.get("detail") or ""),
            "p_forfeit": forfeit,
            "p_loser_seat": res.get("loser_seat"),
            "p_score0": scores[0],
            "p_score1": scores[1],
            "p_turns": record.get("turn_count"),
            "p_duration": record.get("duration"),
            # both bots failing to start is no contest: recorded, shown, not rated
            "p_rated": reason != "both_failed_start",
        },
    ).first()
    if g is None:
        return False
    data = compress_record(record) if record_json is None else zlib.compress(record_json, 6)
    conn.execute(_INSERT_RECORD, {"p_game": game_id, "p_data": data})
    _bump(conn, "finished")
    points0 = 0.5 if winner is None else (1.0 if winner == 0 else 0.0)
    outcomes = (
        _outcome(points0, forfeit and points0 == 0.0),
        _outcome(1.0 - points0, forfeit and points0 == 1.0),
    )
    if g.kind == GameKind.RATED and reason != "both_failed_start":
        _rate(conn, game_id, g.variant, (g.version0, g.version1), points0, forfeit, outcomes)
    else:
        conn.execute(
            _SEAT_OUTCOMES, {"p_game": game_id, "p_out0": outcomes[0], "p_out1": outcomes[1]}
        )
    return True


def _rate(
    conn: Connection,
    game_id: int,
    variant: str,
    seated: tuple[int, int],
    points0: float,
    forfeit: bool,
    outcomes: tuple[str, str],
) -> None:
    """Both versions' new ratings, and the seats' outcomes with their ratings before and
    after."""
    key = {"p_variant": variant, "p_v0": seated[0], "p_v1": seated[1]}
    rows = {r.version_id: r for r in conn.execute(_LOCK_RATINGS, key)}
    if len(rows) < len(set(seated)):
        for v in sorted(seated):
            ensure_rating(conn, v, variant)
        rows = {r.version_id: r for r in conn.execute(_LOCK_RATINGS, key)}
    r0, r1 = rows[seated[0]], rows[seated[1]]
    s0, s1 = rate(Skill(r0.mu, r0.sigma), Skill(r1.mu, r1.sigma), points0)
    now = now_iso()
    for params in (
        {
            "p_game": game_id,
            "p_seat": seat,
            "p_outcome": outcome,
            "p_mu_before": row.mu,
            "p_sigma_before": row.sigma,
            "p_mu_after": skill.mu,
            "p_sigma_after": skill.sigma,
        }
        for seat, (row, skill, outcome) in enumerate(((r0, s0, outcomes[0]), (r1, s1, outcomes[1])))
    ):
        conn.execute(_RATED_SEAT, params)
    for params in (
        {
            "p_version": row.version_id,
            "p_variant": variant,
            "p_mu": skill.mu,
            "p_sigma": skill.sigma,
            "p_score": skill.conservative,
            "p_win": int(pts == 1.0),
            "p_draw": int(pts == 0.5),
            "p_loss": int(pts == 0.0),
            "p_forfeit": int(forfeit and pts == 0.0),
            "p_now": now,
        }
        for row, skill, pts in ((r0, s0, points0), (r1, s1, 1.0 - points0))
    ):
        conn.execute(_UPDATE_RATING, params)


def void_attempt(
    conn: Connection,
    game_id: int,
    attempt: int,
    kind: VoidKind,
    reason: str,
    max_attempts: int,
    retry_at: str | None = None,
) -> bool:
    """A platform fault voided this attempt: log it, requeue the game (or fail it after
    `max_attempts`; a server stop never counts). False if the attempt is stale. A requeued
    game is not claimed before `retry_at` (`iso_at`; arena/league/backoff.py)."""
    fails = attempt >= max_attempts and kind != VoidKind.SERVER_STOPPED
    game_kind = conn.execute(sa.select(games.c.kind).where(games.c.id == game_id)).scalar()
    fails = fails or game_kind == GameKind.CHALLENGE  # the person is gone: nothing to replay
    state = GameState.FAILED if fails else GameState.QUEUED
    done = conn.execute(
        games.update()
        .where(
            games.c.id == game_id,
            games.c.attempt == attempt,
            games.c.state == GameState.RUNNING,
        )
        .values(
            state=state,
            detail=reason if state == GameState.FAILED else None,
            finished_at=now_iso() if state == GameState.FAILED else None,
            not_before=retry_at if state == GameState.QUEUED else None,
        )
    ).rowcount
    if done != 1:
        return False
    conn.execute(
        voids.insert().values(
            game_id=game_id, attempt=attempt, kind=kind, reason=reason[:2000], at=now_iso()
        )
    )
    return True


def void_running(conn: Connection, kind: VoidKind, reason: str, max_attempts: int) -> int:
    """Void every running attempt (the server that claimed them is gone); how many."""
    running = conn.execute(
        sa.select(games.c.id, games.c.attempt).where(games.c.state == GameState.RUNNING)
    ).all()
    return sum(void_attempt(conn, g, a, kind, reason, max_attempts) for g, a in running)


_BUMP = (
    tallies.update()
    .where(tallies.c.name == _p("p_name"))
    .values(value=tallies.c.value + _p("p_by", type_=BigInteger))
)


def _bump(conn: Connection, name: str, by: int = 1) -> None:
    done = conn.execute(_BUMP, {"p_name": name, "p_by": by}).rowcount
    if not done:  # the migration seeds the rows; a database made by create_all may lack them
        conn.execute(tallies.insert().values(name=name, value=by))


def game_record(conn: Connection, game_id: int) -> dict[str, Any] | None:
    data = conn.execute(sa.select(records.c.data).where(records.c.game_id == game_id)).scalar()
    return None if data is None else decompress_record(data)


# --- reads for the scheduler -----------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """An active version as matchmaking sees it in one variant."""

    version_id: int
    bot_id: int
    mu: float
    sigma: float
    games: int  # finished rated games plus those queued or running
    last_game_at: str | None


_PENDING = (
    sa.select(seats.c.version_id, sa.func.count().label("n"))
    .join(games, games.c.id == seats.c.game_id)
    .where(
        games.c.state.in_([GameState.QUEUED, GameState.RUNNING]),
        games.c.kind == GameKind.RATED,
        games.c.variant == _p("p_variant"),
    )
    .group_by(seats.c.version_id)
    .subquery()
)
_CANDIDATES = (
    sa.select(
        versions.c.id,
        versions.c.bot_id,
        ratings.c.mu,
        ratings.c.sigma,
        ratings.c.games,
        sa.func.coalesce(_PENDING.c.n, 0).label("pending"),
        ratings.c.last_game_at,
    )
    .join(
        ratings,
        sa.and_(ratings.c.version_id == versions.c.id, ratings.c.variant == _p("p_variant")),
    )
    .outerjoin(_PENDING, _PENDING.c.version_id == versions.c.id)
    .where(versions.c.state == VersionState.ACTIVE)
    .order_by(versions.c.id)
)


def candidates(conn: Connection, variant: str) -> list[Candidate]:
    return [
        Candidate(r.id, r.bot_id, r.mu, r.sigma, r.games + r.pending, r.last_game_at)
        for r in conn.execute(_CANDIDATES, {"p_variant": variant})
    ]


def games_per_variant(conn: Connection) -> dict[str, int]:
    rows = conn.execute(
        sa.select(games.c.variant, sa.func.count())
        .where(games.c.kind == GameKind.RATED, games.c.state != GameState.FAILED)
        .group_by(games.c.variant)
    )
    return {v: n for v, n in rows}


def pair_results(conn: Connection, variant: str) -> list[tuple[int, int, float, int]]:
    """(version a, version b, points of a, games) over the variant's rated games, a < b."""
    a = sa.case((games.c.version0 < games.c.version1, games.c.version0), else_=games.c.version1)
    b = sa.case((games.c.version0 < games.c.version1, games.c.version1), else_=games.c.version0)
    pts0 = sa.case((games.c.winner.is_(None), 0.5), (games.c.winner == 0, 1.0), else_=0.0)
    pts_a = sa.case((games.c.version0 < games.c.version1, pts0), else_=1.0 - pts0)
    rows = conn.execute(
        sa.select(a.label("a"), b.label("b"), sa.func.sum(pts_a), sa.func.count())
        .where(
            games.c.variant == variant,
            games.c.state == GameState.FINISHED,
            games.c.rated.is_(True),
        )
        .group_by(a, b)
    )
    return [(int(x), int(y), float(p), int(n)) for x, y, p, n in rows]


def replace_official(conn: Connection, variant: str, rows: list[dict[str, Any]]) -> None:
    conn.execute(official.delete().where(official.c.variant == variant))
    if rows:
        conn.execute(official.insert(), [{"variant": variant, **r} for r in rows])


# --- reads for the API -----------------------------------------------------------------------


#: the leaderboard's sortable columns (the pages' ?sort=), each as an expression of the query
LEADERBOARD_SORTS = (
    "rank",
    "bot",
    "owner",
    "version",
    "rating",
    "elo",
    "games",
    "wins",
    "draws",
    "losses",
    "forfeits",
)


def leaderboard(
    conn: Connection,
    variant: str,
    *,
    limit: int,
    offset: int,
    include_retired: bool = False,
    sort: str = "rank",
    descending: bool = False,
) -> list[dict[str, Any]]:
    """Versions by conservative rating (mu - 3 sigma), with their official Elo if fitted.

    `rank` is always the place by rating; `sort` (one of LEADERBOARD_SORTS) only orders the
    rows, ties broken by rank. A variant has at most a few thousand versions, so any order is
    a sort of that many rows."""
    stmt = _leaderboard_statement(include_retired, sort, descending)
    rows = conn.execute(stmt, {"variant": variant, "limit": limit, "offset": offset})
    return [
        {
            "rank": offset + i + 1 if r.rank is None else r.rank,
            "bot": r.bot,
            "owner": r.owner,
            "version": r.number,
            "version_id": r.version_id,
            "state": r.state,
            "rating": round(r.score, 3),
            "mu": round(r.mu, 3),
            "sigma": round(r.sigma, 3),
            "games": r.games,
            "wins": r.wins,
            "draws": r.draws,
            "losses": r.losses,
            "forfeits": r.forfeits,
            "elo": None if r.elo is None else round(r.elo, 1),
            "elo_ci95": None if r.ci95 is None else round(r.ci95, 1),
            "last_game_at": r.last_game_at,
        }
        for i, r in enumerate(rows)
    ]


def leaderboard_size(conn: Connection, variant: str) -> int:
    """How many versions `leaderboard` lists for `variant` (the active ones): a page past the
    end says which page is the last."""
    return int(
        conn.execute(
            sa.select(sa.func.count())
            .select_from(ratings.join(versions, versions.c.id == ratings.c.version_id))
            .where(ratings.c.variant == variant, versions.c.state == VersionState.ACTIVE)
        ).scalar_one()
    )


@functools.cache
def _leaderboard_statement(include_retired: bool, sort: str, descending: bool) -> sa.Select:
    """The leaderboard's query, built once per shape (variant, limit, offset bound at run
    time). In rating order it reads only the page through the (variant, score) index and the
    rank is the row's place; any other order ranks every version of the variant first (a
    window over a few thousand rows at most)."""
    states = [VersionState.ACTIVE]
    if include_retired:
        states += [VersionState.RETIRED, VersionState.DISABLED]
    variant = sa.bindparam("variant", type_=String)
    by_rating = (ratings.c.score.desc(), ratings.c.version_id)
    in_order = sort == "rank" and not descending
    rank = sa.null() if in_order else sa.func.row_number().over(order_by=by_rating)
    ranked = (
        sa.select(
            ratings,
            rank.label("rank"),
            bots.c.name.label("bot"),
            users.c.name.label("owner"),
            versions.c.number,
            versions.c.state,
            official.c.elo,
            official.c.ci95,
        )
        .join(versions, versions.c.id == ratings.c.version_id)
        .join(bots, bots.c.id == versions.c.bot_id)
        .join(users, users.c.id == bots.c.owner_id)
        .outerjoin(
            official,
            sa.and_(official.c.version_id == ratings.c.version_id, official.c.variant == variant),
        )
        .where(ratings.c.variant == variant, versions.c.state.in_(states))
    )
    page = (sa.bindparam("limit", type_=Integer), sa.bindparam("offset", type_=Integer))
    if in_order:
        return ranked.order_by(*by_rating).limit(page[0]).offset(page[1])
    sub = ranked.subquery()
    name = {"rating": "score", "version": "number"}.get(sort, sort)
    column = sub.c[name if sort in LEADERBOARD_SORTS and name in sub.c else "rank"]
    key = column.desc() if descending else column.asc()
    return sa.select(sub).order_by(key.nulls_last(), sub.c.rank).limit(page[0]).offset(page[1])


def list_bots(conn: Connection, *, limit: int, offset: int) -> list[dict[str, Any]]:
    latest = (
        sa.select(versions.c.bot_id, sa.func.max(versions.c.number).label("latest"))
        .group_by(versions.c.bot_id)
        .subquery()
    )
    rows = conn.execute(
        sa.select(bots, users.c.name.label("owner"), latest.c.latest)
        .join(users, users.c.id == bots.c.owner_id)
        .outerjoin(latest, latest.c.bot_id == bots.c.id)
        .where(~bots.c.name.startswith(HUMAN_PREFIX))
        .order_by(bots.c.name)
        .limit(limit)
        .offset(offset)
    )
    return [_bot_dict(r) for r in rows]


def _bot_dict(r: Any) -> dict[str, Any]:
    return {
        "name": r.name,
        "owner": r.owner,
        "disabled": bool(r.disabled),
        "created_at": r.created_at,
        "latest_version": r.latest,
    }


def bot_detail(conn: Connection, name: str) -> dict[str, Any] | None:
    r = conn.execute(
        sa.select(bots, users.c.name.label("owner"), sa.literal(None).label("latest"))
        .join(users, users.c.id == bots.c.owner_id)
        .where(bots.c.name == name)
    ).first()
    if r is None:
        return None
    out = _bot_dict(r)
    out["id"] = r.id
    out["owner_id"] = r.owner_id
    out["disabled_by"] = r.disabled_by
    vs = bot_versions(conn, r.id)
    out["latest_version"] = vs[0].number if vs else None
    out["versions"] = [version_summary(v) for v in vs]
    return out


def version_summary(v: Version) -> dict[str, Any]:
    validation = v.validation or {}
    return {
        "id": v.id,
        "bot": v.bot,
        "number": v.number,
        "state": v.state,
        "created_at": v.created_at,
        "activated_at": v.activated_at,
        "archive_sha256": v.archive_sha256,
        "manifest": public_manifest(v.manifest, v.path or None),
        "validation": None
        if v.validation is None
        else {
            "passed": validation.get("passed"),
            "stage": validation.get("stage"),
            "problem": public_detail(validation.get("problem")),
        },
    }


def version_by_number(conn: Connection, bot_id: int, number: int) -> Version | None:
    vid = conn.execute(
        sa.select(versions.c.id).where(versions.c.bot_id == bot_id, versions.c.number == number)
    ).scalar()
    return None if vid is None else version(conn, vid)


def version_ratings(conn: Connection, version_id: int) -> list[dict[str, Any]]:
    rows = conn.execute(
        sa.select(ratings).where(ratings.c.version_id == version_id).order_by(ratings.c.variant)
    )
    return [
        {
            "variant": r.variant,
            "rating": round(r.score, 3),
            "mu": round(r.mu, 3),
            "sigma": round(r.sigma, 3),
            "games": r.games,
            "wins": r.wins,
            "draws": r.draws,
            "losses": r.losses,
            "forfeits": r.forfeits,
        }
        for r in rows
    ]


_v0 = versions.alias("v0")
_v1 = versions.alias("v1")
_b0 = bots.alias("b0")
_b1 = bots.alias("b1")


def _games_select() -> sa.Select:
    return (
        sa.select(
            games,
            _b0.c.name.label("bot0"),
            _v0.c.number.label("number0"),
            _b1.c.name.label("bot1"),
            _v1.c.number.label("number1"),
        )
        .join(_v0, _v0.c.id == games.c.version0)
        .join(_b0, _b0.c.id == _v0.c.bot_id)
        .join(_v1, _v1.c.id == games.c.version1)
        .join(_b1, _b1.c.id == _v1.c.bot_id)
    )


def game_dict(r: Any) -> dict[str, Any]:
    return {
        "id": r.id,
        "kind": r.kind,
        "variant": r.variant,
        "game": r.game_name,
        "state": r.state,
        "attempt": r.attempt,
        "seats": [
            {"bot": r.bot0, "version": r.number0, "version_id": r.version0},
            {"bot": r.bot1, "version": r.number1, "version_id": r.version1},
        ],
        "created_at": r.created_at,
        "claimed_at": r.claimed_at,
        "finished_at": r.finished_at,
        "winner": r.winner,
        "result": r.result,
        "reason": r.reason,
        "detail": public_detail(r.detail),
        "forfeit": None if r.forfeit is None else bool(r.forfeit),
        "loser_seat": r.loser_seat,
        "scores": [r.score0, r.score1],
        "turns": r.turns,
        "duration": r.duration,
        "rated": None if r.rated is None else bool(r.rated),
    }


#: results a game list filters by, as the named bot saw them
OUTCOMES = ("win", "draw", "loss", "forfeit")


def list_games(
    conn: Connection,
    *,
    limit: int,
    offset: int,
    bot_id: int | None = None,
    version_id: int | None = None,
    variant: str | None = None,
    outcome: str | None = None,
    states: Sequence[str] = (GameState.FINISHED,),
    before: int | None = None,
    by_finish: bool = False,
) -> list[dict[str, Any]]:
    """Newest first: by id (the order games were scheduled), or with `by_finish` by the time
    they finished (`finished_at`, then id: the API's order, which a person expects; through
    the (finished_at, id) index, or for one bot a sort of that bot's games). Filtering by bot
    goes through the seats table's (bot_id, game_id) index, so a bot's page is an index range
    scan whatever the number of games. `before` (a game id) pages by key: the page after the
    one that ended with that game, as fast at the millionth game as at the first (an offset
    would count its way there)."""
    order = (games.c.finished_at.desc(), games.c.id.desc()) if by_finish else (games.c.id.desc(),)
    q = _games_select().where(games.c.state.in_(list(states)))
    if before is not None:
        q = q.where(games.c.id < before)
    if bot_id is not None or version_id is not None:
        s = sa.select(seats.c.game_id)
        if before is not None:
            s = s.where(seats.c.game_id < before)
        if bot_id is not None:
            s = s.where(seats.c.bot_id == bot_id)
        if version_id is not None:
            s = s.where(seats.c.version_id == version_id)
        if variant is not None:
            s = s.where(seats.c.variant == variant)
        if outcome is not None:
            s = s.where(seats.c.outcome == outcome)
        elif list(states) == [GameState.FINISHED]:
            s = s.where(seats.c.outcome.is_not(None))
        if by_finish:
            s = s.join(games, games.c.id == seats.c.game_id).order_by(*order)
        else:
            s = s.order_by(seats.c.game_id.desc())
        ids = list(conn.execute(s.limit(limit).offset(offset)).scalars())
        if not ids:
            return []
        q = q.where(games.c.id.in_(ids))
        offset = 0
    elif variant is not None:
        q = q.where(games.c.variant == variant)
    rows = conn.execute(q.order_by(*order).limit(limit).offset(offset))
    return [game_dict(r) for r in rows]


def game_detail(conn: Connection, game_id: int) -> dict[str, Any] | None:
    r = conn.execute(_games_select().where(games.c.id == game_id)).first()
    if r is None:
        return None
    out = game_dict(r)
    out["voids"] = [
        {"attempt": v.attempt, "kind": v.kind, "reason": neutral_paths(v.reason), "at": v.at}
        for v in conn.execute(
            sa.select(voids).where(voids.c.game_id == game_id).order_by(voids.c.id)
        )
    ]
    out["owners"] = [
        o
        for (o,) in conn.execute(
            sa.select(bots.c.owner_id)
            .select_from(seats.join(bots, bots.c.id == seats.c.bot_id))
            .where(seats.c.game_id == game_id)
            .order_by(seats.c.seat)
        )
    ]
    return out


# --- reads for the pages ---------------------------------------------------------------------


def forfeit_kinds(
    conn: Connection, variant: str, version_ids: Sequence[int]
) -> dict[int, dict[str, int]]:
    """Per version, its forfeits in the variant by reason (time_forfeit, crash, ...): through a
    partial index of forfeited seats, so a leaderboard page costs its forfeits, not its games."""
    if not version_ids:
        return {}
    rows = conn.execute(
        sa.select(seats.c.version_id, games.c.reason, sa.func.count())
        .join(games, games.c.id == seats.c.game_id)
        .where(
            seats.c.version_id.in_(list(version_ids)),
            seats.c.variant == variant,
            seats.c.outcome == "forfeit",
        )
        .group_by(seats.c.version_id, games.c.reason)
    )
    out: dict[int, dict[str, int]] = {}
    for vid, reason, n in rows:
        out.setdefault(int(vid), {})[str(reason)] = int(n)
    return out


@dataclass(frozen=True)
class RatingPoint:
    """A version's rating in a variant after one of its rated games."""

    game_id: int
    version_id: int
    variant: str
    mu: float
    sigma: float
    #: the rating before that game (where a chart's line starts)
    mu_before: float
    sigma_before: float

    @property
    def rating(self) -> float:
        return self.mu - 3.0 * self.sigma

    @property
    def rating_before(self) -> float:
        return self.mu_before - 3.0 * self.sigma_before


def _rating_point_columns() -> tuple[Any, ...]:
    """The seat columns a RatingPoint is made of, in its fields' order."""
    c = seats.c
    return (
        c.game_id,
        c.version_id,
        c.variant,
        c.mu_after,
        c.sigma_after,
        c.mu_before,
        c.sigma_before,
    )


def rating_history(
    conn: Connection, version_id: int, variant: str, *, limit: int
) -> list[RatingPoint]:
    """The version's rating after each of its last `limit` rated games in the variant, oldest
    first (an index range scan on (version, variant, game))."""
    rows = conn.execute(
        sa.select(*_rating_point_columns())
        .where(
            seats.c.version_id == version_id,
            seats.c.variant == variant,
            seats.c.mu_after.is_not(None),
        )
        .order_by(seats.c.game_id.desc())
        .limit(limit)
    )
    return [RatingPoint(*r) for r in reversed(rows.all())]


def bot_rating_history(conn: Connection, bot_id: int, *, limit: int) -> list[RatingPoint]:
    """The bot's ratings (any version, any variant) after its last `limit` rated games, oldest
    first."""
    rows = conn.execute(
        sa.select(*_rating_point_columns())
        .where(seats.c.bot_id == bot_id, seats.c.mu_after.is_not(None))
        .order_by(seats.c.game_id.desc())
        .limit(limit)
    )
    return [RatingPoint(*r) for r in reversed(rows.all())]


def crosstable(
    conn: Connection, bot_id: int, *, limit: int, games: int = 2000
) -> list[dict[str, Any]]:
    """The bot's results over its last `games` finished games against its `limit` most
    frequent opponents (bots) in them, from its side: games, wins, draws, losses (forfeits
    among the losses), points. Bounded by `games`, a bot page costs the same after a year."""
    mine = (
        sa.select(seats.c.game_id, seats.c.seat, seats.c.outcome)
        .where(seats.c.bot_id == bot_id, seats.c.outcome.is_not(None))
        .order_by(seats.c.game_id.desc())
        .limit(games)
        .subquery("mine")
    )
    theirs = seats.alias("theirs")
    out_is = lambda o: sa.func.sum(sa.case((mine.c.outcome == o, 1), else_=0))  # noqa: E731
    rows = conn.execute(
        sa.select(
            bots.c.name,
            sa.func.count().label("games"),
            out_is("win").label("wins"),
            out_is("draw").label("draws"),
            out_is("loss").label("losses"),
            out_is("forfeit").label("forfeits"),
        )
        .select_from(mine)
        .join(theirs, sa.and_(theirs.c.game_id == mine.c.game_id, theirs.c.seat != mine.c.seat))
        .join(bots, bots.c.id == theirs.c.bot_id)
        .group_by(bots.c.name)
        .order_by(sa.func.count().desc(), bots.c.name)
        .limit(limit)
    )
    return [
        {
            "opponent": r.name,
            "games": int(r.games),
            "wins": int(r.wins),
            "draws": int(r.draws),
            "losses": int(r.losses) + int(r.forfeits),
            "forfeits": int(r.forfeits),
            "points": int(r.wins) + 0.5 * int(r.draws),
        }
        for r in rows
    ]


def game_seats(conn: Connection, game_id: int) -> list[dict[str, Any]]:
    """A game's seats: bot, version, owner, outcome, and the rating before and after (rated
    games; None otherwise) as (mu, sigma, mu - 3 sigma)."""
    rows = conn.execute(
        sa.select(
            seats,
            bots.c.name.label("bot"),
            bots.c.owner_id,
            users.c.name.label("owner"),
            versions.c.number,
        )
        .join(bots, bots.c.id == seats.c.bot_id)
        .join(users, users.c.id == bots.c.owner_id)
        .join(versions, versions.c.id == seats.c.version_id)
        .where(seats.c.game_id == game_id)
        .order_by(seats.c.seat)
    )

    def skill(mu: float | None, sigma: float | None) -> dict[str, float] | None:
        if mu is None or sigma is None:
            return None
        return {"mu": mu, "sigma": sigma, "rating": mu - 3.0 * sigma}

    return [
        {
            "seat": r.seat,
            "bot": r.bot,
            "version": r.number,
            "owner": r.owner,
            "owner_id": r.owner_id,
            "outcome": r.outcome,
            "before": skill(r.mu_before, r.sigma_before),
            "after": skill(r.mu_after, r.sigma_after),
        }
        for r in rows
    ]


def queue(conn: Connection, *, limit: int, offset: int) -> list[dict[str, Any]]:
    """Games in flight first, then the queued ones in the order they will be claimed."""
    running = sa.case((games.c.state == GameState.RUNNING, 0), else_=1)
    rows = conn.execute(
        _games_select()
        .where(games.c.state.in_([GameState.RUNNING, GameState.QUEUED]))
        .order_by(running, games.c.priority.desc(), games.c.id)
        .limit(limit)
        .offset(offset)
    )
    return [game_dict(r) for r in rows]


def in_flight(conn: Connection, *, limit: int) -> list[dict[str, Any]]:
    """The games in flight, oldest claim first: every game a slot or a worker has claimed
    (state running), whether or not its bots have started. The one definition the home
    page's count and /live's list share (web/live.py `in_flight_games`)."""
    rows = conn.execute(
        _games_select()
        .where(games.c.state == GameState.RUNNING)
        .order_by(games.c.claimed_at, games.c.id)
        .limit(limit)
    )
    return [game_dict(r) for r in rows]


def counts(conn: Connection) -> dict[str, int]:
    """Games by state: the few not finished counted through the state index, the finished
    ones from their running total."""
    rows = conn.execute(
        sa.select(games.c.state, sa.func.count())
        .where(games.c.state.in_([GameState.QUEUED, GameState.RUNNING, GameState.FAILED]))
        .group_by(games.c.state)
    )
    out = {str(s): int(n) for s, n in rows}
    finished = conn.execute(sa.select(tallies.c.value).where(tallies.c.name == "finished"))
    n = finished.scalar()
    if n:
        out[GameState.FINISHED] = int(n)
    return out


def submissions_since(conn: Connection, owner_id: int, since: str) -> int:
    return int(
        conn.execute(
            sa.select(sa.func.count())
            .select_from(versions.join(bots, bots.c.id == versions.c.bot_id))
            .where(bots.c.owner_id == owner_id, versions.c.created_at >= since)
        ).scalar_one()
    )
