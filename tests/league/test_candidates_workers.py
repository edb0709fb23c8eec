"""Candidate verdicts played by remote workers on a real PostgreSQL: `arena league serve
--no-local-games` plays nothing, two `arena league worker`s play every game of a new version's
candidate test, one of them SIGKILLed in the middle of a candidate game; the test reaches its
verdict with every game counted once, and the submission page's event stream follows it as
the workers record (the queue executor tells the pages, within a poll, what the workers
recorded: arena/league/executors/remote.py)."""

from __future__ import annotations

import contextlib
import json
import signal
import uuid
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
import trio

from arena.league.db import fleet, ledger, schema
from arena.league.db.database import Database
from arena.league.executors.remote import QueueExecutor
from arena.league.scheduler import Scheduler
from arena.league.service import League
from arena.league.settings import load_settings

from .support import Server, add_bots, arena, make_league, postgres_database
from .test_candidates_e2e import named_copy, verdict
from .test_workers import STALLED_AFTER, Worker, leftovers, live_jobs, q, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

#: the previous version thinks a little at every move: games long enough to be caught in play
SLOW = """import time
_choose = choose

def choose(turn, bot):
    time.sleep(0.03)
    return _choose(turn, bot)
"""


def slow_random(where: Path) -> Path:
    bot = named_copy("random-py", "mine", where)
    src = (bot / "bot.py").read_text()
    head, main = src.split('\nif __name__ == "__main__":', 1)
    (bot / "bot.py").write_text(head + "\n" + SLOW + '\nif __name__ == "__main__":' + main)
    return bot


def holding_candidate(engine: sa.Engine, worker: str) -> list[tuple[int, int]]:
    """Candidate games the worker holds an open attempt of: (game, attempt)."""
    return [
        (g, n)
        for g, n in q(
            engine,
            "SELECT a.game_id, a.attempt FROM attempts a JOIN games g ON g.id = a.game_id "
            "WHERE a.worker = :w AND a.ended_at IS NULL AND g.state = 'running' "
            "AND g.attempt = a.attempt AND g.kind = 'candidate'",
            w=worker,
        )
    ]


