"""What the pages and the API read: the league's read models, each one query or a few.

Each function answers one screen or one endpoint (the leaderboard, a bot, a game and its seats,
the games lists, the queue, the games in flight, a bot's rating history and crosstable) with
plain dicts and small dataclasses, shaped for showing: server paths and bots' private output
are already left out (arena/league/privacy.py). The web layer reads only these, through
`League.read` or `League.cached_read` (arena/league/service.py), and writes only through the
service. Each query is shaped for its index, so a page costs its rows, not the league's size:
the docstrings say which index serves it.

Every function takes a Connection inside the caller's transaction (arena/league/db/database.py).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Integer, String
from sqlalchemy.engine import Connection

from arena.league.db.roster import (
    VERSION_COLUMNS,
    Version,
    version,
    version_from_row,
    versions_in_state,
)
from arena.league.db.schema import (
    HUMAN_PREFIX,
    GameKind,
    GameState,
    VersionState,
    bots,
    games,
    official,
    ratings,
    seats,
    tallies,
    users,
    versions,
    voids,
)
from arena.league.db.schema import games as schema_games
from arena.league.privacy import neutral_paths, public_detail, public_manifest
from arena.league.ranks import RankTable

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
    intervals: bool = True,
) -> list[dict[str, Any]]:
    """Versions by conservative rating (mu - 3 sigma), with their official Elo if fitted and
    (`intervals`) the 95% interval of their true place (`rank_low`, `rank_high`; None
    without).

    `rank` is always the place by rating; `sort` (one of LEADERBOARD_SORTS) only orders the
    rows, ties broken by rank. A variant has at most a few thousand versions, so any order is
    a sort of that many rows."""
    stmt = _leaderboard_statement(include_retired, sort, descending)
    rows = conn.execute(stmt, {"variant": variant, "limit": limit, "offset": offset}).all()
    places = (
        rank_intervals(conn, variant, [r.version_id for r in rows], include_retired)
        if intervals
        else {}
    )
    return [
        leaderboard_row(
            offset + i + 1 if r.rank is None else r.rank,
            r,
            places.get(r.version_id, (None, None)),
        )
        for i, r in enumerate(rows)
    ]


def leaderboard_row(rank: int, r: Any, place: tuple[int | None, int | None]) -> dict[str, Any]:
    """One row of a leaderboard as the pages and the API show it, from a row of the ratings
    joined with its version, bot and owner: the live table's and a closed season's kept one
    (arena/league/db/seasons.py) are the same shape. `place` is the rank interval."""
    return {
        "rank": rank,
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
        "rank_low": place[0],
        "rank_high": place[1],
    }


def rank_intervals(
    conn: Connection, variant: str, version_ids: Sequence[int], include_retired: bool = False
) -> dict[int, tuple[int, int]]:
    """The 95% interval of the true place (arena/league/ranks.py) of each of `version_ids`
    among the versions the leaderboard ranks: one read of the variant's (mu, sigma), through
    the ratings' (variant) index, a few thousand rows at most."""
    if not version_ids:
        return {}
    states = [VersionState.ACTIVE]
    if include_retired:
        states += [VersionState.RETIRED, VersionState.DISABLED]
    table = conn.execute(
        sa.select(ratings.c.version_id, ratings.c.mu, ratings.c.sigma)
        .join(versions, versions.c.id == ratings.c.version_id)
        .where(ratings.c.variant == variant, versions.c.state.in_(states))
    ).all()
    return intervals_among(table, version_ids)


def intervals_among(
    table: Sequence[tuple[int, float, float]], version_ids: Sequence[int]
) -> dict[int, tuple[int, int]]:
    """The 95% place interval of each of `version_ids` in a table of (version id, mu, sigma):
    the live ratings' or a closed season's kept ones (arena/league/db/seasons.py)."""
    where = {vid: i for i, (vid, _, _) in enumerate(table)}
    ranks = RankTable([(mu, sigma) for _, mu, sigma in table])
    out = {}
    for vid in version_ids:
        iv = ranks.interval(where[vid])
        out[vid] = (iv.low, iv.high)
    return out


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


def bot_versions(conn: Connection, bot_id: int) -> list[Version]:
    rows = conn.execute(
        sa.select(*VERSION_COLUMNS)
        .join(bots, bots.c.id == versions.c.bot_id)
        .where(versions.c.bot_id == bot_id)
        .order_by(versions.c.number.desc())
    )
    return [version_from_row(r) for r in rows]


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
    since: str | None = None,
    until: str | None = None,
    reason: str | None = None,
    season_id: int | None = None,
) -> list[dict[str, Any]]:
    """Newest first: by id (the order games were scheduled), or with `by_finish` by the time
    they finished (`finished_at`, then id: the API's order, which a person expects; through
    the (finished_at, id) index, or for one bot a sort of that bot's games). Filtering by bot
    goes through the seats table's (bot_id, game_id) index, so a bot's page is an index range
    scan whatever the number of games. `before` (a game id) pages by key: the page after the
    one that ended with that game, as fast at the millionth game as at the first (an offset
    would count its way there). `since` and `until` bound the finish time (timestamps as the
    tables keep them: `since` included, `until` excluded) and `reason` is a reason code: the
    league client's filters (`arena league games`, `download --since`)."""
    order = (games.c.finished_at.desc(), games.c.id.desc()) if by_finish else (games.c.id.desc(),)
    q = _games_select().where(games.c.state.in_(list(states)))
    if season_id is not None:  # one season's games (arena/league/db/seasons.py)
        q = q.where(games.c.season_id == season_id)
    if before is not None:
        q = q.where(games.c.id < before)
    game_filters = []
    if since is not None:
        game_filters.append(games.c.finished_at >= since)
    if until is not None:
        game_filters.append(games.c.finished_at < until)
    if reason is not None:
        game_filters.append(games.c.reason == reason)
    q = q.where(*game_filters)
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
        if by_finish or game_filters or season_id is not None:
            s = s.join(games, games.c.id == seats.c.game_id).where(*game_filters)
            if season_id is not None:
                s = s.where(games.c.season_id == season_id)
        s = s.order_by(*order) if by_finish else s.order_by(seats.c.game_id.desc())
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


