"""Who plays a runner's games: one small interface, one implementation per place a game runs.

A `Player` turns one attempt at one game into the reply a referee worker gives (record, void
or error, arena/workers/wire.py): `play(game_id, attempt, payload)`, and `aclose()` when its
slot is done. The tournament runner (arena/tournaments/runner.py) gives each slot a player and
does not care where the game is played:

- `ProcessPlayer`: a referee worker process of the slot's own (the default), so concurrent
  games use every core; it also plays one game ahead (`send`/`receive`), so no round trip
  through the runner stands between two games of a slot;
- `InlinePlayer`: in the runner's own process, with an injected `play_match` (tests inject
  arena-side faults with it);
- the league's queue (`arena tournament run --database URL`): `QueuePlayer` in
  arena/league/tourjobs.py, shared by every slot, which the CLI hands to the runner, so that
  tournaments never import the league.

This is the job-manager idea of gomill's `run_jobs`, and the league's own `Executor` does the
same for league games (arena/league/executors/).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import trio

from arena.errors import ArenaError
from arena.workers.process import WorkerDied, WorkerProcess
from arena.workers.wire import record_text, void_of


class Player(Protocol):
    """Plays attempts of a runner's games; the reply is a referee worker's (wire.py)."""

    async def play(self, game_id: str, attempt: int, payload: dict[str, Any]) -> dict[str, Any]:
        """The reply for one attempt (`payload`: the `match` of a `play` request)."""
        ...

    async def aclose(self) -> None:
        """Done with this player: end what it keeps (a worker process)."""
        ...


class InlinePlayer:
    """Plays in this process with `play_match` (tests inject arena-side faults with it)."""

    def __init__(self, specs: list[Any], play_match: Callable[..., Awaitable[Any]]) -> None:
        self.specs = specs
        self.play_match = play_match

    async def play(self, game_id: str, attempt: int, payload: dict[str, Any]) -> dict[str, Any]:
        # Imported here, not with the module: the referee and the process sandbox cost the
        # runner's process 50-90 ms of imports (python -X importtime, on the 2-core test
        # machine), and only this player, which tests use, plays games in it.
        from arena.workers.child import play_one

        msg = {"type": "play", "game_id": game_id, "match": payload}
        return await play_one(self.specs, msg, self.play_match)

    async def aclose(self) -> None:
        pass


class ProcessPlayer:
    """A slot's own referee worker process, started before its first game and replaced after
    it dies (the game in play is voided as `WorkerDied`)."""

    def __init__(
        self,
        bots: list[dict[str, Any]],
        core: int | None,
        games: tuple[Any, ...],
        launched: WorkerProcess | None = None,
    ):
        self.bots = bots
        self.core = core
        self.games = games
        self.process: WorkerProcess | None = None
        #: a worker process launched ahead (`WorkerProcess.launch`), not initialised yet
        self.launched = launched

    async def prepare(self) -> None:
        """Start the worker process before the first game is dispatched (or initialise the
        one launched ahead): its interpreter and imports (a few hundred milliseconds) are
        the run's start-up, not the first game's cost. A failure here is left for the first
        game's attempt, which reports or voids it as usual."""
        launched, self.launched = self.launched, None
        if self.process is None:
            with contextlib.suppress(WorkerDied, ArenaError):
                if launched is None:
                    self.process = await WorkerProcess.start(self.bots, self.core, self.games)
                else:
                    await launched.init(self.bots, self.games)
                    self.process = launched
        elif launched is not None:
            await launched.close()

    async def play(self, game_id: str, attempt: int, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            await self.send(game_id, payload)
            return await self.receive()
        except WorkerDied as e:
            await self.aclose()  # a fresh worker for the next attempt
            return void_of(game_id, e)

    async def send(self, game_id: str, payload: dict[str, Any]) -> None:
        """Send a game to the worker process (started if need be); its reply is read by
        `receive`, replies come in the order the games were sent. Raises WorkerDied."""
        try:
            if self.process is None:
                self.process = await WorkerProcess.start(self.bots, self.core, self.games)
            await self.process.send({"type": "play", "game_id": game_id, "match": payload})
        except BaseException as e:
            if not isinstance(e, WorkerDied):
                # cancelled (the run is stopping): the pipe is out of step, end the worker
                with trio.CancelScope(shield=True):
                    await self.aclose()
            raise

    async def receive(self) -> dict[str, Any]:
        """The reply to the oldest game sent and not answered yet. Raises WorkerDied."""
        if self.process is None:
            raise WorkerDied("referee worker process closed")
        try:
            reply = await self.process.receive()
            if reply.get("type") == "record":
                # the record's text as the worker encoded it: stored as is (the results
                # file's commit need not encode it again); its `record` may be only its head
                # (arena/workers/wire.py `encode_reply`)
                text = reply.get("record_json")
                if text is None:
                    text = record_text(reply, self.process.last_line)
                if text is not None:
                    reply["record_json"] = text.decode()
            return reply
        except BaseException as e:
            if not isinstance(e, WorkerDied):
                with trio.CancelScope(shield=True):
                    await self.aclose()
            raise

    async def aclose(self) -> None:
        launched, self.launched = self.launched, None
        if launched is not None:
            await launched.close()
        if self.process is not None:
            process, self.process = self.process, None
            await process.close()
