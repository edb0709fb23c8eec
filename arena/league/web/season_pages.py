"""The seasons' pages: every season, one season's leaderboards and games, and the admin page
that opens and closes seasons (arena/league/db/seasons.py).

A closed season is browsable as it stood at its close: its leaderboards are the ratings kept
then, its games list holds every game made in it (including one that finished after the close,
unrated). The open season's page shows the live leaderboards. Opening and closing are POSTs
checked against CSRF, for admins only; closing asks for a ticked box, since it stops the
ladder's rated games until the next season opens.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.league.db import schema, seasons, views
from arena.league.errors import LeagueError
from arena.league.service import League
from arena.league.web.auth import current_user, require_user
from arena.league.web.render import reason_words, render
from arena.league.web.session import check_csrf

#: rows of each variant's leaderboard on a season's page, and games per page of its list
SEASON_ROWS = 50
SEASON_GAMES = 50


def _league(request: Request) -> League:
    return request.app.state.league


async def seasons_page(request: Request) -> Response:
    user = await current_user(request)
    league = _league(request)
    return render(
        request,
        "seasons.html",
        title="Seasons",
        seasons=await league.season_list(),
        admin=bool(user and user.is_admin),
    )


def _season_games(conn: Any, season_id: int, before: int | None) -> list[dict[str, Any]]:
    return views.list_games(
        conn,
        limit=SEASON_GAMES + 1,
        offset=0,
        before=before,
        season_id=season_id,
        states=(schema.GameState.FINISHED,),
    )


async def season_page(request: Request) -> Response:
    await current_user(request)
    league = _league(request)
    season = await league.season(request.path_params["name"])
    raw = request.query_params.get("before")
    before = int(raw) if raw and raw.isdigit() else None
    boards = {
        v: await league.leaderboard(v, limit=SEASON_ROWS, offset=0, season=season.name)
        for v in league.variants
    }
    rows = await league.cached_read(_season_games, season.id, before)
    page, more = rows[:SEASON_GAMES], len(rows) > SEASON_GAMES
    older = "?" + urlencode({"before": page[-1]["id"]}) if more and page else None
    finals = await league.finals(season.name)
    return render(
        request,
        "season.html",
        title=f"Season {season.name}",
        season=season,
        boards=boards,
        games=page,
        older=older,
        before=before,
        finals=finals,
        reason_words=reason_words,
    )


async def admin_page(request: Request, error: str = "", status: int = 200) -> Response:
    user = await require_user(request)
    _league(request).check_admin(user)
    league = _league(request)
    return render(
        request,
        "admin_seasons.html",
        status=status,
        title="Seasons and finals (admin)",
        seasons=await league.season_list(),
        finals=await league.finals(None),
        variants=league.variants,
        error=error,
    )


async def admin_seasons(request: Request) -> Response:
    return await admin_page(request)


async def admin_post(request: Request) -> Response:
    user = await require_user(request)
    form = await check_csrf(request)
    league = _league(request)
    league.check_admin(user)
    action = form.get("action")
    try:
        if action == "open":
            await league.open_season(user, str(form.get("name", "")).strip())
        elif action == "close":
            if form.get("confirm") != "yes":
                return await admin_page(request, "Tick the box to close the season.", 422)
            await league.close_season(user)
        elif action == "final":
            await league.start_final(
                user,
                season=str(form.get("season", "")),
                variant=str(form.get("variant", "")),
                top=_form_int(form, "top"),
                fmt=str(form.get("format", "")),
                pairs=_form_int(form, "pairs"),
            )
        elif action == "stop-final":
            await league.stop_final(user, _form_int(form, "final"))
        else:
            raise LeagueError("action: expected open, close, final or stop-final", status=422)
    except LeagueError as e:
        if e.status in (401, 403):
            raise
        return await admin_page(request, str(e), 422 if e.status == 422 else 409)
    return RedirectResponse("/admin/seasons", status_code=303)


def _form_int(form: Any, name: str) -> int:
    raw = str(form.get(name, "")).strip()
    if not raw.isdigit():
        raise LeagueError(f"{name}: expected a whole number, got {raw!r}", status=422, field=name)
    return int(raw)


async def final_page(request: Request) -> Response:
    await current_user(request)
    league = _league(request)
    raw = request.path_params["final_id"]
    if not raw.isdigit():
        raise LeagueError(f"no final {raw!r}", status=404)
    final = await league.final(int(raw))
    return render(
        request,
        "final.html",
        title=f"Final {final['id']}: {final['variant']}, season {final['season']}",
        final=final,
        quote=quote,
    )


def season_routes() -> list[Route]:
    return [
        Route("/seasons", seasons_page),
        Route("/seasons/{name}", season_page),
        Route("/finals/{final_id}", final_page),
        Route("/admin/seasons", admin_seasons, methods=["GET"]),
        Route("/admin/seasons", admin_post, methods=["POST"]),
    ]


__all__ = ["season_routes", "seasons"]
