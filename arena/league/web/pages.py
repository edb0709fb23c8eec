"""The league's read-only pages: home, leaderboards, the games list, a bot's page, a game's page
(the shared replay viewer) and a game's logs for its bots' owners.

Server-rendered from templates (every value autoescaped: bot names, owners, logs and stderr are
hostile) and complete without JavaScript: sorting is links (`?sort=&dir=`), the rating charts
are SVG drawn here (arena/viewer/charts.py, twice: wide, and narrow for a phone, where the
wide drawing's text would shrink to unreadable), lists page by links; only the replay's
stepping needs the viewer's script. A page past the end of a list is a 404 that says so and
links to the last page (`past_end`), never an empty list that reads like an empty league.
Each page is a few indexed queries whatever the number of games (the league benchmark times
them on a million): lists are bounded, the games list pages by key
(`?before=ID`), histories read the last few hundred seats of an index range.

Owner-only parts: a game's stderr and logs (`League.logs`, 403 for others) and the bot page's
retire/reactivate form (`League.retire_bot`), a POST checked against CSRF. Retiring asks first:
the button leads to a page that says what retiring does, whose form needs its box ticked (a
POST without `confirm` only shows that page again), so it works without JavaScript.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict
from typing import Any
from urllib.parse import quote, urlencode

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.league import candidates, privacy
from arena.league.db import schema, seasons, views
from arena.league.errors import LeagueError
from arena.league.service import League, User, bot_id_filter
from arena.league.web.auth import current_user, require_user
from arena.league.web.live import finished_replay, in_flight_games, live_context
from arena.league.web.render import reason_words, render
from arena.league.web.session import check_csrf
from arena.referee.record import GameRecord
from arena.viewer.charts import line_chart
from arena.viewer.replay import turn_extras

#: rows per page of the leaderboard and of the games list
LEADERBOARD_PAGE = 100
GAMES_PAGE = 50
#: bots drawn in a leaderboard's chart, and the games of history each line shows
CHART_BOTS = 5
CHART_GAMES = 200
#: a bot page's recent games, opponents in its crosstable and the games it covers, seats of
#: rating history
BOT_GAMES = 20
BOT_OPPONENTS = 10
BOT_CROSSTABLE_GAMES = 2000
BOT_HISTORY = 400
#: the drawing widths of a chart: for a wide screen, and for a phone (pages show one by CSS)
CHART_WIDE, CHART_NARROW = 720, 380
#: the leaderboard columns, as (sort key, heading, numeric, default direction)
COLUMNS = (
    ("rank", "#", True, "asc"),
    ("bot", "bot", False, "asc"),
    ("owner", "owner", False, "asc"),
    ("version", "version", True, "desc"),
    ("rating", "rating (\u03bc \u2212 3\u03c3)", True, "desc"),
    ("elo", "Elo ± 95%", True, "desc"),
    ("games", "games", True, "desc"),
    ("wins", "W", True, "desc"),
    ("draws", "D", True, "desc"),
    ("losses", "L", True, "desc"),
    ("forfeits", "forfeits", True, "desc"),
)


def _league(request: Request) -> League:
    return request.app.state.league


class ReplayCache:
    """The replays of the last `size` finished games shown, by game id. A finished game's
    record never changes, and drawing its replay (a board picture per action, the viewer's
    replay_data) is most of a game page's cost: a game linked from the home page is drawn
    once, not once per visitor."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._entries: OrderedDict[int, dict[str, Any] | None] = OrderedDict()

    async def get(self, league: League, game_id: int) -> dict[str, Any] | None:
        if game_id in self._entries:
            self._entries.move_to_end(game_id)
            return self._entries[game_id]
        replay = await finished_replay(league, game_id)
        self._entries[game_id] = replay
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return replay


def _replays(request: Request) -> ReplayCache:
    cache = getattr(request.app.state, "replays", None)
    if cache is None:
        cache = request.app.state.replays = ReplayCache()
    return cache


