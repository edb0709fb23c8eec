"""Candidate verdicts in the league's database, on SQLite and PostgreSQL: a new version's test
opens at its activation against the previous version, its games come from the scheduler
interleaved with rated ones at the configured share, in pairs (both seats, one opening), are
counted exactly once (a stale result, a replay, two games of a pair recorded at once) and move
no rating; a third version or a retirement stops the test; the pages show it escaped."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from arena.league.candidates import IN_FLIGHT, CandidateSource
from arena.league.db import ledger, roster, schema, verdicts, views
from arena.league.executors.base import GameJob, Outcome
from arena.league.ratings import MU0, SIGMA0
from arena.league.scheduler import Scheduler
from arena.league.settings import settings_from_dict

from .support import BACKENDS, league_fixture, page_client

#: bounds no 6 pairs can decide (|LLR| stays under 0.35 whatever the results): tests that
#: end "undecided" when their pairs run out
WIDE = {"elo0": -10, "elo1": 10, "max_pairs": 3}

league = league_fixture(backends=BACKENDS, sprt=WIDE)


def record(winner: int | None) -> dict[str, Any]:
    return {
        "format": "arena-record/1",
        "result": {"winner": winner, "reason": "score", "scores": [1, 0]},
        "turn_count": 3,
        "duration": 0.1,
    }


def add_version(league: Any, owner: str, bot: str) -> int:
    """A new version of `bot` (its owner made if new), validated and active: its id."""
    with league.db.write() as conn:
        user = roster.user_by_name(conn, owner) or roster.add_user(conn, owner, f"{owner}-t")
        v = roster.add_version(
            conn,
            owner_id=user.id,
            bot_name=bot,
            archive_sha256="0" * 64,
            path=f"/bots/{bot}",
            manifest={"league_name": bot},
        )
    assert league.finish_validation_sync(v.id, {"passed": True})
    return v.id


def verdicts_of(league: Any, version_id: int) -> list[Any]:
    with league.db.read() as conn:
        return verdicts.tests_of_version(conn, version_id)


async def claim(scheduler: Scheduler) -> GameJob | None:
    """The scheduler's next game, or None when it has none to give (it would wait)."""
    with trio.move_on_after(1.0):
        return await scheduler.next_job()
    return None


def kind_of(league: Any, game_id: int) -> str:
    with league.db.read() as conn:
        return views.game_detail(conn, game_id)["kind"]


