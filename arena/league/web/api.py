"""The JSON API, version 1 (docs/league.md, openapi.json beside this module).

Each endpoint parses its request (bad values are a 422 naming the parameter), calls one
service method and returns JSON. Lists are paginated with `limit` (1..200, default 50) and
`offset`, and answer `{"items": [...], "limit", "offset", "next"}` where `next` is the offset
of the next page or null.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.league.db.schema import OUTCOMES
from arena.league.errors import LeagueError
from arena.league.service import League
from arena.league.when import BadTimestamp, table_time

MAX_LIMIT = 200


def _league(request: Request) -> League:
    return request.app.state.league


def public(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable:
    """A public read whose encoded answer is shared through the league's read cache (at most a
    second old, dropped when a result is recorded), keyed by the full URL: a busy leaderboard
    is queried and encoded a few times a second, not once per request."""

    async def cached(request: Request) -> Response:
        league = _league(request)
        key = ("GET", request.url.path, request.url.query)
        response = await league.cache.get_or_make(
            key, lambda: endpoint(request), keep=lambda r: r.status_code == 200
        )
        if response.status_code != 200:
            return response
        return Response(response.body, media_type="application/json")

    return cached


def _int(request: Request, name: str, default: int, lo: int, hi: int | None = None) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise LeagueError(
            f"{name}: expected an integer, got {raw!r}", status=422, field=name
        ) from None
    if value < lo or (hi is not None and value > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise LeagueError(f"{name}: must be {bound}, got {value}", status=422, field=name)
    return value


def _page(request: Request) -> tuple[int, int]:
    return _int(request, "limit", 50, 1, MAX_LIMIT), _int(request, "offset", 0, 0)


def _paged(items: list[Any], limit: int, offset: int, **extra: Any) -> JSONResponse:
    nxt = offset + limit if len(items) == limit else None
    return JSONResponse({**extra, "items": items, "limit": limit, "offset": offset, "next": nxt})


def _path_int(request: Request, name: str) -> int:
    raw = request.path_params[name]
    try:
        value = int(raw)
    except ValueError:
        raise LeagueError(
            f"{name}: expected an integer, got {raw!r}", status=422, field=name
        ) from None
    if not 0 <= value < 2**63:
        raise LeagueError(f"{name}: out of range", status=422, field=name)
    return value


def _flag(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "false").lower()
    if raw not in ("true", "false", "1", "0"):
        raise LeagueError(f"{name}: expected true or false, got {raw!r}", status=422, field=name)
    return raw in ("true", "1")


async def status(request: Request) -> Response:
    return JSONResponse(await _league(request).status())


async def leaderboard(request: Request) -> Response:
    limit, offset = _page(request)
    variant = request.path_params["variant"]
    season = request.query_params.get("season") or None
    items = await _league(request).leaderboard(
        variant,
        limit=limit,
        offset=offset,
        include_retired=_flag(request, "all"),
        season=season,
    )
    extra = {"season": season} if season else {}
    return _paged(items, limit, offset, variant=variant, **extra)


async def bots(request: Request) -> Response:
    limit, offset = _page(request)
    return _paged(await _league(request).bots(limit=limit, offset=offset), limit, offset)


async def bot(request: Request) -> Response:
    return JSONResponse(await _league(request).bot(request.path_params["name"]))


async def version(request: Request) -> Response:
    """Public; with its owner's (or an admin's) token, the validation report in full."""
    league = _league(request)
    header = request.headers.get("authorization")
    user = await league.authenticate(header) if header else None
    return JSONResponse(
        await league.version(request.path_params["name"], _path_int(request, "number"), user)
    )


async def games(request: Request) -> Response:
    limit, offset = _page(request)
    q = request.query_params
    outcome = q.get("result")
    if outcome is not None and outcome not in OUTCOMES:
        raise LeagueError(
            f"result: expected one of {', '.join(OUTCOMES)}, got {outcome!r}",
            status=422,
            field="result",
        )
    reason = q.get("reason")
    if reason is not None and not _REASON.fullmatch(reason):
        raise LeagueError(
            f"reason: expected a reason code (letters, digits, '_'), got {reason!r}",
            status=422,
            field="reason",
        )
    items = await _league(request).games(
        limit=limit,
        offset=offset,
        bot=q.get("bot"),
        variant=q.get("variant"),
        outcome=outcome,
        since=_when(request, "since"),
        until=_when(request, "until"),
        reason=reason,
        season=q.get("season") or None,
    )
    return _paged(items, limit, offset)


#: a reason code: the arena's and the engines' are lower-case words joined by '_'
_REASON = re.compile(r"[A-Za-z0-9_]{1,64}")


def _when(request: Request, name: str) -> str | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        return table_time(raw, name)
    except BadTimestamp as e:
        raise LeagueError(str(e), status=422, field=name) from None


async def game(request: Request) -> Response:
    return JSONResponse(await _league(request).game(_path_int(request, "game_id")))


async def record(request: Request) -> Response:
    return JSONResponse(await _league(request).record(_path_int(request, "game_id")))


async def logs(request: Request) -> Response:
    league = _league(request)
    user = await league.authenticate(request.headers.get("authorization"))
    return JSONResponse(await league.logs(user, _path_int(request, "game_id")))


async def queue(request: Request) -> Response:
    limit, offset = _page(request)
    data = await _league(request).queue(limit=limit, offset=offset)
    return _paged(data["items"], limit, offset, counts=data["counts"])


async def me(request: Request) -> Response:
    user = await _league(request).authenticate(request.headers.get("authorization"))
    return JSONResponse({"name": user.name, "admin": user.is_admin})


async def disable_bot(request: Request) -> Response:
    league = _league(request)
    user = await league.authenticate(request.headers.get("authorization"))
    await league.disable_bot(user, request.path_params["name"], not _flag(request, "enable"))
    return JSONResponse({"ok": True})


async def disable_user(request: Request) -> Response:
    league = _league(request)
    user = await league.authenticate(request.headers.get("authorization"))
    await league.disable_user(user, request.path_params["name"], not _flag(request, "enable"))
    return JSONResponse({"ok": True})


#: raw upload media types (a multipart form's `archive` file is accepted as well)
ARCHIVE_TYPES = (
    "application/gzip",
    "application/x-gzip",
    "application/x-tar",
    "application/x-compressed-tar",
    "application/zip",
    "application/octet-stream",
)


async def submit(request: Request) -> Response:
    league = _league(request)
    user = await league.authenticate(request.headers.get("authorization"))
    data = await _archive_body(request, league.settings.submissions.max_archive_mb << 20)
    return JSONResponse(await league.submit(user, data), status_code=202)


async def _archive_body(request: Request, cap: int) -> bytes:
    """The uploaded archive, read against the size cap (a 413 before it is all in memory)."""
    check_declared_size(request, cap)
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "multipart/form-data":
        async with archive_form(request, cap) as form:
            data = await archive_from_form(form, cap)
    elif ctype in ARCHIVE_TYPES:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise _too_large(cap)
            chunks.append(chunk)
        data = b"".join(chunks)
    else:
        raise LeagueError(
            f"Content-Type {ctype or 'missing'}: send the archive as application/gzip, "
            "application/zip or a multipart form with a file field 'archive'",
            status=415,
            field="archive",
        )
    return _checked(data, cap)


def check_declared_size(request: Request, cap: int) -> None:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > cap + (1 << 16):
        raise _too_large(cap)


def archive_form(request: Request, cap: int) -> Any:
    """The multipart form of an upload (the API's and the submit page's), parsed with limits;
    use as `async with`."""
    return request.form(max_files=1, max_fields=4, max_part_size=cap + 1)


async def archive_from_form(form: Any, cap: int) -> bytes:
    """The form's `archive` file, against the size cap (413) and not empty (422)."""
    upload = form.get("archive")
    if upload is None or isinstance(upload, str):
        raise LeagueError(
            "the form needs a file field named 'archive'", status=422, field="archive"
        )
    return _checked(await upload.read(cap + 1), cap)


