"""Seasons: an operator opens and closes them; a closed season is kept whole and browsable.

The policy, and why:

- At most one season is open. Its ratings are the live `ratings` table, so the ladder's hot
  path (matchmaking, recording) reads and writes exactly what it did before seasons existed.
- Every game belongs to the season open when it was made (`games.season_id`). A rated game is
  rated only while its season is open (the ledger decides it in the same conditional update
  that records the game, arena/league/db/ledger.py). So a game that started in a season and
  finishes after its close is recorded exactly once, in its own season (its games list shows
  it), but unrated: it moves neither the closed season's kept ratings (final at the close) nor
  the new season's fresh ones (which it was not matched under).
- Closing a season marks it closed first, then copies the live ratings, with the official
  (Bradley-Terry) Elo, into `season_ratings`. Marking it closed waits, on PostgreSQL, for every
  recording that decided "rated in this season" to commit (they hold a share lock on the open
  season's row, `open_for_recording`), and every later recording sees the season closed: the
  copy holds exactly the games rated in the season. SQLite has one writer at a time anyway.
- While no season is open the ladder makes no rated games (the scheduler asks `ladder_open`):
  the time between seasons is the finals' (arena/league/db/finals.py). A league that never had a
  season (a database made without migrations) plays on as before, its games unseasoned.
- Opening a season starts fresh ratings from the versions active now: every active version's
  rating rows go back to the prior (mu 25, sigma 25/3, no games), so each re-enters placement;
  rows of versions no longer active go (they stay in the seasons they played in), and the
  official Elo table is emptied until the next refit. Rating history stays right: each seat
  keeps the rating before and after its game, so a new season's first game starts from the
  prior and a closed season's history never changes.
- The first season, "1", is made by migration 0010 and holds every game played before.

Every function takes a Connection inside the caller's transaction (arena/league/db/database.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.db import views
from arena.league.db.ledger import ensure_rating
from arena.league.db.schema import (
    SeasonState,
    VersionState,
    bots,
    official,
    ratings,
    season_ratings,
    seasons,
    users,
    versions,
)
from arena.league.errors import LeagueError
from arena.league.ratings import MU0, SIGMA0
from arena.referee.outcome import now_iso


@dataclass(frozen=True)
class Season:
    id: int
    name: str
    state: str
    opened_at: str
    closed_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "opened_at": self.opened_at,
            "closed_at": self.closed_at,
        }


def _season(r: Any) -> Season:
    return Season(r.id, r.name, r.state, r.opened_at, r.closed_at)


def current(conn: Connection) -> Season | None:
    """The open season, if any."""
    r = conn.execute(sa.select(seasons).where(seasons.c.state == SeasonState.OPEN)).first()
    return None if r is None else _season(r)


def by_id(conn: Connection, season_id: int) -> Season | None:
    r = conn.execute(sa.select(seasons).where(seasons.c.id == season_id)).first()
    return None if r is None else _season(r)


def by_name(conn: Connection, name: str) -> Season | None:
    r = conn.execute(sa.select(seasons).where(seasons.c.name == name)).first()
    return None if r is None else _season(r)


def all_seasons(conn: Connection) -> list[Season]:
    """Every season, newest first."""
    return [_season(r) for r in conn.execute(sa.select(seasons).order_by(seasons.c.id.desc()))]


def _any(conn: Connection) -> bool:
    return conn.execute(sa.select(seasons.c.id).limit(1)).first() is not None


def ladder_open(conn: Connection) -> bool:
    """Whether the ladder makes rated games now: a season is open, or the league never had
    one."""
    return current(conn) is not None or not _any(conn)


def open_for_recording(conn: Connection) -> tuple[int | None, bool]:
    """For `ledger.record_result`: the open season's id, its row share-locked until the caller
    commits (a close waits for the recording), and whether the league has no season at all
    (then unseasoned games are rated, as before seasons)."""
    sid = conn.execute(
        sa.select(seasons.c.id)
        .where(seasons.c.state == SeasonState.OPEN)
        .with_for_update(read=True)
    ).scalar()
    if sid is not None:
        return int(sid), False
    return None, not _any(conn)


def _lock_all(conn: Connection) -> None:
    """Serialise opens and closes (two operators at once): every season row locked."""
    conn.execute(sa.select(seasons.c.id).with_for_update())


def open_season(conn: Connection, name: str, variants: Sequence[str]) -> Season:
    """Open season `name` with fresh ratings for every active version in every variant."""
    _lock_all(conn)
    now = current(conn)
    if now is not None:
        raise LeagueError(f"season {now.name!r} is open: close it first", status=409)
    if by_name(conn, name) is not None:
        raise LeagueError(f"there is already a season {name!r}", status=409, field="name")
    at = now_iso()
    sid = conn.execute(
        seasons.insert().values(name=name, state=SeasonState.OPEN, opened_at=at)
    ).inserted_primary_key[0]
    active = sa.select(versions.c.id).where(versions.c.state == VersionState.ACTIVE)
    conn.execute(ratings.delete().where(ratings.c.version_id.not_in(active)))
    conn.execute(
        ratings.update().values(
            mu=MU0,
            sigma=SIGMA0,
            score=MU0 - 3 * SIGMA0,
            games=0,
            wins=0,
            draws=0,
            losses=0,
            forfeits=0,
            last_game_at=None,
        )
    )
    conn.execute(official.delete())
    for vid in conn.execute(active.order_by(versions.c.id)).scalars().all():
        for variant in variants:
            ensure_rating(conn, vid, variant)
    return Season(int(sid), name, SeasonState.OPEN, at, None)


def close_season(conn: Connection) -> Season:
    """Close the open season and keep its ratings (see the module's docstring for the order)."""
    _lock_all(conn)
    now = current(conn)
    if now is None:
        raise LeagueError("no season is open", status=409)
    at = now_iso()
    conn.execute(
        seasons.update()
        .where(seasons.c.id == now.id)
        .values(state=SeasonState.CLOSED, closed_at=at)
    )
    kept = sa.select(
        sa.literal(now.id).label("season_id"),
        ratings.c.version_id,
        ratings.c.variant,
        ratings.c.mu,
        ratings.c.sigma,
        ratings.c.score,
        ratings.c.games,
        ratings.c.wins,
        ratings.c.draws,
        ratings.c.losses,
        ratings.c.forfeits,
        ratings.c.last_game_at,
        official.c.elo,
        official.c.ci95,
        versions.c.state,
    ).select_from(
        ratings.join(versions, versions.c.id == ratings.c.version_id).outerjoin(
            official,
            sa.and_(
                official.c.version_id == ratings.c.version_id,
                official.c.variant == ratings.c.variant,
            ),
        )
    )
    conn.execute(
        season_ratings.insert().from_select(
            [
                "season_id",
                "version_id",
                "variant",
                "mu",
                "sigma",
                "score",
                "games",
                "wins",
                "draws",
                "losses",
                "forfeits",
                "last_game_at",
                "elo",
                "ci95",
                "state",
            ],
            kept,
        )
    )
    return Season(now.id, now.name, SeasonState.CLOSED, now.opened_at, at)


def kept_leaderboard(
    conn: Connection,
    season_id: int,
    variant: str,
    *,
    limit: int,
    offset: int,
    include_retired: bool = False,
) -> list[dict[str, Any]]:
    """A closed season's leaderboard as it stood at the close, shaped as the live one
    (arena/league/db/views.py `leaderboard`), by conservative rating."""
    r = season_ratings.c
    states = [VersionState.ACTIVE]
    if include_retired:
        states += [VersionState.RETIRED, VersionState.DISABLED]
    rows = conn.execute(
        sa.select(
            season_ratings,
            bots.c.name.label("bot"),
            users.c.name.label("owner"),
            versions.c.number,
        )
        .join(versions, versions.c.id == r.version_id)
        .join(bots, bots.c.id == versions.c.bot_id)
        .join(users, users.c.id == bots.c.owner_id)
        .where(r.season_id == season_id, r.variant == variant, r.state.in_(states))
        .order_by(r.score.desc(), r.version_id)
        .limit(limit)
        .offset(offset)
    ).all()
    # the 95% interval of each true place, among the versions this table ranks, from the
    # ratings as kept at the close (arena/league/ranks.py, as the live leaderboard)
    table = conn.execute(
        sa.select(r.version_id, r.mu, r.sigma).where(
            r.season_id == season_id, r.variant == variant, r.state.in_(states)
        )
    ).all()
    places = views.intervals_among(table, [x.version_id for x in rows])
    return [
        views.leaderboard_row(offset + i + 1, x, places[x.version_id]) for i, x in enumerate(rows)
    ]


def ranking(conn: Connection, season: Season, variant: str, top: int) -> list[int]:
    """The season's best `top` versions in the variant (version ids, best first): a closed
    season's kept ratings, an open season's live ones (active versions only, as listed)."""
    if season.state == SeasonState.CLOSED:
        rows = kept_leaderboard(conn, season.id, variant, limit=top, offset=0)
    else:
        rows = views.leaderboard(conn, variant, limit=top, offset=0)
    return [int(r["version_id"]) for r in rows]
