"""A person against a bot, in the browser: the games of the /play page.

The person is a seat of the real referee: a `HumanPlayer` (arena/referee/human.py) whose
`HumanIO` is a `BrowserIO` here, so the referee sends them the same requests, charges the same
clock and checks every action with the same engine as for a bot, and `HumanSeat` explains an
illegal action and asks again. The bot plays exactly as in a rated game: the game row is created
and claimed like one (`ledger.create_game`, `ledger.claim_game`), turned into the worker's job by
`job_from_claim` and into a `MatchConfig` by the tournament worker's `match_config`, so it runs
from its version's directory under the league's isolation, limits and time control. The person
gets a clock of their own (`MatchConfig.seat_time_controls`), chosen in the form within the
league's `[play]` bounds.

Where games run: in `Challenges.run`'s nursery, which the app's lifespan opens inside the
server's trio run (web/app.py), never in a request's task, so a page reload or a lost connection
does not end a game. A game that nobody is connected to on the person's turn waits
`disconnect_grace` seconds (or until the person's clock runs out, whichever is first), then the
person resigns with "the browser disconnected" as the recorded reason. The referee reaps the
bot's process whatever happens, shielded from cancellation (arena/referee/match.py).

Everyone else can watch the game on the live pages (arena/league/live.py), as the league's own
games. What is recorded: the game is of kind `challenge`, never rated, so neither ratings nor the
leaderboard ever see it; its record and replay are those of any game. A game the platform
cannot finish (a sandbox fault, the server stopping) fails for good with its reason: there is no
person left to replay it with.

The page's view: `BrowserIO.view()` is one JSON-safe dict holding everything the page draws (the
engine's SVG of the position, including the actions already chosen in a multi-action turn, the
legal next actions, both clocks, whose turn, the last message, the result), sent whole on every
change. A reconnecting page needs nothing else.
"""

from __future__ import annotations

import math
import secrets
import sys
import traceback
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import trio

from arena.errors import ArenaError, PlatformFault
from arena.games import State, make_game
from arena.league import privacy
from arena.league.db import ledger, roster, schema, views
from arena.league.errors import LeagueError
from arena.league.executors.base import job_from_claim
from arena.league.settings import play_clock_problem
from arena.league.voids import void_kind
from arena.referee import play_match
from arena.referee.bots import resolve_bot
from arena.referee.clock import TimeControl, TimeControlError
from arena.referee.human import HumanIO, HumanPlayer
from arena.referee.match import TurnEvent
from arena.referee.outcome import reason_text
from arena.viewer.replay import action_cells
from arena.workers.child import match_config

#: how many unread lines the page may send ahead (more are dropped: a person clicks slowly)
LINE_BUFFER = 16
#: seconds a finished game's view stays available to a page that reconnects
LINGER = 600.0
SEATS = ("first", "second", "random")

_PRESENCE = object()  # a connection came or went: read_line re-checks the grace period