async def test_a_new_version_plays_pairs_against_the_previous_one_counted_once(league):
    v1 = add_version(league, "ann", "mine")
    assert verdicts_of(league, v1) == []  # a bot's first version has nothing to beat
    v2 = add_version(league, "ann", "mine")
    (test,) = verdicts_of(league, v2)
    assert (test.baseline_id, test.variant, test.state) == (v1, "stripes", "testing")
    with league.db.read() as conn:
        assert roster.version(conn, v1).state == "retired"  # out of rated play, plays its test
    scheduler = Scheduler(league.db, league.settings, seed=3)
    jobs = [await claim(scheduler) for _ in range(IN_FLIGHT)]
    assert all(jobs) and await claim(scheduler) is None  # at most IN_FLIGHT in flight
    with league.db.read() as conn:
        games = [views.game_detail(conn, j.game_id) for j in jobs]
    assert {g["kind"] for g in games} == {"candidate"}
    # pairs: both seats, the same opening
    assert [g["seats"][0]["version_id"] for g in games] == [v2, v1, v2, v1]
    assert jobs[0].match["opening"] == jobs[1].match["opening"]
    assert jobs[2].match["opening"] == jobs[3].match["opening"]
    assert jobs[0].match["opening"] != jobs[2].match["opening"]
    # the new version wins every game; a replayed attempt and a stale result count once
    won = [record(0), record(1), record(0), record(1)]
    await scheduler.finished(Outcome(jobs[0], void=schema.VoidKind.SANDBOX_FAULT, reason="x"))
    scheduler.clock = lambda: 1e12  # the replay's backoff is over
    again = await claim(scheduler)
    assert again is not None and (again.game_id, again.attempt) == (jobs[0].game_id, 2)
    await scheduler.finished(Outcome(jobs[0], record=won[0]))  # stale: attempt 1
    assert scheduler.stale == 1
    await scheduler.finished(Outcome(again, record=won[0]))
    await scheduler.finished(Outcome(again, record=won[0]))  # delivered twice
    for job, rec in zip(jobs[1:], won[1:], strict=True):
        await scheduler.finished(Outcome(job, record=rec))
    (test,) = verdicts_of(league, v2)
    assert (test.wins, test.draws, test.losses, test.pentanomial) == (4, 0, 0, "0,0,0,0,2")
    assert test.state == "testing" and test.games_made == 4
    last = [await claim(scheduler) for _ in range(2)]
    assert all(last) and await claim(scheduler) is None  # max_pairs 3: six games in all
    await scheduler.finished(Outcome(last[0], record=record(None)))
    (test,) = verdicts_of(league, v2)
    assert (test.pentanomial, test.state) == ("0,0,0,0,2", "testing")  # a half pair
    await scheduler.finished(Outcome(last[1], record=record(None)))
    (test,) = verdicts_of(league, v2)
    assert (test.wins, test.draws, test.pentanomial) == (4, 2, "0,0,1,0,2")
    assert test.state == "undecided" and test.decided_at is not None
    # unrated: no rating, leaderboard row or placement count moved
    with league.db.read() as conn:
        for vid in (v1, v2):
            (r,) = [r for r in views.version_ratings(conn, vid) if r["variant"] == "stripes"]
            assert (r["games"], r["sigma"], r["wins"]) == (0, round(SIGMA0, 3), 0)
            assert r["mu"] == round(MU0, 3)
        assert ledger.games_per_variant(conn) == {}
        assert [c.games for c in ledger.candidates(conn, "stripes")] == [0]
        board = views.leaderboard(conn, "stripes", limit=10, offset=0)
        assert [(b["bot"], b["games"]) for b in board] == [("mine", 0)]
        assert not any(g["rated"] for g in views.list_games(conn, limit=50, offset=0))


@pytest.mark.parametrize(
    ("share", "expected"),
    [(0.5, "RCRCRCRC"), (1 / 3, "RRCRRCRR"), (1.0, "CCCCRRRR")],
)
async def test_the_scheduler_interleaves_candidate_and_rated_games_at_the_share(
    league, share, expected
):
    """R: a rated game, C: a candidate test's. With share 1 the test goes first until its
    in-flight cap (IN_FLIGHT) holds it, and rated games fill the slots meanwhile."""
    settings = settings_from_dict(
        {
            "database": league.settings.database,
            "games": ["stripes"],
            "sprt": {**WIDE, "max_pairs": 50, "share": share},
        },
        root=league.settings.root,
    )
    league.settings = settings
    for bot in ("a", "b"):
        add_version(league, "bob", bot)
    v1 = add_version(league, "ann", "mine")
    v2 = add_version(league, "ann", "mine")
    scheduler = Scheduler(league.db, settings, seed=1)
    kinds = ""
    for _ in range(len(expected)):
        job = await claim(scheduler)
        assert job is not None
        kinds += "C" if kind_of(league, job.game_id) == "candidate" else "R"
        if kinds[-1] == "R":
            assert v1 not in job_versions(league, job)  # the retired version plays no rated game
        elif share < 1:
            await scheduler.finished(Outcome(job, record=record(0)))
    assert kinds == expected
    assert v2


def job_versions(league: Any, job: GameJob) -> set[int]:
    with league.db.read() as conn:
        return {s["version_id"] for s in views.game_detail(conn, job.game_id)["seats"]}


@given(share=st.floats(0.01, 1.0), n=st.integers(1, 60), rated_gap=st.integers(0, 60))
def test_the_share_holds_over_any_run(share, n, rated_gap):
    """Whatever the share, over the first n new games with both sources able, the candidate
    games are the share of them, within one; a source with nothing lets the other play."""

    class Always(CandidateSource):
        def test_game(self, conn: Any) -> Any:
            return "C"

    settings = settings_from_dict({"sprt": {"share": share}}, root=Path("/"))
    source = Always(settings)
    made = [source.next_game(None, lambda: "R") for _ in range(n)]
    assert abs(made.count("C") - n * share) <= 1
    # rated matchmaking has nothing (one bot): every game is the test's
    made = [source.next_game(None, lambda: None) for _ in range(rated_gap)]
    assert made == ["C"] * rated_gap