def _in_season(query: Any, season_id: int | None) -> Any:
    """`query` over seats kept to the games of one season (None: every game). A chart drawn
    across a season's start would fall to the prior there, where every rating restarts
    (arena/league/db/seasons.py): a rating line is one season's."""
    if season_id is None:
        return query
    return query.join(games, games.c.id == seats.c.game_id).where(games.c.season_id == season_id)


def rating_history(
    conn: Connection, version_id: int, variant: str, *, limit: int, season_id: int | None = None
) -> list[RatingPoint]:
    """The version's rating after each of its last `limit` rated games in the variant (of
    season `season_id`, if given), oldest first (an index range scan on (version, variant,
    game))."""
    query = sa.select(*_rating_point_columns()).where(
        seats.c.version_id == version_id,
        seats.c.variant == variant,
        seats.c.mu_after.is_not(None),
    )
    rows = conn.execute(_in_season(query, season_id).order_by(seats.c.game_id.desc()).limit(limit))
    return [RatingPoint(*r) for r in reversed(rows.all())]


def bot_last_season(conn: Connection, bot_id: int) -> int | None:
    """The season of the bot's latest rated game (None: none, or a league without seasons):
    the open season's once it has played in it, since games are rated only while their season
    is open."""
    return conn.execute(
        sa.select(games.c.season_id)
        .select_from(seats.join(games, games.c.id == seats.c.game_id))
        .where(seats.c.bot_id == bot_id, seats.c.mu_after.is_not(None))
        .order_by(seats.c.game_id.desc())
        .limit(1)
    ).scalar()


def bot_rating_history(
    conn: Connection, bot_id: int, *, limit: int, season_id: int | None = None
) -> list[RatingPoint]:
    """The bot's ratings (any version, any variant) after its last `limit` rated games (of
    season `season_id`, if given), oldest first."""
    query = sa.select(*_rating_point_columns()).where(
        seats.c.bot_id == bot_id, seats.c.mu_after.is_not(None)
    )
    rows = conn.execute(_in_season(query, season_id).order_by(seats.c.game_id.desc()).limit(limit))
    return [RatingPoint(*r) for r in reversed(rows.all())]


def crosstable(
    conn: Connection, bot_id: int, *, limit: int, games: int = 2000
) -> list[dict[str, Any]]:
    """The bot's results over its last `games` finished ladder games against its `limit` most
    frequent opponents (bots) in them, from its side: games, wins, draws, losses (forfeits
    among the losses), points. Bounded by `games`, a bot page costs the same after a year.

    Ladder games only (kind `rated`, in any season): a candidate test's games are the new
    version against the bot's own previous one (the bot would be its own opponent; the
    verdicts show them), a final's are a handful of games under other stakes (its page shows
    them), and a /play game's opponent is a person, not a bot."""
    mine = (
        sa.select(seats.c.game_id, seats.c.seat, seats.c.outcome)
        .select_from(seats.join(schema_games, schema_games.c.id == seats.c.game_id))
        .where(
            seats.c.bot_id == bot_id,
            seats.c.outcome.is_not(None),
            schema_games.c.kind == GameKind.RATED,
        )
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


def active_bots(conn: Connection) -> list[dict[str, Any]]:
    """The bots a person can challenge: each enabled bot's active version, by name."""
    rows = conn.execute(
        sa.select(bots.c.name, versions.c.number, versions.c.id)
        .join(versions, versions.c.bot_id == bots.c.id)
        .where(versions.c.state == VersionState.ACTIVE, bots.c.disabled.is_(False))
        .order_by(bots.c.name)
    )
    return [{"bot": r.name, "version": r.number, "version_id": r.id} for r in rows]


def submission(conn: Connection, version_id: int) -> dict[str, Any] | None:
    """A submitted version and, while it waits for validation, how many are ahead of it."""
    v = version(conn, version_id)
    if v is None:
        return None
    ahead = 0
    if v.state == VersionState.VALIDATING:
        waiting = versions_in_state(conn, VersionState.VALIDATING)
        ahead = sum(1 for w in waiting if w.id < v.id)
    return {"version": v, "ahead": ahead}