class BrowserIO(HumanIO):
    """The person's side of the seat: the seat's events and the referee's turns become the
    page's `view`; lines come from the page (`submit`), one per prompt."""

    def __init__(
        self,
        *,
        game_id: int,
        variant: str,
        game_name: str,
        options: dict[str, Any],
        seat: int,
        names: tuple[str, str],
        clocks: tuple[TimeControl, TimeControl],
        grace: float,
    ) -> None:
        self.game = make_game(game_name, options)
        self.seat = seat
        self.grace = grace
        self.connections = 0
        self.left_at = trio.current_time()
        self._lines_in, self._lines = trio.open_memory_channel[Any](LINE_BUFFER)
        self._changed = trio.Event()
        self.version = 0
        self.over = False
        self._closed = "input closed"
        self._resign = False
        self._turn_state: State | None = None
        self._clock_at = trio.current_time()
        state = self.game.new_initial_state()
        self._view: dict[str, Any] = {
            "game_id": game_id,
            "variant": variant,
            "game": game_name,
            "title": type(self.game).title,
            "options": dict(self.game.options),
            "you": seat,
            "players": [
                {"name": names[s], "colour": self.game.colours[s], "clock": clocks[s].describe()}
                for s in (0, 1)
            ],
            "board": state.render_svg(),
            "marks": [],
            "chosen": [],
            "turn": state.turn_number(),
            "to_move": state.current_player(),
            "scores": list(state.scores()),
            "clocks": [clocks[0].base, clocks[1].base],
            "running": None,
            "asking": False,
            "ask": 0,
            "prompt": "",
            "legal": [],
            "can_end_turn": False,
            "actions_remaining": 0,
            "message": "",
            "error": False,
            "moves": [],
            "result": None,
            "recorded": False,
            "final": False,
            "game_url": f"/games/{game_id}",
        }

    @property
    def name(self) -> str:
        return self._view["players"][self.seat]["name"]

    # --- the view ---------------------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        """The view now: the running clock as it stands at this moment."""
        out = dict(self._view)
        running = out["running"]
        if running is not None and out["clocks"][running] is not None:
            clocks = list(out["clocks"])
            clocks[running] = max(0.0, clocks[running] - (trio.current_time() - self._clock_at))
            out["clocks"] = clocks
        return out

    def _update(self, **changes: Any) -> None:
        self._view.update(changes)
        self.version += 1
        changed, self._changed = self._changed, trio.Event()
        changed.set()

    async def views(self) -> AsyncIterator[dict[str, Any]]:
        """Every new view, until the final one (the game recorded, or failed)."""
        seen = -1
        while True:
            if self.version != seen:
                seen = self.version
                yield self.view()
                continue
            if self._view["final"]:
                return
            await self._changed.wait()

    def _clocks(self, clocks: list[float | None], running: int | None) -> dict[str, Any]:
        self._clock_at = trio.current_time()
        return {"clocks": list(clocks), "running": running}

    def _position(self, state: State, **changes: Any) -> None:
        self._update(
            board=state.render_svg(),
            turn=state.turn_number(),
            to_move=None if state.is_terminal() else state.current_player(),
            scores=list(state.scores()),
            **changes,
        )

    # --- the referee's side ----------------------------------------------------------------

    def on_turn(self, ev: TurnEvent) -> None:
        """The referee's observer: a turn was played (either side's)."""
        moves = [*self._view["moves"], {"turn": ev.turn, "seat": ev.seat, "actions": ev.actions}]
        running = None if ev.state.is_terminal() else ev.state.current_player()
        marks = [c for a in ev.actions for c in action_cells(a)]
        self._position(
            ev.state, moves=moves, marks=marks, chosen=[], **self._clocks(ev.clocks, running)
        )

    async def show(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "hello":
            first = self.game.new_initial_state().current_player()
            self._update(**self._clocks(self._view["clocks"], first))
        elif kind == "turn":
            self._turn_state = self.game.state_from_description(event["position"])
            self._update(message="", error=False, **self._clocks(event["clocks"], self.seat))
        elif kind == "ask":
            assert self._turn_state is not None
            state = self._turn_state.clone()
            for action in event["turn_actions"]:
                state.apply(action)
            self._position(
                state,
                asking=True,
                ask=self._view["ask"] + 1,
                prompt=event["prompt"],
                legal=state.legal_actions(),
                can_end_turn=event["can_end_turn"],
                actions_remaining=event["actions_remaining"],
                chosen=[c for a in event["turn_actions"] for c in action_cells(a)],
            )
        elif kind == "rejected":
            self._update(message=event["message"], error=True)
        elif kind == "legal":
            self._update(message="legal: " + " ".join(event["actions"]), error=False)
        elif kind == "help":
            self._update(message=event["text"], error=False)
        elif kind == "end":
            result = {k: event.get(k) for k in ("result", "winner", "reason", "detail", "scores")}
            # the person is not the bot's owner: the referee's words without its stderr
            result["detail"] = privacy.public_detail(result["detail"])
            result["reason_text"] = reason_text(result["reason"])  # what the page shows
            self.finish({**result, "you": event.get("you")})

    def finish(self, result: dict[str, Any] | None, message: str = "") -> None:
        """The game is over: `result` as the end message has it, or None when the platform
        failed it (`message` says why)."""
        self.over = True
        changes: dict[str, Any] = {"asking": False, "legal": [], "running": None}
        if result is not None:
            changes["result"] = result
        else:
            changes["final"] = True
        if message:
            changes.update(message=message, error=True)
        self._update(**changes)

    def recorded(self) -> None:
        self._update(recorded=True, final=True)

    async def read_line(self) -> str | None:
        if self._resign:
            return "resign"
        while True:
            wait = math.inf
            if self.connections == 0:
                wait = self.left_at + self.grace - trio.current_time()
                if wait <= 0:
                    self._closed = "the browser disconnected"
                    return None
            with trio.move_on_after(wait):
                item = await self._lines.receive()
                if item is _PRESENCE:
                    continue
                ask, text = item
                if ask == self._view["ask"] and self._view["asking"]:
                    self._update(asking=False, message="", error=False)
                    return text

    def closed_reason(self) -> str:
        return self._closed

    # --- the page's side ---------------------------------------------------------------------

    def submit(self, text: str, ask: int | None) -> None:
        """A line from the page, answering prompt number `ask`; a resignation is taken at any
        time (it is handed over at the person's next prompt)."""
        if self.over:
            return
        text = text.strip()[:1000]
        if text.lower().startswith("resign"):
            self._resign = True
            ask = self._view["ask"]
            if not self._view["asking"]:
                self._update(message="you resign as soon as it is your turn", error=False)
                return
        elif not self._view["asking"]:
            self._update(message="wait for your turn", error=True)
            return
        elif ask != self._view["ask"]:
            self._update(message="that was meant for an earlier position: play again", error=True)
            return
        with suppress(trio.WouldBlock):  # a full buffer: the page is far ahead of the game
            self._lines_in.send_nowait((ask, text))

    @contextmanager
    def connected(self) -> Iterator[None]:
        """A page is connected for as long as this lasts (the disconnect grace counts from the
        moment the last one left)."""
        self.connections += 1
        self._poke()
        try:
            yield
        finally:
            self.connections -= 1
            if self.connections == 0:
                self.left_at = trio.current_time()
            self._poke()

    def _poke(self) -> None:
        # a full buffer: read_line reads those lines first, then looks at the presence again
        with suppress(trio.WouldBlock):
            self._lines_in.send_nowait(_PRESENCE)


@dataclass
class Challenge:
    """One game of a person against a bot, in play or just finished."""

    game_id: int
    user_id: int
    bot: str
    io: BrowserIO
    done: trio.Event = field(default_factory=trio.Event)


class Challenges:
    """The games against people this server is playing; `run` holds them (see the module
    docstring), the pages start and find them here."""

    def __init__(self, league: Any) -> None:
        self.league = league
        self.settings = league.settings
        self.games: dict[int, Challenge] = {}
        #: people whose game row is being written (see `start`)
        self._starting: set[int] = set()
        self._nursery: trio.Nursery | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Play games while this lasts; on exit the games in play are abandoned (their bots
        killed by the referee) and recorded as failed. Entered again while running (a second
        client of the same app in tests), it does nothing."""
        if self._nursery is not None:
            yield
            return
        await trio.to_thread.run_sync(self._fail_leftovers)
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                yield
            finally:
                self._nursery = None
                nursery.cancel_scope.cancel()

    def _fail_leftovers(self) -> None:
        with self.league.db.write() as conn:
            n = ledger.fail_challenges(conn, "the server stopped during the game")
        if n:
            print(f"arena league: {n} game(s) against people ended by a stop", file=sys.stderr)

    def of_user(self, user_id: int) -> Challenge | None:
        for ch in self.games.values():
            if ch.user_id == user_id and not ch.io.over:
                return ch
        return None

    def playing(self) -> int:
        return sum(not ch.io.over for ch in self.games.values())

    async def start(
        self, user: roster.User, variant: str, bot: str, seat: str, clock: str
    ) -> Challenge:
        """Create the game row, start the game in the background; the challenge (LeagueError
        naming the form field for a bad choice, 409/429/503 when no game can start now)."""
        league = self.league
        play = self.settings.play
        entry = self.settings.game(league.check_variant(variant))
        try:
            tc = TimeControl.parse(clock, startup=self.settings.time_control.startup)
        except TimeControlError as e:
            raise LeagueError(str(e), status=422, field="clock") from None
        problem = play_clock_problem(play, tc)
        if problem:
            raise LeagueError(problem, status=422, field="clock")
        if seat not in SEATS:
            raise LeagueError(f"seat: expected one of {', '.join(SEATS)}", status=422, field="seat")
        mine = self.of_user(user.id)
        if mine is not None:
            raise LeagueError(f"you are playing game {mine.game_id} already", status=409)
        if user.id in self._starting:
            raise LeagueError("your game is being started", status=409)
        if self._nursery is None:
            raise LeagueError("this server is not playing games against people now", status=503)
        if play.max_games == 0:
            raise LeagueError("this league does not offer games against people", status=403)
        if self.playing() + len(self._starting) >= play.max_games:
            raise LeagueError(
                f"all {play.max_games} seats for games against people are taken; try again soon",
                status=429,
            )
        human = {"first": 0, "second": 1}.get(seat, secrets.randbelow(2))
        # the checks above hold while the game row is written: a second form sent at once
        # (a double click) is refused rather than started too
        self._starting.add(user.id)
        try:
            claim = await league.write(self._create, user, entry, bot, human)
        finally:
            self._starting.discard(user.id)
        if self._nursery is None:  # the server stopped meanwhile
            await trio.to_thread.run_sync(self._fail_leftovers)
            raise LeagueError("this server is not playing games against people now", status=503)
        job = job_from_claim(claim, self.settings)
        names = (claim.manifests[0]["league_name"], claim.manifests[1]["league_name"])
        tcs = [self.settings.time_control, self.settings.time_control]
        tcs[human] = tc
        io = BrowserIO(
            game_id=claim.game_id,
            variant=entry.label,
            game_name=entry.name,
            options=dict(entry.options),
            seat=human,
            names=names,
            clocks=(tcs[0], tcs[1]),
            grace=play.disconnect_grace,
        )
        challenge = Challenge(claim.game_id, user.id, bot, io)
        self.games[claim.game_id] = challenge
        match = dict(job.match)
        match["seat_time_controls"] = [tc.to_dict() if s == human else None for s in (0, 1)]
        # watchable by everyone on the live pages, like the league's own games
        league.live.start(claim.game_id, entry.label, match, list(names))
        self._nursery.start_soon(self._play, challenge, claim, match, job.bots[1 - human])
        return challenge

    def _create(
        self, conn: Any, user: roster.User, entry: Any, bot: str, human: int
    ) -> ledger.Claim:
        mine = {b["bot"]: b["version_id"] for b in views.active_bots(conn)}
        if bot not in mine:
            raise LeagueError(f"no active bot {bot!r}", status=404, field="bot")
        versions = [roster.human_version(conn, user)] * 2
        versions[1 - human] = mine[bot]
        game_id = ledger.create_game(
            conn,
            ledger.NewGame(
                kind=schema.GameKind.CHALLENGE,
                variant=entry.label,
                game_name=entry.name,
                options=dict(entry.options),
                seed=secrets.randbelow(2**63),
                opening=(),
                time_control=self.settings.time_control.to_dict(),
                version0=versions[0],
                version1=versions[1],
            ),
        )
        claim = ledger.claim_game(conn, game_id)
        assert claim is not None  # created in this transaction
        return claim

    async def _play(
        self, ch: Challenge, claim: ledger.Claim, match: dict[str, Any], bot: dict[str, Any]
    ) -> None:
        io = ch.io
        settled = False
        try:
            human = HumanPlayer(io, io.name)
            specs: list[Any] = [human, human]
            specs[1 - io.seat] = await trio.to_thread.run_sync(resolve_bot, bot)
            record = await play_match(match_config(specs, match), observer=partial(self._turn, ch))
            data = record.to_dict()
            await trio.to_thread.run_sync(self._record, claim, data)
            settled = True
            io.recorded()
        except Exception as e:  # the platform's fault (or a bug): never the server's end
            if isinstance(e, PlatformFault):  # of the kind its fault names
                kind = void_kind(e.fault)
            elif isinstance(e, ArenaError):  # the bot's version no longer loads
                kind = schema.VoidKind.SANDBOX_FAULT
            else:
                kind = schema.VoidKind.INTERNAL_ERROR
            if kind == schema.VoidKind.INTERNAL_ERROR:
                traceback.print_exc(file=sys.stderr)
            settled = True
            with trio.CancelScope(shield=True):
                await self._fail(ch, claim, kind, f"{type(e).__name__}: {e}")
        finally:
            if not settled:  # cancelled: the server is stopping
                with trio.CancelScope(shield=True):
                    await self._fail(
                        ch, claim, schema.VoidKind.SERVER_STOPPED, "the server stopped"
                    )
            ch.done.set()
            self.league.live.end(ch.game_id)
            if self._nursery is not None:
                self._nursery.start_soon(self._forget, ch.game_id)

    def _turn(self, ch: Challenge, ev: TurnEvent) -> None:
        ch.io.on_turn(ev)
        self.league.live.turn(ch.game_id, ev.entry)

    def _record(self, claim: ledger.Claim, data: dict[str, Any]) -> bool:
        with self.league.db.write() as conn:
            ok = ledger.record_result(conn, claim.game_id, claim.attempt, data)
        self.league.cache.changed()
        return ok

    async def _fail(
        self, ch: Challenge, claim: ledger.Claim, kind: schema.VoidKind, reason: str
    ) -> None:
        ch.io.finish(None, f"the game could not go on: {privacy.neutral_paths(reason)}")

        def run() -> None:
            with self.league.db.write() as conn:
                ledger.void_attempt(conn, claim.game_id, claim.attempt, kind, reason, 1)
            self.league.cache.changed()

        await trio.to_thread.run_sync(run)

    async def _forget(self, game_id: int) -> None:
        await trio.sleep(LINGER)
        self.games.pop(game_id, None)
