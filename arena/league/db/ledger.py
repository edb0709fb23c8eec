"""The league's ledger: games as jobs, recorded exactly once, and the ratings they move.

Exactly-once recording. A game row is the job: the scheduler claims it (`claim_game`, state
queued -> running, attempt + 1), an executor plays it, and the result is written by
`record_result` with a conditional UPDATE on (game id, attempt, state running) in the same
transaction as the record, the seats' outcomes and the rating update. Zero rows updated means
the attempt is stale (the game was voided and reclaimed, or already recorded): the result is
dropped and nothing changes. A platform fault (`void_attempt`) is conditional the same way and
puts the game back in the queue, unrated, until `max_attempts` (not before its backoff's
`not_before`: arena/league/backoff.py). A server killed mid-game leaves rows `running`;
`void_running` at the next start requeues them (and `fail_challenges` fails the people's games,
whose player is gone). So every game is recorded at most once, and every claimed game is
eventually recorded or marked failed. A candidate test's game (arena/league/candidates.py) is
counted by its test in the same transaction that records it or fails it for good
(`verdicts.tally`), so its verdict inherits the rule.

Matchmaking reads here too (`candidates`, `games_per_variant`, `pair_results`), with the
official ratings refitted from them (`replace_official`): what the scheduler and the refit need
of the games, not what the pages show (arena/league/db/views.py).

Every function takes a Connection inside the caller's transaction (arena/league/db/database.py).
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import BigInteger, Boolean, Integer
from sqlalchemy.engine import Connection

from arena.league.db import verdicts
from arena.league.db.schema import (
    GameKind,
    GameState,
    SeasonState,
    VersionState,
    VoidKind,
    games,
    official,
    ratings,
    records,
    seasons,
    seats,
    tallies,
    versions,
    voids,
)
from arena.league.ratings import MU0, SIGMA0, Skill, rate
from arena.referee.outcome import now_iso, result_fields

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
    #: a candidate test's game: the test and the game pair (db/verdicts.py)
    candidate_test: int | None = None
    candidate_pair: int | None = None
    #: the game's season (arena/league/db/seasons.py); None: the season open now, if any
    season_id: int | None = None


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
    candidate_test=_p("p_candidate_test"),
    candidate_pair=_p("p_candidate_pair"),
    season_id=sa.func.coalesce(
        _p("p_season", type_=Integer),
        sa.select(seasons.c.id).where(seasons.c.state == SeasonState.OPEN).scalar_subquery(),
    ),
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
            "p_candidate_test": g.candidate_test,
            "p_candidate_pair": g.candidate_pair,
            "p_season": g.season_id,
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


def stored_record(record: dict[str, Any], record_json: bytes | None = None) -> bytes:
    """The record as `record_result` stores it: its text as the worker sent it (compact
    JSON), or encoded here, compressed (zlib, level 6: what every reader decompresses)."""
    return compress_record(record) if record_json is None else zlib.compress(record_json, 6)


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
        # rated only in its own season while that is open (arena/league/db/seasons.py), or in
        # a league that never had a season
        rated=sa.case(
            (
                sa.and_(
                    games.c.kind == GameKind.RATED,
                    sa.or_(
                        games.c.season_id == _p("p_season", type_=Integer),
                        sa.and_(games.c.season_id.is_(None), _p("p_seasonless", type_=Boolean)),
                    ),
                ),
                _p("p_rated", type_=Boolean),
            ),
            else_=sa.false(),
        ),
    )
    .returning(
        games.c.kind,
        games.c.variant,
        games.c.version0,
        games.c.version1,
        games.c.candidate_test,
        games.c.rated,
    )
)


# the open season, share-locked: a season's close (an UPDATE of this row) waits for the
# recordings that rate games in it, and the recordings after it see it closed
_OPEN_SEASON = (
    sa.select(seasons.c.id).where(seasons.c.state == SeasonState.OPEN).with_for_update(read=True)
)
_ANY_SEASON = sa.select(seasons.c.id).limit(1)


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
    compressed: bytes | None = None,
) -> bool:
    """Record a finished attempt exactly once; False (nothing written) if it is stale.

    In one transaction: the conditional UPDATE of the game row, its record, the seats'
    outcomes and, for a rated game, both versions' ratings (rows locked in id order).
    `compressed`: the record as stored (`stored_record`), made by the caller before its
    transaction, so that the rows it locks are not held while it is compressed.
    """
    f = result_fields(record)  # the one reading of a record's result (arena/referee/outcome.py)
    winner, forfeit = f.winner, f.forfeit
    season = conn.execute(_OPEN_SEASON).scalar()
    seasonless = season is None and conn.execute(_ANY_SEASON).first() is None
    g = conn.execute(
        _FINISH,
        {
            "p_season": season,
            "p_seasonless": seasonless,
            "p_game": game_id,
            "p_attempt": attempt,
            "p_now": now_iso(),
            "p_winner": winner,
            "p_result": f.result,
            "p_reason": f.reason[:64],
            "p_detail": f.detail,
            "p_forfeit": forfeit,
            "p_loser_seat": f.loser_seat,
            "p_score0": f.scores[0],
            "p_score1": f.scores[1],
            "p_turns": f.turns,
            "p_duration": f.duration,
            # both bots failing to start is no contest: recorded, shown, not rated
            "p_rated": f.rated,
        },
    ).first()
    if g is None:
        return False
    data = compressed if compressed is not None else stored_record(record, record_json)
    conn.execute(_INSERT_RECORD, {"p_game": game_id, "p_data": data})
    _bump(conn, "finished")
    points0 = 0.5 if winner is None else (1.0 if winner == 0 else 0.0)
    outcomes = (
        _outcome(points0, forfeit and points0 == 0.0),
        _outcome(1.0 - points0, forfeit and points0 == 1.0),
    )
    if g.rated:
        _rate(conn, game_id, g.variant, (g.version0, g.version1), points0, forfeit, outcomes)
    else:
        conn.execute(
            _SEAT_OUTCOMES, {"p_game": game_id, "p_out0": outcomes[0], "p_out1": outcomes[1]}
        )
    if g.candidate_test is not None:  # its test counts it in this same transaction
        verdicts.tally(conn, g.candidate_test)
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


def ensure_rating(conn: Connection, version_id: int, variant: str, *, mu: float = MU0) -> None:
    """The version's rating row in the variant, made at `mu` with a fresh sigma unless it
    exists: for a version that becomes active (`roster.finish_validation`), or seated in a
    variant added to league.toml since (`_rate`)."""
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
    row = conn.execute(
        sa.select(games.c.kind, games.c.candidate_test).where(games.c.id == game_id)
    ).first()
    game_kind, test = (row.kind, row.candidate_test) if row is not None else (None, None)
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
    if test is not None and state == GameState.FAILED:  # its pair never completes
        verdicts.tally(conn, test)
    return True


def void_running(conn: Connection, kind: VoidKind, reason: str, max_attempts: int) -> int:
    """Void every running attempt (the server that claimed them is gone); how many."""
    running = conn.execute(
        sa.select(games.c.id, games.c.attempt).where(games.c.state == GameState.RUNNING)
    ).all()
    return sum(void_attempt(conn, g, a, kind, reason, max_attempts) for g, a in running)


def fail_challenges(conn: Connection, reason: str) -> int:
    """Challenges left running by a server that stopped: failed (the person is gone)."""
    rows = conn.execute(
        sa.select(games.c.id, games.c.attempt).where(
            games.c.state == GameState.RUNNING, games.c.kind == GameKind.CHALLENGE
        )
    ).all()
    return sum(void_attempt(conn, g, a, VoidKind.SERVER_STOPPED, reason, 1) for g, a in rows)


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


# --- a worker's slot (arena/league/slot.py): the row it claims, under lock -------------------


def seated_archives(conn: Connection, game_id: int) -> list[str] | None:
    """The archive hashes of the game's two versions; None if it needs no playing."""
    row = conn.execute(
        sa.select(games.c.state, games.c.version0, games.c.version1).where(games.c.id == game_id)
    ).first()
    if row is None or row.state in (GameState.FINISHED, GameState.FAILED):
        return None
    sha = archives(conn, [row.version0, row.version1])
    return [sha[row.version0], sha[row.version1]]


