"""Retries with backoff: a game the platform voided waits in the queue, for a time that doubles
with each attempt and is half random, while the slots play other games; the scheduler sleeps
until the wait is over rather than polling; a real server spreads a failing game's attempts."""

from __future__ import annotations

import itertools
import random
import shutil
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

from arena.league.backoff import BASE, CAP, Backoff
from arena.league.db import ledger, roster, schema
from arena.league.executors.base import Outcome
from arena.league.scheduler import Scheduler
from arena.league.settings import settings_from_dict

from .support import BOTS, Server, add_bots, add_user, cli, database_fixtures, make_league

url, db = database_fixtures()


@given(attempt=st.integers(1, 40), seed=st.integers(0, 2**32))
def test_the_wait_doubles_is_half_random_and_is_capped(attempt, seed):
    b = Backoff()
    ceiling = min(CAP, BASE * 2 ** (attempt - 1))
    d = b.delay(attempt, random.Random(seed))
    assert ceiling / 2 <= d <= ceiling <= CAP
    assert b.after(schema.VoidKind.SERVER_STOPPED, attempt, random.Random(seed)) == 0.0
    assert b.after(schema.VoidKind.SANDBOX_FAULT, attempt, random.Random(seed)) == d


def test_games_voided_together_come_back_apart():
    rng = random.Random(7)
    waits = [Backoff().delay(1, rng) for _ in range(50)]
    assert len({round(w, 3) for w in waits}) > 40  # jitter: not one instant for all


async def test_a_voided_game_waits_in_the_queue_while_others_play(db, tmp_path):
    """An injected clock: the voided game is skipped (new games are made meanwhile) until its
    not-before time, then claimed before any new game."""
    settings = settings_from_dict({"games": ["stripes"], "opening_turns": 0}, root=tmp_path)
    now = [1_800_000_000.0]
    scheduler = Scheduler(db, settings, seed=3, clock=lambda: now[0])
    add_bots(db, 2, ["stripes"])
    first = await scheduler.next_job()
    await scheduler.finished(Outcome(first, void=schema.VoidKind.SANDBOX_FAULT, reason="EAGAIN"))
    with db.read() as conn:
        not_before = conn.execute(
            sa.select(schema.games.c.not_before).where(schema.games.c.id == first.game_id)
        ).scalar_one()
    wait = ledger.seconds_until(not_before, now[0])
    assert BASE / 2 - 0.001 <= wait <= BASE + 0.001

    other = await scheduler.next_job()  # the slot is not idle: a new game
    assert other.game_id != first.game_id
    await scheduler.finished(Outcome(other, record={"result": {"winner": 0}}))
    now[0] += wait - 0.01
    assert (await scheduler.next_job()).game_id != first.game_id
    now[0] += 0.02
    again = await scheduler.next_job()
    assert (again.game_id, again.attempt) == (first.game_id, 2)

    # the second void waits longer (attempt 2: between BASE and 2 BASE)
    await scheduler.finished(Outcome(again, void=schema.VoidKind.SANDBOX_FAULT, reason="EAGAIN"))
    with db.read() as conn:
        not_before = conn.execute(
            sa.select(schema.games.c.not_before).where(schema.games.c.id == first.game_id)
        ).scalar_one()
    assert BASE - 0.001 <= ledger.seconds_until(not_before, now[0]) <= 2 * BASE + 0.001


class CountingScheduler(Scheduler):
    looks = 0

    def _claim_next(self):
        self.looks += 1
        return super()._claim_next()


async def test_the_scheduler_sleeps_until_the_backoff_ends(db, tmp_path, autojump_clock):
    """Nothing else to play (the other bot is disabled): the scheduler neither polls in a loop
    nor hands the game out early; it claims it once its wait is over.

    Under trio's MockClock: the scheduler's sleep takes no real time, and its wall clock (the
    `not_before` times) is the mock clock's, read straight from the clock object because the
    scheduler reads it in its database thread. No deadline guards the wait: the mock clock jumps
    to the next deadline while a database thread runs (pytest's timeout guards instead)."""
    settings = settings_from_dict({"games": ["stripes"], "opening_turns": 0}, root=tmp_path)
    epoch = time.time() - autojump_clock.current_time()
    scheduler = CountingScheduler(
        db,
        settings,
        seed=5,
        backoff=Backoff(base=1.0),
        clock=lambda: epoch + autojump_clock.current_time(),
    )
    add_bots(db, 2, ["stripes"])
    job = await scheduler.next_job()
    await scheduler.finished(Outcome(job, void=schema.VoidKind.SANDBOX_FAULT, reason="EAGAIN"))
    with db.write() as conn:
        roster.set_bot_disabled(conn, roster.bot_by_name(conn, "bot1").id, True)
        not_before = conn.execute(
            sa.select(schema.games.c.not_before).where(schema.games.c.id == job.game_id)
        ).scalar_one()
    scheduler.looks = 0
    again = await scheduler.next_job()
    assert ledger.seconds_until(not_before, scheduler.clock()) <= 0  # not before its time
    assert (again.game_id, again.attempt) == (job.game_id, 2)
    assert scheduler.looks <= 3, scheduler.looks  # one look, a sleep, one look (and a spare)


@pytest.mark.slow
def test_a_real_server_spreads_a_failing_games_attempts(tmp_path: Path) -> None:
    """A bot whose directory lost its manifest after it joined: every attempt of its games is
    voided by the platform. The attempts of a failed game are spread by the backoff, not burnt
    within milliseconds."""
    league = make_league(tmp_path / "league", games='["stripes"]', max_attempts="3")
    add_user(league, "op")
    for name in ("ra", "rb"):
        bot = tmp_path / name
        shutil.copytree(BOTS / "random-py", bot, ignore=shutil.ignore_patterns("__pycache__"))
        toml = bot / "bot.toml"
        toml.write_text(toml.read_text().replace('name = "random-py"', f'name = "{name}"', 1))
        cli("league", "bot", "add", str(bot), "--owner", "op", "-C", str(league))
    [broken] = [p for p in (league / "bots").iterdir() if p.name == "2"]
    (broken / "bot.toml").unlink()
    with Server(league) as server:
        failed = server.wait_for(
            lambda: server.get("/api/v1").json()["games"].get("failed"),
            timeout=120,
            what="a game failed for good",
        )
        assert failed
        engine = sa.create_engine(f"sqlite:///{league / 'league.sqlite'}")
        try:
            with engine.connect() as conn:
                game = conn.execute(
                    sa.select(schema.games.c.id).where(schema.games.c.state == "failed").limit(1)
                ).scalar_one()
                voids = conn.execute(
                    sa.select(schema.voids.c.attempt, schema.voids.c.at)
                    .where(schema.voids.c.game_id == game)
                    .order_by(schema.voids.c.attempt)
                ).all()
        finally:
            engine.dispose()
        assert [a for a, _ in voids] == [1, 2, 3]
        at = [ledger.seconds_until(t, 0) for _, t in voids]
        gaps = [b - a for a, b in itertools.pairwise(at)]
        # the documented waits: after attempt n at least 2 * 2**(n-1) / 2 seconds
        assert gaps[0] >= 1.0 and gaps[1] >= 2.0, gaps
        # and the home page links the failed games to their list
        home = server.get("/").text
        assert 'href="/games?state=failed"' in home
        listed = server.get("/games?state=failed").text
        assert f'href="/games/{game}"' in listed
