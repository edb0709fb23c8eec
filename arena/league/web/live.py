"""Games in flight, live: the list, a page that watches one, and its event stream.

`GET /games/{id}/live` is a `text/event-stream` (web/sse.py) of one game's replay frames, in
the viewer's format (arena/viewer/replay.py), made from the turns the executor publishes
(arena/league/live.py):

- `start`: the replay so far (board, players, every step up to now; no result yet);
- `steps`: `{"from": n, "steps": [...]}`, the steps of turns played since;
- `waiting`: `{"state": "queued"}` while the game waits for a slot (the stream goes on);
- `remote`: the game is played by a remote worker (`--no-local-games`): not shown live;
- `unavailable`: the turns could not be drawn (the game goes on; its replay comes at the end);
- `end`: `{"state", "url"}`, the game is over (or no longer in flight): the page reloads and
  shows the recorded replay.

A reader keeps its own count of the steps it has sent and waits on the game's signal under its
own cancel scope, so a slow or vanished page never holds up a game (see live.py).

The pages: `/live` lists the games in flight; a game's own page (`/games/{id}`, web/pages.py,
which `/live/{id}` redirects to, saying so when the game is over by the time it is opened)
includes `_live_game.html` with `live_context(...)` while the game is queued or running, and
shows it in the shared viewer advancing by itself (static/live.js). Without JavaScript the game
page shows the position when it was made and refreshes itself every few seconds.

In flight means one thing everywhere: claimed by a slot or a worker (`views.in_flight`, state
running), started or not; `in_flight_games` reads it once for /live's list and for the home
page's count and list, with the turns so far of the games this server plays. Both pages update
themselves: `/live/events` and `/live/events/home` are event streams of a `status` event
carrying the block the page shows (`_live_list.html`, `_home_live.html`, rendered and escaped
here) whenever it changes: at once when a game here starts or ends (`LiveGames.changed`), and
within `BLOCK_POLL` seconds for what only the database knows (remote workers' games, the queue,
recent results).
"""

from __future__ import annotations

from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.league.db import schema, views
from arena.league.errors import LeagueError
from arena.league.live import LiveGame
from arena.league.service import League
from arena.league.web.auth import current_user
from arena.league.web.render import reason_words, render, render_block
from arena.league.web.sse import PING, Emit, EventStream
from arena.referee.record import GameRecord, RecordError
from arena.viewer import replay_data

#: games in flight a page lists (a league plays a few dozen at once at most)
IN_FLIGHT_LIMIT = 100
#: recent games on the home page
RECENT_GAMES = 10
#: seconds between a block stream's looks at the database (for what no signal here announces)
BLOCK_POLL = 2.0


def _league(request: Request) -> League:
    return request.app.state.league


def _game_id(request: Request) -> int:
    raw = request.path_params["game_id"]
    if not raw.isdigit() or len(raw) > 18:
        raise LeagueError("no such game", status=404)
    return int(raw)


def _in_flight_data(conn: Any, limit: int) -> dict[str, Any]:
    return {
        "games": views.in_flight(conn, limit=limit),
        "counts": views.counts(conn),
        "recent": views.list_games(conn, limit=RECENT_GAMES, offset=0),
    }


async def in_flight_games(league: League) -> dict[str, Any]:
    """The games in flight (`views.in_flight`), each with `live`: its summary (turns so far,
    watchers) while this server plays it, else None (claimed but not started yet, or played by
    a remote worker); `more`: the list stopped at IN_FLIGHT_LIMIT; `counts` (games by state)
    and `recent` (the last finished games), read in the same transaction, for the home page."""
    data = await league.cached_read(_in_flight_data, IN_FLIGHT_LIMIT)
    games = []
    for g in data["games"]:
        live = league.live.get(g["id"])
        games.append({**g, "live": live.summary() if live is not None else None})
    return {
        "games": games,
        "more": len(games) >= IN_FLIGHT_LIMIT,
        "counts": data["counts"],
        "recent": data["recent"],
        "local": league.live.local,
    }


def _block_context(data: dict[str, Any]) -> dict[str, Any]:
    return {**data, "reason_words": reason_words}


async def live_page(request: Request) -> Response:
    await current_user(request)
    league = _league(request)
    data = await in_flight_games(league)
    return render(request, "live.html", title="Live games", **_block_context(data))