def archives(conn: Connection, version_ids: Sequence[int]) -> dict[int, str]:
    """The archive hash of each of these versions, by version id."""
    return dict(
        conn.execute(
            sa.select(versions.c.id, versions.c.archive_sha256).where(
                versions.c.id.in_(version_ids)
            )
        ).all()
    )


def lock_game(conn: Connection, game_id: int) -> Any | None:
    """The game's state, attempt and not_before, its row locked (FOR UPDATE) until the
    caller's transaction ends: whatever the slot decides from them holds when it commits."""
    return conn.execute(
        sa.select(games.c.state, games.c.attempt, games.c.not_before)
        .where(games.c.id == game_id)
        .with_for_update()
    ).first()


def lock_ratings(conn: Connection, variant: str, version_ids: Sequence[int]) -> None:
    """Lock the seated versions' rating rows in id order, as `record_result` locks them: games
    sharing a version then record one after the other, so their finished_at order is the order
    in which their ratings changed, and a replay in that order gives the same ratings."""
    conn.execute(
        sa.select(ratings.c.version_id)
        .where(ratings.c.variant == variant, ratings.c.version_id.in_(version_ids))
        .order_by(ratings.c.version_id)
        .with_for_update()
    )


def game_state(conn: Connection, game_id: int) -> str:
    return conn.execute(sa.select(games.c.state).where(games.c.id == game_id)).scalar_one()


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


def pair_results(
    conn: Connection, variant: str, season_id: int | None = None
) -> list[tuple[int, int, float, int]]:
    """(version a, version b, points of a, games) over the variant's rated games, a < b (of
    one season, given its id)."""
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
            sa.true() if season_id is None else games.c.season_id == season_id,
        )
        .group_by(a, b)
    )
    return [(int(x), int(y), float(p), int(n)) for x, y, p, n in rows]


def replace_official(conn: Connection, variant: str, rows: list[dict[str, Any]]) -> None:
    conn.execute(official.delete().where(official.c.variant == variant))
    if rows:
        conn.execute(official.insert(), [{"variant": variant, **r} for r in rows])
