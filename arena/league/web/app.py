"""The league's ASGI application: routes as data, errors as JSON for the API and pages for people.

`create_app` is the one place the Starlette app is wired: the JSON API's routes (api.py), the
pages, the static files, the login session (auth.py), any extra routes a caller adds, and the
exception handlers that turn a `LeagueError` into its 4xx status: under `/api/` a JSON body
naming the problem and the field, as the CLI turns an `ArenaError` into one line and exit 2;
elsewhere an error page, or the login form when a page needs a user. Anything else escaping an
endpoint is a bug: a 500 with a generic body, the traceback in the server's log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute

from arena.league.errors import LeagueError
from arena.league.service import League
from arena.league.web.api import api_routes
from arena.league.web.auth import auth_routes, current_user, session_middleware
from arena.league.web.live import live_routes
from arena.league.web.pages import page_routes
from arena.league.web.play import play_routes
from arena.league.web.render import render, static_routes
from arena.league.web.season_pages import season_routes
from arena.league.web.submit import submit_routes
from arena.league.web.workers import worker_routes


def error_body(status: int, message: str, field: str | None = None) -> dict:
    return {"error": {"status": status, "message": message, "field": field}}


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


async def _page_error(request: Request, status: int, message: str) -> Response:
    if status == 401:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target)}", status_code=303)
    try:
        await current_user(request)
    except Exception:  # an error page must not fail on the user lookup
        request.state.user = None
    return render(request, "error.html", status=status, code=status, message=message)


async def _league_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, LeagueError)
    if not _is_api(request):
        return await _page_error(request, exc.status, str(exc))
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return JSONResponse(error_body(exc.status, str(exc), exc.field), exc.status, headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if not _is_api(request):
        return await _page_error(request, exc.status_code, str(exc.detail))
    return JSONResponse(error_body(exc.status_code, str(exc.detail)), exc.status_code, exc.headers)


async def _server_error(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(error_body(500, "internal error (see the server log)"), 500)


@asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    """The server's run: the games people play against bots live here (challenges.py)."""
    async with app.state.league.challenges.running():
        yield


def create_app(league: League, extra_routes: Sequence[BaseRoute] = ()) -> Starlette:
    app = Starlette(
        routes=[
            *api_routes(),
            *auth_routes(),
            *worker_routes(),
            *submit_routes(),
            *play_routes(),
            *live_routes(),
            *page_routes(),
            *season_routes(),
            *extra_routes,
            *static_routes(),
        ],
        middleware=[session_middleware(league)],
        lifespan=_lifespan,
        exception_handlers={
            LeagueError: _league_error,
            HTTPException: _http_error,
            Exception: _server_error,
        },
    )
    app.state.league = league
    return app
