"""The /play pages: a logged-in person challenges a bot and plays it in the browser.

`GET /play` is the form (variant, bot, seat, the person's clock), `POST /play` starts the game
(arena/league/challenges.py) and redirects to `/play/{id}`, the board. The board talks to its
game over one websocket, `/play/{id}/ws`: the server sends the game's whole view on every
change (JSON, `BrowserIO.view`; `board` is null when the board has not changed since the last
message), the page sends `{"line": TEXT, "ask": N}`, a line of the game's
notation (or `resign`, or an empty line to end a turn early) answering prompt number N. Only the
person playing may open it, and only from this site's pages (its Origin is checked as forms'
are, since a websocket carries the session cookie but no CSRF token).
"""

from __future__ import annotations

import json
from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from arena.league.db import views
from arena.league.errors import LeagueError
from arena.league.service import League
from arena.league.web.auth import current_user, require_user
from arena.league.web.render import render
from arena.league.web.session import check_csrf, same_origin

#: the longest message a page may send (a line of notation is far shorter)
MAX_MESSAGE = 4096


def _league(request: Request | WebSocket) -> League:
    return request.app.state.league


def _clock_choices(league: League) -> list[str]:
    """Suggestions for the clock field: common human clocks within the league's bounds."""
    play = league.settings.play
    out = [play.clock.describe()]
    for base, inc in ((60, 1), (180, 2), (300, 5), (600, 10), (900, 15)):
        text = f"{base}+{inc}"
        if base <= play.max_base and inc <= play.max_increment and text not in out:
            out.append(text)
    return out


async def _form(request: Request, status: int = 200, **context: Any) -> Response:
    league = _league(request)
    user = await require_user(request)
    bots = await league.read(views.active_bots)
    playing = league.challenges.of_user(user.id)
    values = {
        "variant": league.variants[0] if league.variants else "",
        "bot": bots[0]["bot"] if bots else "",
        "seat": "first",
        "clock": league.settings.play.clock.describe(),
        **context.pop("values", {}),
    }
    return render(
        request,
        "play.html",
        status=status,
        title="Play a bot",
        variants=league.variants,
        bots=bots,
        values=values,
        clocks=_clock_choices(league),
        play=league.settings.play,
        league_clock=league.settings.time_control.describe(),
        playing=playing,
        **context,
    )


async def play_form(request: Request) -> Response:
    """The form; `?bot=NAME&variant=LABEL` preselects (a bot's page links here)."""
    chosen = {k: request.query_params[k] for k in ("bot", "variant") if k in request.query_params}
    return await _form(request, values=chosen)


async def play_start(request: Request) -> Response:
    league = _league(request)
    user = await require_user(request)
    form = await check_csrf(request)
    values = {k: str(form.get(k) or "").strip() for k in ("variant", "bot", "seat", "clock")}
    try:
        challenge = await league.challenges.start(
            user, values["variant"], values["bot"], values["seat"], values["clock"]
        )
    except LeagueError as e:
        return await _form(
            request, status=e.status, error=str(e), error_field=e.field, values=values
        )
    return RedirectResponse(f"/play/{challenge.game_id}", status_code=303)


async def play_page(request: Request) -> Response:
    league = _league(request)
    user = await require_user(request)
    game_id = request.path_params["game_id"]
    challenge = league.challenges.games.get(game_id)
    if challenge is None or challenge.user_id != user.id:
        await league.game(game_id)  # 404 when there is no such game
        return RedirectResponse(f"/games/{game_id}", status_code=303)
    data = {"game_id": game_id, "ws": f"/play/{game_id}/ws"}
    view = challenge.io.view()
    you = view["players"][view["you"]]
    options = ", ".join(f"{k}={v}" for k, v in view["options"].items())
    meta = " · ".join(
        [
            f"{view['title']} ({view['variant']})",
            options,
            f"you play {you['colour']}, {('first', 'second')[view['you']]}",
            "unrated",
        ]
    )
    return render(
        request,
        "play_game.html",
        title=f"Game {game_id}",
        challenge=challenge,
        meta=meta,
        data=json.dumps(data).replace("<", "\\u003c"),
    )


async def play_socket(ws: WebSocket) -> None:
    league = _league(ws)
    challenge = league.challenges.games.get(ws.path_params["game_id"])
    user = await current_user(ws)  # type: ignore[arg-type]
    refusal = None
    if challenge is None:
        refusal = "this game is not in play on this server"
    elif user is None or user.id != challenge.user_id or not same_origin(ws):  # type: ignore[arg-type]
        refusal = "only the person playing this game can play it"
    await ws.accept()
    if refusal is not None or challenge is None:
        # accepted first, so that the page gets the reason (a refused handshake is only a
        # failed connection to a browser, which would try again)
        await ws.close(code=1008, reason=refusal or "")
        return
    io = challenge.io
    with io.connected():
        async with trio.open_nursery() as nursery:

            async def send_views() -> None:
                board = None
                try:
                    async for view in io.views():
                        # the board (up to a few hundred kB of SVG) only when it changed
                        if view["board"] == board:
                            view = {**view, "board": None}
                        else:
                            board = view["board"]
                        await ws.send_json(view)
                    await ws.close(code=1000)
                except Exception:  # the page went away while we were sending
                    pass
                nursery.cancel_scope.cancel()

            nursery.start_soon(send_views)
            try:
                while True:
                    text = await ws.receive_text()
                    line, ask = _parse(text)
                    if line is not None:
                        io.submit(line, ask)
            except (WebSocketDisconnect, RuntimeError):
                pass  # closed by the page, or by send_views at the end
            nursery.cancel_scope.cancel()


def _parse(text: str) -> tuple[str | None, int | None]:
    """A page's message: its line and the prompt it answers; (None, None) for anything else."""
    if len(text) > MAX_MESSAGE:
        return None, None
    try:
        msg = json.loads(text)
    except ValueError:
        return None, None
    if not isinstance(msg, dict) or not isinstance(msg.get("line"), str):
        return None, None
    ask = msg.get("ask")
    return msg["line"], ask if isinstance(ask, int) and not isinstance(ask, bool) else None


def play_routes() -> list[Route | WebSocketRoute]:
    return [
        Route("/play", play_form),
        Route("/play", play_start, methods=["POST"]),
        Route("/play/{game_id:int}", play_page),
        WebSocketRoute("/play/{game_id:int}/ws", play_socket),
    ]