def _block_events(request: Request, template: str) -> EventStream:
    """A stream of `status` events carrying `template` rendered afresh whenever it changes."""
    league = _league(request)

    async def produce(emit: Emit) -> None:
        sent = None
        while True:
            seen = league.live.changed.generation
            html = render_block(template, **_block_context(await in_flight_games(league)))
            if html != sent:
                await emit("status", {"html": html, "state": "live"})
                sent = html
            with trio.move_on_after(BLOCK_POLL):
                await league.live.changed.wait_past(seen)

    return EventStream(produce)


async def live_events(request: Request) -> Response:
    return _block_events(request, "_live_list.html")  # type: ignore[return-value]


async def home_events(request: Request) -> Response:
    return _block_events(request, "_home_live.html")  # type: ignore[return-value]


async def watch_page(request: Request) -> Response:
    """A game's own page (web/pages.py) is where it is watched, live or replayed; a game that
    ended before its watcher came is opened at its end with a word saying so (`?ended`)."""
    game_id = _game_id(request)
    game = await _league(request).game(game_id)
    over = game["state"] not in (schema.GameState.QUEUED, schema.GameState.RUNNING)
    return RedirectResponse(f"/games/{game_id}{'?ended=1' if over else ''}", status_code=303)


async def live_context(league: League, game_id: int) -> dict[str, Any]:
    """What `_live_game.html` needs for a game page: `live` (the game's summary while this
    server plays it, else None), `local` (whether games here are shown live: not when remote
    workers play them, except people's challenges, which are always played here) and `board`
    (the position now, as the engine's SVG, for a page without JavaScript)."""
    live = league.live.get(game_id)
    return {
        "live": live.summary() if live is not None else None,
        "local": league.live.local or live is not None,
        "board": await live.position_svg() if live is not None else None,
    }


async def finished_replay(league: League, game_id: int) -> dict[str, Any] | None:
    """The finished game's replay (the record without the owners' stderr and logs)."""
    try:
        record = GameRecord.from_dict(await league.record(game_id))
        return await trio.to_thread.run_sync(replay_data, record)
    except (LeagueError, RecordError):
        return None


async def game_events(request: Request) -> Response:
    league = _league(request)
    game_id = _game_id(request)
    await league.game(game_id)  # 404 as a plain answer, before any stream

    async def produce(emit: Emit) -> None:
        live = league.live
        told_waiting = False
        while True:
            seen = live.changed.generation
            game = live.get(game_id)
            if game is not None:
                await _follow(game, emit)
                continue  # over: recorded (end), or voided and queued again (waiting)
            state = (await league.game(game_id))["state"]
            if state == "running" and not live.local:
                await emit("remote", {"state": state})
                return
            if state in ("queued", "running"):
                # waiting for a slot (or for the slot to announce the game it just claimed)
                if not told_waiting:
                    await emit("waiting", {"state": state})
                    told_waiting = True
                with trio.move_on_after(PING):
                    await live.changed.wait_past(seen)
                continue
            await emit("end", {"state": state, "url": f"/games/{game_id}"})
            return

    return EventStream(produce)  # type: ignore[return-value]


async def _follow(game: LiveGame, emit: Emit) -> None:
    """Send the game's frames until it is over."""
    game.watchers += 1
    try:
        await _send_frames(game, emit)
    finally:
        game.watchers -= 1


async def _send_frames(game: LiveGame, emit: Emit) -> None:
    sent = 0
    while not game.finished:
        seen = game.signal.generation
        kind, data = await game.update(sent)
        if kind == "unavailable":
            await emit(kind, data)
            while not game.finished:
                with trio.move_on_after(PING):
                    await game.signal.wait_past(game.signal.generation)
            return
        if kind is not None:
            await emit(kind, data)
            sent = len(data["steps"]) if kind == "start" else data["from"] + len(data["steps"])
        with trio.move_on_after(PING):
            await game.signal.wait_past(seen)


def live_routes() -> list[Route]:
    return [
        Route("/live", live_page),
        Route("/live/events", live_events),
        Route("/live/events/home", home_events),
        Route("/live/{game_id}", watch_page),
        Route("/games/{game_id}/live", game_events),
    ]