def _query_int(request: Request, name: str, lo: int = 0) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or len(raw) > 18 or int(raw) < lo:
        raise LeagueError(f"{name}: expected a whole number, got {raw!r}", status=422, field=name)
    return int(raw)


def _path_id(request: Request, name: str = "game_id") -> int:
    raw = request.path_params[name]
    if not raw.isdigit() or len(raw) > 18:
        raise LeagueError(f"no game {raw!r}", status=404)
    return int(raw)


def charts(series: list[tuple[str, Any]], *, title: str, x_label: str) -> Markup:
    """A line chart drawn twice, wide and narrow (the page shows the one that fits)."""
    wide = line_chart(series, title=title, x_label=x_label, width=CHART_WIDE)
    narrow = line_chart(series, title=title, x_label=x_label, width=CHART_NARROW)
    return Markup(f'<div class="chart-wide">{wide}</div><div class="chart-narrow">{narrow}</div>')


def past_end(request: Request, what: str, last: str | None, last_label: str) -> Response:
    """A page number (or key) past the end of a list: a 404 that says so and links to the last
    page there is."""
    return render(
        request,
        "past_end.html",
        status=404,
        title="Past the end",
        what=what,
        last=last,
        last_label=last_label,
    )


def seconds_words(seconds: float) -> str:
    """300 -> "5 minutes", 90 -> "90 s" (how often the official Elo is refitted)."""
    if seconds >= 120 and seconds % 60 == 0:
        return f"{int(seconds // 60)} minutes"
    return f"{seconds:g} s"


def _result_for(game: dict[str, Any], bot: str) -> str:
    """win / draw / loss / forfeit, as `bot` saw a finished game."""
    seats = [s["bot"] for s in game["seats"]]
    if game["state"] != "finished" or bot not in seats:
        return game["state"]
    seat = seats.index(bot)
    if game["winner"] is None:
        return "draw"
    if game["winner"] == seat:
        return "win"
    return "forfeit" if game.get("forfeit") else "loss"


# --- home -------------------------------------------------------------------------------------


def _home_data(conn: Any, variants: tuple[str, ...]) -> dict[str, Any]:
    return {
        "tops": {
            v: views.leaderboard(conn, v, limit=3, offset=0, intervals=False) for v in variants
        }
    }


async def home(request: Request) -> Response:
    """The variants' top bots, then the part that moves (`_home_live.html`: counts, games in
    flight, recent games), which follows the league by itself (web/live.py)."""
    await current_user(request)
    league = _league(request)

    data = await league.cached_read(_home_data, tuple(league.variants))
    return render(
        request,
        "home.html",
        variants=league.settings.games,
        tops=data["tops"],
        reason_words=reason_words,
        **await in_flight_games(league),
    )


# --- leaderboards -----------------------------------------------------------------------------


async def leaderboards(request: Request) -> Response:
    await current_user(request)
    league = _league(request)
    return render(
        request, "leaderboards.html", title="Leaderboards", variants=league.settings.games
    )


def _sort_params(request: Request) -> tuple[str, bool]:
    sort = request.query_params.get("sort", "rank")
    keys = {c[0]: c[3] for c in COLUMNS}
    if sort not in keys:
        raise LeagueError(
            f"sort: expected one of {', '.join(keys)}, got {sort!r}", status=422, field="sort"
        )
    direction = request.query_params.get("dir", keys[sort])
    if direction not in ("asc", "desc"):
        raise LeagueError(f"dir: expected asc or desc, got {direction!r}", field="dir", status=422)
    return sort, direction == "desc"


