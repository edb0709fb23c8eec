"""The league's ASGI application: routes as data, errors as JSON.

`create_app` is the one place the Starlette app is wired: the JSON API's routes (api.py), any
extra routes a caller adds (the pages), and the exception handlers that turn a `LeagueError`
into its 4xx status with a JSON body naming the problem and the field, as the CLI turns an
`ArenaError` into one line and exit 2. Anything else escaping an endpoint is a bug: a 500 with
a generic body, the traceback in the server's log.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute

from arena.league.errors import LeagueError
from arena.league.service import League
from arena.league.web.api import api_routes
from arena.league.web.workers import worker_routes


def error_body(status: int, message: str, field: str | None = None) -> dict:
    return {"error": {"status": status, "message": message, "field": field}}


async def _league_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, LeagueError)
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    return JSONResponse(error_body(exc.status, str(exc), exc.field), exc.status, headers)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    return JSONResponse(error_body(exc.status_code, str(exc.detail)), exc.status_code, exc.headers)


async def _server_error(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse(error_body(500, "internal error (see the server log)"), 500)


def create_app(league: League, extra_routes: Sequence[BaseRoute] = ()) -> Starlette:
    app = Starlette(
        routes=[*api_routes(), *worker_routes(), *extra_routes],
        exception_handlers={
            LeagueError: _league_error,
            HTTPException: _http_error,
            Exception: _server_error,
        },
    )
    app.state.league = league
    return app