def test_a_third_version_supersedes_and_retiring_stops(league):
    v1 = add_version(league, "ann", "mine")
    v2 = add_version(league, "ann", "mine")
    scheduler = Scheduler(league.db, league.settings, seed=1)
    first = scheduler.record  # the blocking path the executors' threads take
    claims = []
    with league.db.write() as conn:
        claims.append(scheduler._claim_in(conn))
    v3 = add_version(league, "ann", "mine")
    (old,) = verdicts_of(league, v2)
    (new,) = verdicts_of(league, v3)
    assert (old.state, old.note) == ("stopped", "superseded by version 3")
    assert (new.state, new.baseline_id) == ("testing", v2)
    # the game of the stopped test still in flight is recorded as a game, and not counted
    claim = claims[0]
    assert claim.versions == (v2, v1)
    job = GameJob(claim.game_id, claim.attempt, {}, ({}, {}), claim.variant)
    assert first(Outcome(job, record=record(0)))
    (old,) = verdicts_of(league, v2)
    assert (old.wins, old.state) == (0, "stopped")
    with league.db.read() as conn:
        assert views.game_detail(conn, claim.game_id)["state"] == "finished"
    # the owner retires the bot: the test stops, and no game of it is made any more
    with league.db.read() as conn:
        user = roster.user_by_name(conn, "ann")
    trio.run(league.retire_bot, user, "mine")
    (new,) = verdicts_of(league, v3)
    assert (new.state, new.note) == ("stopped", "version 3 was retired")
    with league.db.write() as conn:
        assert scheduler._claim_in(conn) is None
    trio.run(league.retire_bot, user, "mine", False)  # back on the ladder: the test stays over
    (new,) = verdicts_of(league, v3)
    assert new.state == "stopped"


def test_two_games_of_a_pair_recorded_at_once_count_one_pair(league):
    """On PostgreSQL the two recording transactions run side by side; the test's row lock
    makes the later one see the earlier one's game, so the pair is counted (once)."""
    add_version(league, "ann", "mine")
    v2 = add_version(league, "ann", "mine")
    scheduler = Scheduler(league.db, league.settings, seed=1)
    with league.db.write() as conn:
        a = scheduler._claim_in(conn)
        b = scheduler._claim_in(conn)
    barrier = threading.Barrier(2)
    done: list[bool] = []

    def deliver(c: ledger.Claim) -> None:
        barrier.wait()
        with league.db.write() as conn:
            done.append(ledger.record_result(conn, c.game_id, c.attempt, record(0)))

    threads = [threading.Thread(target=deliver, args=(c,)) for c in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert done == [True, True]
    (test,) = verdicts_of(league, v2)
    assert (test.pentanomial, test.wins, test.losses) == ("0,0,1,0,0", 1, 1)


def test_the_pages_and_the_api_show_the_verdict_escaped(league):
    add_version(league, "ann", "mine")
    v2 = add_version(league, "ann", "mine")
    (test,) = verdicts_of(league, v2)
    with league.db.write() as conn:
        assert verdicts.stop(conn, test.id, "<script>alert(1)</script>")
    with page_client(league) as client:
        for path in (f"/submissions/{v2}", "/bots/mine"):
            html = client.get(path).text
            assert 'data-state="stopped"' in html and "LLR" in html
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
            assert "<script>alert(1)" not in html
        api = client.get("/api/v1/bots/mine/versions/2").json()
        (v,) = api["verdicts"]
        assert (v["verdict"], v["version"], v["against"], v["games"]) == ("stopped", 2, 1, 0)
        assert v["lower"] < 0 < v["upper"] and v["note"] == "<script>alert(1)</script>"
        assert client.get("/api/v1/bots/mine").json()["verdicts"] == [v]