def _leaderboard_data(
    conn: Any, variant: str, sort: str, descending: bool, offset: int
) -> dict[str, Any]:
    rows = views.leaderboard(
        conn, variant, limit=LEADERBOARD_PAGE + 1, offset=offset, sort=sort, descending=descending
    )
    top = views.leaderboard(conn, variant, limit=CHART_BOTS, offset=0, intervals=False)
    # the live table is the open season's: its lines start at the season's start, where every
    # rating restarted from the prior (none open: the ladder's last games, whichever season)
    season = seasons.current(conn)
    return {
        "rows": rows,
        # only a page past the end needs the size (to name the last page)
        "size": views.leaderboard_size(conn, variant) if offset and not rows else None,
        "forfeits": views.forfeit_kinds(conn, variant, [r["version_id"] for r in rows]),
        "history": [
            (
                f"{r['bot']} v{r['version']}",
                r["games"],
                views.rating_history(
                    conn,
                    r["version_id"],
                    variant,
                    limit=CHART_GAMES,
                    season_id=season.id if season is not None else None,
                ),
            )
            for r in top
        ],
    }


async def leaderboard(request: Request) -> Response:
    await current_user(request)
    league = _league(request)
    variant = league.check_variant(request.path_params["variant"])
    sort, descending = _sort_params(request)
    page = _query_int(request, "page", 1) or 1
    offset = (page - 1) * LEADERBOARD_PAGE

    data = await league.cached_read(_leaderboard_data, variant, sort, descending, offset)
    rows = data["rows"][:LEADERBOARD_PAGE]
    order = {"sort": sort, "dir": "desc" if descending else "asc"}
    if data["size"] is not None:
        last = max(1, -(-data["size"] // LEADERBOARD_PAGE))
        return past_end(
            request,
            f"The leaderboard of {variant} has {last} page{'s' if last != 1 else ''}: "
            f"page {page} is past its end.",
            "?" + urlencode({**order, "page": last}),
            f"page {last}, the last",
        )
    chart = charts(
        [(name, _numbered(points, games)) for name, games, points in data["history"]],
        title=f"Rating (\u03bc \u2212 3\u03c3) of the top {CHART_BOTS} over their last games",
        x_label="games played in this variant",
    )

    def link(col: str, direction: str | None = None) -> str:
        default = {c[0]: c[3] for c in COLUMNS}[col]
        if direction is None:  # a header: the other direction when it is the current sort
            direction = default
            if col == sort:
                direction = "asc" if descending else "desc"
        return "?" + urlencode({"sort": col, "dir": direction})

    return render(
        request,
        "leaderboard.html",
        title=f"Leaderboard: {variant}",
        variant=variant,
        rows=rows,
        forfeits=data["forfeits"],
        columns=COLUMNS,
        refit=seconds_words(league.settings.official_every),
        sort=sort,
        descending=descending,
        link=link,
        page=page,
        more=len(data["rows"]) > LEADERBOARD_PAGE,
        page_query=lambda p: "?" + urlencode({**order, "page": p}),
        chart=chart,
    )


def _numbered(points: list[views.RatingPoint], games: int) -> list[tuple[float, float]]:
    """The last points of a version's history against its game count (the last one is its
    `games`th game), from the rating it had before the first of them."""
    if not points:
        return []
    first = games - len(points) + 1
    return [(first - 1, points[0].rating_before)] + [
        (first + i, p.rating) for i, p in enumerate(points)
    ]


# --- games ------------------------------------------------------------------------------------


#: the states the games page lists: finished games (the default) or failed ones (voided
#: `max_attempts` times: the home page's "N failed" links there)
GAME_LIST_STATES = (schema.GameState.FINISHED, schema.GameState.FAILED)


def _games_data(
    conn: Any, bot: str | None, variant: str | None, before: int | None, state: str
) -> list[dict[str, Any]]:
    bot_id = bot_id_filter(conn, bot)
    return views.list_games(
        conn,
        limit=GAMES_PAGE + 1,
        offset=0,
        bot_id=bot_id,
        variant=variant,
        before=before,
        states=(state,),
    )


async def games_list(request: Request) -> Response:
    await current_user(request)
    league = _league(request)
    q = request.query_params
    variant = q.get("variant") or None
    if variant is not None:
        league.check_variant(variant)
    bot = q.get("bot") or None
    before = _query_int(request, "before", 1)
    state = q.get("state") or schema.GameState.FINISHED
    if state not in GAME_LIST_STATES:
        raise LeagueError(
            f"state: expected one of {', '.join(GAME_LIST_STATES)}, got {state!r}",
            status=422,
            field="state",
        )

    rows = await league.cached_read(_games_data, bot, variant, before, state)
    page, more = rows[:GAMES_PAGE], len(rows) > GAMES_PAGE
    failed = state == schema.GameState.FAILED
    keep = {k: v for k, v in (("variant", variant), ("bot", bot), ("state", failed and state)) if v}
    if before is not None and not page:
        return past_end(
            request,
            f"No game older than game {before} is listed here: that is past the end of the list.",
            "?" + urlencode(keep) if keep else "/games",
            "the newest games",
        )
    older = "?" + urlencode({**keep, "before": page[-1]["id"]}) if more and page else None
    return render(
        request,
        "games.html",
        title="Failed games" if failed else "Games",
        games=page,
        failed=failed,
        variants=league.variants,
        variant=variant,
        bot=bot,
        before=before,
        older=older,
        newest="?" + urlencode(keep) if keep else "/games",
        reason_words=reason_words,
    )


async def game_page(request: Request) -> Response:
    await current_user(request)
    league = _league(request)
    game_id = _path_id(request)
    game = await league.game(game_id)
    seats = await league.read(views.game_seats, game_id)
    replay = None
    if game["state"] == "finished":
        replay = await _replays(request).get(league, game_id)
    user = request.state.user
    owns = user is not None and (user.is_admin or any(s["owner_id"] == user.id for s in seats))
    if replay is not None and owns:
        # the replay everyone sees, with the owner's bots' logs, marks and stderr beside it
        own = await league.owner_record(user, game_id)
        if own is not None:
            record, mine = own
            replay = {**replay, **turn_extras(GameRecord.from_dict(record), tuple(mine))}
    return render(
        request,
        "game.html",
        title=f"Game {game_id}",
        # come by a watch link for a game that ended since: the page says so
        ended=bool(request.query_params.get("ended")) and game["state"] in ("finished", "failed"),
        game=game,
        seats=seats,
        replay=replay,
        reason=reason_words(game, full=True),
        owns=owns,
        **await live_context(league, game_id),
    )


async def game_logs(request: Request) -> Response:
    user = await require_user(request)
    league = _league(request)
    game_id = _path_id(request)
    logs = await league.logs(user, game_id)
    game = await league.game(game_id)
    return render(request, "game_logs.html", title=f"Game {game_id}: logs", logs=logs, game=game)


# --- bots -------------------------------------------------------------------------------------


def _bot_data(conn: Any, name: str) -> dict[str, Any] | None:
    """Everything public on a bot's page (shared through the read cache)."""
    detail = views.bot_detail(conn, name)
    if detail is None:
        return None
    # public: the reports without the bot's stderr and build output (its owner reads them on
    # each version's submission page)
    vs = [
        dataclasses.replace(v, validation=privacy.public_report(v.validation))
        for v in views.bot_versions(conn, detail["id"])
    ]
    # the chart is one season's, the season of its latest rated game (the open one once it
    # has played there): across a season's start its ratings restart from the prior
    season_id = views.bot_last_season(conn, detail["id"])
    season = seasons.by_id(conn, season_id) if season_id is not None else None
    return {
        "bot": detail,
        "versions": vs,
        "ratings": {v.id: views.version_ratings(conn, v.id) for v in vs[:10]},
        "season": season,
        "history": views.bot_rating_history(
            conn, detail["id"], limit=BOT_HISTORY, season_id=season_id
        ),
        "games": views.list_games(conn, limit=BOT_GAMES, offset=0, bot_id=detail["id"]),
        "crosstable": views.crosstable(
            conn, detail["id"], limit=BOT_OPPONENTS, games=BOT_CROSSTABLE_GAMES
        ),
        "verdicts": candidates.bot_verdicts(conn, detail["id"]),
    }


async def bot_page(request: Request) -> Response:
    user = await current_user(request)
    league = _league(request)
    name = request.path_params["name"]

    data = await league.cached_read(_bot_data, name)
    if data is None or data["bot"]["name"].startswith(schema.HUMAN_PREFIX):
        raise LeagueError(f"no bot {name!r}", status=404)
    bot = data["bot"]
    owner = user is not None and (user.is_admin or user.id == bot["owner_id"])
    by_variant: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for p in data["history"]:
        points = by_variant[p.variant]
        if not points:
            points.append((0, p.rating_before))
        points.append((len(points), p.rating))
    n = len(data["history"])
    last = f"its last {n}" if n == BOT_HISTORY else f"its {n}"
    season = data["season"]
    of_season = f" of season {season.name}" if season is not None else ""
    chart = charts(
        sorted(by_variant.items()),
        title=f"Rating (\u03bc \u2212 3\u03c3) over {last} rated games{of_season}, by variant",
        x_label="its rated games in the variant (all versions, oldest first)",
    )
    active = next((v for v in data["versions"] if v.state == "active"), None)
    return render(
        request,
        "bot.html",
        title=f"Bot {bot['name']}",
        bot=bot,
        versions=data["versions"],
        states={v.id: league.version_state(v.state, v.id) for v in data["versions"]},
        ratings=data["ratings"],
        active=active,
        chart=chart if by_variant else None,
        chart_season=season,
        games=data["games"],
        crosstable=data["crosstable"],
        crosstable_games=BOT_CROSSTABLE_GAMES,
        verdicts=data["verdicts"],
        owner=owner,
        can_reactivate=bot["disabled"]
        and (bool(user and user.is_admin) or bot.get("disabled_by") == "owner"),
        result_for=_result_for,
        reason_words=reason_words,
    )


async def _retire_page(request: Request, user: User, name: str, error: str = "") -> Response:
    league = _league(request)
    data = await league.cached_read(_bot_data, name)
    if data is None or data["bot"]["name"].startswith(schema.HUMAN_PREFIX):
        raise LeagueError(f"no bot {name!r}", status=404)
    bot = data["bot"]
    if not (user.is_admin or user.id == bot["owner_id"]):
        raise LeagueError("only the bot's owner or an admin can do this", status=403)
    return render(
        request,
        "retire.html",
        status=422 if error else 200,
        title=f"Retire {bot['name']}?",
        bot=bot,
        active=next((v for v in data["versions"] if v.state == "active"), None),
        error=error,
    )


async def retire_confirm(request: Request) -> Response:
    """GET: the confirmation step before retiring (what it does, a box to tick)."""
    user = await require_user(request)
    return await _retire_page(request, user, request.path_params["name"])


async def retire(request: Request) -> Response:
    user = await require_user(request)
    form = await check_csrf(request)
    name = request.path_params["name"]
    action = form.get("action")
    if action not in ("retire", "reactivate"):
        raise LeagueError("action: expected retire or reactivate", status=422, field="action")
    if action == "retire" and form.get("confirm") != "yes":
        # not confirmed (the box left empty, or a form without it): ask, change nothing
        return await _retire_page(request, user, name, "Tick the box to confirm.")
    await _league(request).retire_bot(user, name, action == "retire")
    return RedirectResponse(f"/bots/{quote(name)}", status_code=303)


def page_routes() -> list[Route]:
    return [
        Route("/", home),
        Route("/leaderboard", leaderboards),
        Route("/leaderboard/{variant}", leaderboard),
        Route("/games", games_list),
        Route("/games/{game_id}", game_page),
        Route("/games/{game_id}/logs", game_logs),
        Route("/bots/{name}", bot_page),
        Route("/bots/{name}/retire", retire_confirm, methods=["GET"]),
        Route("/bots/{name}/retire", retire, methods=["POST"]),
    ]
