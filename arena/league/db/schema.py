"""The league's schema: one MetaData, every Table, and the words their columns hold.

The tables are plain variables of one `metadata` (Starlette's docs/database.md shape, and
procrastinate's `sql/schema.sql` kept in Python): the migrations (arena/league/migrations,
Alembic) are written by hand from them, `create_all` serves the tests. The same schema runs on
SQLite (WAL, the default) and PostgreSQL.

The state and kind columns hold the values of the StrEnums below, and the pages say them in
words through the word tables beside them (`VOID_WORDS`, `SHOWN_VERSION_STATES`), so a new
state is added here once and every page and the API's description follow.

The games and seats tables are not league-specific: a game names its variant, options, seed,
opening and clock and its two seated versions, so a tournament's schedule fits the same rows
(`schedule_key` holds a tournament game id, unique, for idempotent inserts).
"""

from __future__ import annotations

from enum import StrEnum

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
)


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
    #: docs/protocol.md); counted against the worker that played it (db/fleet.py)
    HOST_STALL = "host_stall"


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
    #: the seat of a person (`roster.human_version`): never validated, rated or matched
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
    #: a game of a candidate test (arena/league/candidates.py): a new version against its
    #: bot's previous one for the verdict, unrated, recorded like any other
    CANDIDATE = "candidate"
    #: a game of a season's final (arena/league/db/finals.py): queued like a ladder game, never
    #: rated
    FINAL = "final"


#: the names of people's seats (`roster.human_version`); bot names cannot start with it
HUMAN_PREFIX = "@"


#: results a game list filters by, as the named bot saw them
OUTCOMES = ("win", "draw", "loss", "forfeit")


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
    # a candidate test's game (GameKind.CANDIDATE): its test and its game pair (migration 0009)
    Column("candidate_test", Integer, ForeignKey("candidate_tests.id")),
    Column("candidate_pair", Integer),
    # the season the game was made in (arena/league/db/seasons.py; migration 0010): it is rated
    # only while that season is open; NULL in a league that never had a season
    Column("season_id", Integer),
    Index("ix_games_state_priority", "state", "priority", "id"),
    Index("ix_games_variant_id", "variant", "id"),
    # the API's games list, newest first by finish time (migration 0006)
    Index("ix_games_finished_at", "finished_at", "id"),
    Index("ix_games_candidate_test", "candidate_test", "candidate_pair"),
    # a season's games list (migration 0010)
    Index("ix_games_season", "season_id", "id"),
)


class TestState(StrEnum):
    """A candidate test (arena/league/candidates.py): testing until the SPRT decides (better,
    not_better), its pairs run out (undecided), or its versions leave the league (stopped)."""

    TESTING = "testing"
    BETTER = "better"
    NOT_BETTER = "not_better"
    UNDECIDED = "undecided"
    STOPPED = "stopped"


#: a test's state as the pages, the API and `league submit --wait` say it
VERDICT_WORDS: dict[str, str] = {
    TestState.TESTING: "testing",
    TestState.BETTER: "better",
    TestState.NOT_BETTER: "not better",
    TestState.UNDECIDED: "undecided",
    TestState.STOPPED: "stopped",
}