def _checked(data: bytes, cap: int) -> bytes:
    if len(data) > cap:
        raise _too_large(cap)
    if not data:
        raise LeagueError("empty upload", status=422, field="archive")
    return data


def _too_large(cap: int) -> LeagueError:
    return LeagueError(
        f"the archive is larger than this league's {cap >> 20} MB", status=413, field="archive"
    )


# --- seasons and finals (arena/league/db/seasons.py, db/finals.py) ------------------------------


async def seasons_list(request: Request) -> Response:
    return JSONResponse({"items": await _league(request).season_list()})


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise LeagueError("expected a JSON object", status=422) from None
    if not isinstance(body, dict):
        raise LeagueError("expected a JSON object", status=422)
    return body


def _body_str(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise LeagueError(f"{name}: expected a string", status=422, field=name)
    return value


def _body_int(body: dict[str, Any], name: str, default: int | None = None) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise LeagueError(f"{name}: expected an integer", status=422, field=name)
    return value


async def open_season(request: Request) -> Response:
    league = _league(request)
    user = await league.authenticate(request.headers.get("authorization"))
    body = await _json_body(request)
    season = await league.open_season(user, _body_str(body, "name"))
    return JSONResponse(season.to_dict(), status_code=201)


async def close_season(request: Request) -> Response:
    league = _league(request)
    user = await league.authenticate(request.headers.get("authorization"))
    return JSONResponse((await league.close_season(user)).to_dict())


async def finals_list(request: Request) -> Response:
    season = request.query_params.get("season") or None
    return JSONResponse({"items": await _league(request).finals(season)})


async def final(request: Request) -> Response:
    return JSONResponse(await _league(request).final(_path_int(request, "final_id")))


async def start_final(request: Request) -> Response:
    league = _league(request)
    user = await league.authenticate(request.headers.get("authorization"))
    body = await _json_body(request)
    started = await league.start_final(
        user,
        season=_body_str(body, "season"),
        variant=_body_str(body, "variant"),
        top=_body_int(body, "top"),
        fmt=_body_str(body, "format"),
        pairs=_body_int(body, "pairs", 1),
        extra_pairs=_body_int(body, "extra_pairs", 1),
    )
    return JSONResponse(started, status_code=201)


async def stop_final(request: Request) -> Response:
    league = _league(request)
    user = await league.authenticate(request.headers.get("authorization"))
    return JSONResponse(await league.stop_final(user, _path_int(request, "final_id")))


async def openapi_json(request: Request) -> Response:
    from arena.league.web.openapi import openapi

    return JSONResponse(openapi())


def api_routes() -> list[Route]:
    p = "/api/v1"
    return [
        Route(p, status),
        Route(f"{p}/openapi.json", openapi_json),
        Route(f"{p}/me", me),
        Route(f"{p}/leaderboard/{{variant}}", public(leaderboard)),
        Route(f"{p}/bots", public(bots)),
        Route(f"{p}/bots", submit, methods=["POST"]),
        Route(f"{p}/bots/{{name}}", bot),
        Route(f"{p}/bots/{{name}}/versions/{{number}}", version),
        Route(f"{p}/bots/{{name}}/disable", disable_bot, methods=["POST"]),
        Route(f"{p}/users/{{name}}/disable", disable_user, methods=["POST"]),
        Route(f"{p}/games", public(games)),
        Route(f"{p}/games/{{game_id}}", game),
        Route(f"{p}/games/{{game_id}}/record", record),
        Route(f"{p}/games/{{game_id}}/logs", logs),
        Route(f"{p}/queue", public(queue)),
        Route(f"{p}/seasons", seasons_list),
        Route(f"{p}/seasons", open_season, methods=["POST"]),
        Route(f"{p}/seasons/close", close_season, methods=["POST"]),
        Route(f"{p}/finals", finals_list),
        Route(f"{p}/finals", start_final, methods=["POST"]),
        Route(f"{p}/finals/{{final_id}}", final),
        Route(f"{p}/finals/{{final_id}}/stop", stop_final, methods=["POST"]),
    ]