def test_a_candidate_test_played_by_workers_counts_every_game_once(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:6]
    names = [f"ca-{tag}", f"cb-{tag}"]
    with postgres_database() as url:
        d = make_league(
            tmp_path / "league",
            url,
            games='["stripes"]',
            concurrency="2",
            elo1="200",
            alpha="0.1",
            beta="0.1",
            max_pairs="30",
        )
        arena("league", "user", "add", "ann", "-C", str(d))
        for bot in (slow_random(tmp_path / "v1"), named_copy("random-py", "other", tmp_path)):
            arena("league", "bot", "add", str(bot), "--owner", "ann", "-C", str(d))
        engine = sa.create_engine(url)
        server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
        workers = [Worker(url, n, tmp_path, tmp_path / f"{n}.log") for n in names]
        try:
            # the new version: the strong bot; its test opens as it becomes active
            arena(
                "league", "bot", "add", str(named_copy("strong", "mine", tmp_path / "v2")),
                "--owner", "ann", "-C", str(d),
            )  # fmt: skip
            v2 = server.wait_for(lambda: verdict(server, "mine", 2), what="the test to open")
            assert v2["state"] == "testing"
            # follow the submission page's stream from now on
            follow = contextlib.ExitStack()
            events = follow.enter_context(httpx.Client(base_url=server.url, timeout=60))
            stream = follow.enter_context(
                events.stream("GET", f"/submissions/{v2['version_id']}/events")
            )
            lines = stream.iter_lines()

            # SIGKILL a worker in the middle of a candidate game
            a = workers[0]
            lost = None
            for _ in range(20):
                held = wait_until(
                    lambda: holding_candidate(engine, names[0]), "a candidate game in play", 120
                )
                a.stop(signal.SIGKILL)
                still = [
                    (g, n)
                    for g, n in held
                    if q(
                        engine,
                        "SELECT 1 FROM attempts WHERE game_id = :g AND attempt = :n "
                        "AND (ended_at IS NULL OR outcome = :lost)",
                        g=g,
                        n=n,
                        lost=fleet.LOST,
                    )
                ]
                if still:
                    lost = still[0]
                    break
                a = workers[0] = Worker(url, names[0], tmp_path, tmp_path / f"{names[0]}.log")
            assert lost is not None, "worker a never died holding a candidate game"
            workers[0] = Worker(url, names[0], tmp_path, tmp_path / f"{names[0]}.log")

            # the stream follows the test to its verdict and ends
            states = []
            for line in lines:
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                    if kind == "status":
                        states.append(data["html"])
                    if kind == "end":
                        break
            follow.close()
            done = verdict(server, "mine", 2)
            assert done["state"] == "better", done
            # the last block the page showed is the verdict's
            assert 'data-state="better"' in states[-1]
            assert f"{done['games']} games" in states[-1] or str(done["games"]) in states[-1]
            # and the killed game was replayed elsewhere, once
            wait_until(
                lambda: q(
                    engine,
                    "SELECT 1 FROM games WHERE id = :g AND state = 'finished' AND attempt > :n",
                    g=lost[0],
                    n=lost[1],
                ),
                "the killed candidate game to be replayed",
                120,
            )
        finally:
            server.stop()
        wait_until(lambda: live_jobs(engine) == 0, "the queue to drain", 120)
        for w in workers:
            assert w.stop() == 0
        try:
            # the league's only test: its games
            rows = q(
                engine,
                "SELECT id, state, candidate_pair, version0, attempt FROM games "
                "WHERE candidate_test IS NOT NULL ORDER BY id",
            )
            assert len({t for (t,) in q(engine, "SELECT id FROM candidate_tests")}) == 1
            # no game of the test made twice, every one finished and recorded exactly once
            keys = [(p, v0) for _, _, p, v0, _ in rows]
            assert len(keys) == len(set(keys))
            assert {s for _, s, _, _, _ in rows} == {"finished"}
            ids = [g for g, *_ in rows]
            records = q(
                engine,
                "SELECT count(*) FROM records WHERE game_id = ANY(:ids)",
                ids=ids,
            )[0][0]
            assert records == len(rows)
            # every attempt that recorded was a worker's; the killed one is voided against it
            players = q(
                engine,
                "SELECT DISTINCT worker FROM attempts WHERE game_id = ANY(:ids) "
                "AND outcome = 'recorded'",
                ids=ids,
            )
            assert {w for (w,) in players} <= set(names), players
            assert (lost[0], lost[1], "worker_lost") in q(
                engine, "SELECT game_id, attempt, kind FROM voids"
            )
            # counted once: the verdict's games are its complete pairs, each of two recorded games
            pairs: dict[int, int] = {}
            for _, _, p, _, _ in rows:
                pairs[p] = pairs.get(p, 0) + 1
            complete = sorted(p for p, n in pairs.items() if n == 2)
            assert done["games"] == 2 * done["pairs"]
            assert done["pairs"] <= len(complete)
            assert done["wins"] + done["draws"] + done["losses"] == done["games"]
            unrated = q(
                engine,
                "SELECT count(*) FROM seats WHERE game_id = ANY(:ids) AND mu_after IS NOT NULL",
                ids=ids,
            )[0][0]
            assert unrated == 0
        finally:
            engine.dispose()
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)


def test_the_queue_executor_tells_the_pages_what_the_workers_recorded(tmp_path: Path) -> None:
    """A result recorded by a worker (another connection, as a worker's slot records) bumps
    the league's `results` signal, which the submission pages wait on, within a few of the
    executor's looks: not at their 15 s keep-alive."""
    with postgres_database() as url:
        d = make_league(tmp_path / "league", url, games='["stripes"]')
        settings = load_settings(d)
        db = Database(url)
        worker_db = Database(url)
        try:
            a, b = add_bots(db, 2, ["stripes"])
            league = League(settings, db)
            scheduler = Scheduler(db, settings)
            scheduler.on_recorded = league.recorded
            executor = QueueExecutor(settings, public_url="http://127.0.0.1:1")
            with worker_db.write() as conn:
                gid = ledger.create_game(
                    conn,
                    ledger.NewGame(
                        schema.GameKind.RATED, "stripes", "stripes", {}, 1, (), {}, a, b
                    ),
                )

            async def main() -> None:
                async with trio.open_nursery() as nursery:
                    await nursery.start(executor.run, scheduler)
                    seen = league.results.generation
                    # a worker claims and records the game, without the server
                    with worker_db.write() as conn:
                        claim = ledger.claim_game(conn, gid)
                        assert claim is not None
                        record = {
                            "format": "arena-record/1",
                            "result": {"winner": 0, "reason": "score", "forfeit": False},
                            "turn_count": 3,
                        }
                        assert ledger.record_result(conn, gid, claim.attempt, record)
                    with trio.fail_after(10):  # a few polls, well short of the 15 s keep-alive
                        await league.results.wait_past(seen)
                    nursery.cancel_scope.cancel()

            trio.run(main)
        finally:
            worker_db.dispose()
            db.dispose()
