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
which `/live/{id}` redirects to) includes `_live_game.html` with `live_context(...)` while the
game is queued or running, and shows it in the shared viewer advancing by itself
(static/live.js); `live_games(league)` gives the home page the same list. Without JavaScript the
game page shows the position when it was made and refreshes itself every few seconds.
"""

from __future__ import annotations

from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.league.errors import LeagueError
from arena.league.live import LiveGame
from arena.league.service import League
from arena.league.web.auth import current_user
from arena.league.web.render import render
from arena.league.web.sse import PING, Emit, EventStream


def _league(request: Request) -> League:
    return request.app.state.league


def _game_id(request: Request) -> int:
    raw = request.path_params["game_id"]
    if not raw.isdigit() or len(raw) > 18:
        raise LeagueError("no such game", status=404)
    return int(raw)


def live_games(league: League) -> list[dict[str, Any]]:
    """The games this server is playing now, oldest first: id, variant, bots, turns so far,
    started_at. Empty when games are played by remote workers (`league.live.local` False)."""
    return league.live.list()


async def live_page(request: Request) -> Response:
    await current_user(request)
    league = _league(request)
    return render(
        request, "live.html", title="Live games", games=live_games(league), local=league.live.local
    )


async def watch_page(request: Request) -> Response:
    """A game's own page (web/pages.py) is where it is watched, live or replayed."""
    return RedirectResponse(f"/games/{_game_id(request)}", status_code=303)


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


async def _replay(league: League, game_id: int) -> dict[str, Any] | None:
    """The finished game's replay (the record without the owners' stderr and logs)."""
    from arena.referee.record import GameRecord, RecordError
    from arena.viewer import replay_data

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
        Route("/live/{game_id}", watch_page),
        Route("/games/{game_id}/live", game_events),
    ]