# "Is my new version better than the last one?" (arena/league/candidates.py, migration 0009):
# one test per new version and variant, against its bot's previous active version, its SPRT
# bounds frozen when it opens, its counts written in the transactions that record its games.
candidate_tests = Table(
    "candidate_tests",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("candidate_id", Integer, ForeignKey("versions.id"), nullable=False),
    Column("baseline_id", Integer, ForeignKey("versions.id"), nullable=False),
    Column("variant", String(32), nullable=False),
    Column("state", String(16), nullable=False),
    Column("elo0", Float, nullable=False),
    Column("elo1", Float, nullable=False),
    Column("alpha", Float, nullable=False),
    Column("beta", Float, nullable=False),
    Column("model", String(16), nullable=False),
    Column("max_pairs", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    #: games made so far (the next game is pair games_made // 2, seat order games_made % 2)
    Column("games_made", Integer, nullable=False, default=0),
    #: the pentanomial counts of its complete pairs, from the candidate's side, "n0,n1,n2,n3,n4"
    Column("pentanomial", String(64), nullable=False, default="0,0,0,0,0"),
    Column("wins", Integer, nullable=False, default=0),
    Column("draws", Integer, nullable=False, default=0),
    Column("losses", Integer, nullable=False, default=0),
    Column("llr", Float, nullable=False, default=0.0),
    Column("elo", Float),
    Column("elo_ci95", Float),
    Column("los", Float),
    Column("note", Text),  # why it stopped
    Column("created_at", String(32), nullable=False),
    Column("decided_at", String(32)),
    UniqueConstraint("candidate_id", "variant"),
    Index("ix_candidate_tests_state", "state"),
    Index("ix_candidate_tests_baseline", "baseline_id"),
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


# The worker fleet (`arena league worker`, arena/league/db/fleet.py). A worker's heartbeat is the
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
    #: its last games, oldest first: `s` a host stall, `.` any other end (db/fleet.py's RECENT kept)
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
# arena/league/tourjobs.py; db/mailbox.py): the bots' archives by content hash, and each
# attempt's outcome, inserted once per (run, game, attempt) whatever the number of workers that
# played it.
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


class SeasonState(StrEnum):
    """A season is open (its games are rated, one at a time at most) or closed (kept)."""

    OPEN = "open"
    CLOSED = "closed"


# Seasons (arena/league/db/seasons.py, migration 0010): the open season's ratings are the `ratings`
# table; a closed season's are kept in `season_ratings`, copied at its close.
seasons = Table(
    "seasons",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("state", String(16), nullable=False),
    Column("opened_at", String(32), nullable=False),
    Column("closed_at", String(32)),
)


season_ratings = Table(
    "season_ratings",
    metadata,
    Column("season_id", Integer, ForeignKey("seasons.id"), primary_key=True),
    Column("version_id", Integer, ForeignKey("versions.id"), primary_key=True),
    Column("variant", String(32), primary_key=True),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("score", Float, nullable=False),
    Column("games", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("draws", Integer, nullable=False),
    Column("losses", Integer, nullable=False),
    Column("forfeits", Integer, nullable=False),
    Column("last_game_at", String(32)),
    # the official (Bradley-Terry) rating at the close, if fitted
    Column("elo", Float),
    Column("ci95", Float),
    # the version's state at the close (a retired version shows on ?all only, as live)
    Column("state", String(16), nullable=False),
    Index("ix_season_ratings_order", "season_id", "variant", "score"),
)


class FinalState(StrEnum):
    """A final is running until its bracket (or table) is complete; an admin may stop it."""

    RUNNING = "running"
    FINISHED = "finished"
    STOPPED = "stopped"


# Finals (arena/league/db/finals.py, migration 0010): the finalists are fixed at the start (version
# ids in seed order); everything else, the bracket included, is derived from the final's games
# (kind `final`, schedule_key `final/<id>/...`).
finals = Table(
    "finals",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("season_id", Integer, ForeignKey("seasons.id"), nullable=False),
    Column("variant", String(32), nullable=False),
    Column("format", String(16), nullable=False),  # knockout or round-robin
    Column("pairs", Integer, nullable=False),
    Column("extra_pairs", Integer, nullable=False),
    Column("entrants", Text, nullable=False),  # JSON: version ids, best seed first
    Column("state", String(16), nullable=False),
    Column("created_at", String(32), nullable=False),
    Column("finished_at", String(32)),
    Column("champion", Integer),  # a version id, once decided
    # JSON {entrant index: why}: finalists disqualified mid-final (an admin disabled the bot),
    # who forfeit every game of it not finished by then (migration 0011)
    Column("forfeits", Text),
    Index("ix_finals_state", "state"),
)
