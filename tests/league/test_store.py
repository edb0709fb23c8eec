"""The league store on SQLite and PostgreSQL: the migrated schema is the tables, a result is
recorded exactly once (stale and duplicate results change nothing), voids requeue, and the
ratings always equal a replay of the recorded games."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.league import migrations
from arena.league.db import ledger, roster, schema, views
from arena.league.ratings import MU0, SIGMA0, Skill, rate

from .support import add_bots, database_fixtures, empty_tables

VARIANTS = ["papagra", "stripes"]
url, db = database_fixtures()


def record(winner: int | None, reason: str = "score", forfeit: bool = False) -> dict:
    return {
        "format": "arena-record/1",
        "result": {"winner": winner, "reason": reason, "forfeit": forfeit, "scores": [1, 2]},
        "stderr": ["err0", "err1"],
        "logs": [{"seat": 0, "t": 0.1, "message": "hello"}],
        "turn_count": 7,
        "duration": 0.5,
    }


def new_game(db, v0: int, v1: int, variant: str = "papagra") -> int:
    with db.write() as conn:
        return ledger.create_game(
            conn,
            ledger.NewGame(schema.GameKind.RATED, variant, variant, {}, 1, (), {}, v0, v1),
        )


def claim(db, gid: int) -> ledger.Claim:
    with db.write() as conn:
        c = ledger.claim_game(conn, gid)
    assert c is not None
    return c


def rating_row(db, vid: int, variant: str = "papagra"):
    with db.read() as conn:
        return conn.execute(
            sa.select(schema.ratings).where(
                schema.ratings.c.version_id == vid, schema.ratings.c.variant == variant
            )
        ).one()


def test_migrations_create_exactly_the_tables(url):
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), schema.metadata) == []
        assert migrations.current_revision(engine) == migrations.head_revision()
        migrations.check_current(engine)
    finally:
        engine.dispose()


def test_a_result_is_recorded_once_and_rated_once(db):
    a, b = add_bots(db, 2, VARIANTS)
    gid = new_game(db, a, b)
    c = claim(db, gid)
    assert c.attempt == 1 and c.versions == (a, b) and c.paths == ("/bots/0", "/bots/1")
    with db.write() as conn:
        assert ledger.record_result(conn, gid, 1, record(0))
    with db.write() as conn:  # a duplicate delivery of the same result
        assert not ledger.record_result(conn, gid, 1, record(1))
    ra, rb = rating_row(db, a), rating_row(db, b)
    assert (ra.games, ra.wins, rb.games, rb.losses) == (1, 1, 1, 1)
    sa_, sb = rate(Skill(), Skill(), 1.0)
    assert ra.mu == pytest.approx(sa_.mu) and rb.sigma == pytest.approx(sb.sigma)
    with db.read() as conn:
        assert ledger.game_record(conn, gid)["result"]["winner"] == 0
        detail = views.game_detail(conn, gid)
    assert detail["state"] == "finished" and detail["rated"] and detail["result"] == "1-0"


def test_a_stale_attempt_changes_nothing(db):
    a, b = add_bots(db, 2, VARIANTS)
    gid = new_game(db, a, b)
    claim(db, gid)
    with db.write() as conn:
        assert ledger.void_attempt(conn, gid, 1, schema.VoidKind.WORKER_LOST, "lost", 3)
    assert claim(db, gid).attempt == 2
    with db.write() as conn:  # the lost worker reports after all: attempt 1 is stale
        assert not ledger.record_result(conn, gid, 1, record(0))
        assert not ledger.void_attempt(conn, gid, 1, schema.VoidKind.SANDBOX_FAULT, "x", 3)
    assert rating_row(db, a).games == 0
    with db.write() as conn:
        assert ledger.record_result(conn, gid, 2, record(None))
    assert rating_row(db, a).draws == 1
    with db.read() as conn:
        detail = views.game_detail(conn, gid)
    assert detail["attempt"] == 2
    assert [(v["attempt"], v["kind"]) for v in detail["voids"]] == [(1, "worker_lost")]


def test_voids_fail_a_game_after_max_attempts_but_a_server_stop_never_does(db):
    a, b = add_bots(db, 2, VARIANTS)
    gid = new_game(db, a, b)
    for attempt in (1, 2):
        claim(db, gid)
        with db.write() as conn:
            assert ledger.void_attempt(conn, gid, attempt, schema.VoidKind.SANDBOX_FAULT, "f", 2)
    with db.read() as conn:
        assert views.game_detail(conn, gid)["state"] == "failed"
        assert ledger.queued_game_ids(conn, 5) == []
    other = new_game(db, a, b)
    for _ in range(3):
        claim(db, other)
        with db.write() as conn:
            assert ledger.void_running(conn, schema.VoidKind.SERVER_STOPPED, "stop", 2) == 1
            assert ledger.queued_game_ids(conn, 5) == [other]


def test_two_deliveries_racing_record_one_result(db):
    a, b = add_bots(db, 2, VARIANTS)
    gid = new_game(db, a, b)
    claim(db, gid)
    results: list[bool] = []
    barrier = threading.Barrier(4)

    def deliver(winner: int) -> None:
        barrier.wait()
        with db.write() as conn:
            results.append(ledger.record_result(conn, gid, 1, record(winner)))

    threads = [threading.Thread(target=deliver, args=(i % 2,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, False, False, True]
    assert rating_row(db, a).games == 1 == rating_row(db, b).games


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    games=st.lists(
        st.tuples(
            st.integers(0, 3), st.integers(0, 3), st.sampled_from([0, 1, None]), st.booleans()
        ),
        min_size=1,
        max_size=12,
    )
)
def test_ratings_equal_a_replay_of_the_recorded_games(db, games):
    empty_tables(db)
    ids = add_bots(db, 4, VARIANTS)
    skills = {v: Skill() for v in ids}
    for i, j, winner, stale in games:
        if i == j:
            continue
        gid = new_game(db, ids[i], ids[j])
        claim(db, gid)
        with db.write() as conn:
            if stale:  # a void first, then the replay is recorded
                ledger.void_attempt(conn, gid, 1, schema.VoidKind.WORKER_LOST, "lost", 3)
        attempt = claim(db, gid).attempt if stale else 1
        reason = "crash" if winner is not None and i % 2 else "score"
        with db.write() as conn:
            assert ledger.record_result(conn, gid, attempt, record(winner, reason))
        pts = 0.5 if winner is None else float(winner == 0)
        skills[ids[i]], skills[ids[j]] = rate(skills[ids[i]], skills[ids[j]], pts)
    for v in ids:
        row = rating_row(db, v)
        assert row.mu == pytest.approx(skills[v].mu)
        assert row.sigma == pytest.approx(skills[v].sigma)
        assert row.score == pytest.approx(skills[v].conservative)
        assert row.games == row.wins + row.draws + row.losses


def test_a_new_version_inherits_mu_resets_sigma_and_retires_the_old_one(db):
    a, b = add_bots(db, 2, VARIANTS)
    gid = new_game(db, a, b)
    claim(db, gid)
    with db.write() as conn:
        ledger.record_result(conn, gid, 1, record(0))
        owner = roster.version(conn, a).owner_id
        v2 = roster.add_version(
            conn,
            owner_id=owner,
            bot_name="bot0",
            archive_sha256="1" * 64,
            path="/bots/0b",
            manifest={},
        )
        assert v2.number == 2 and v2.state == "validating"
        assert roster.finish_validation(conn, v2.id, {"passed": True}, True, VARIANTS)
        assert roster.version(conn, a).state == "retired"
        board = views.leaderboard(conn, "papagra", limit=10, offset=0)
    new = rating_row(db, v2.id)
    assert new.mu == pytest.approx(rating_row(db, a).mu) and new.sigma == SIGMA0
    assert [(r["bot"], r["version"]) for r in board] == [("bot0", 2), ("bot1", 1)]
    assert rating_row(db, v2.id, "stripes").mu == MU0


def test_a_failed_validation_keeps_the_active_version(db):
    (a,) = add_bots(db, 1, VARIANTS)
    with db.write() as conn:
        owner = roster.version(conn, a).owner_id
        v2 = roster.add_version(
            conn, owner_id=owner, bot_name="bot0", archive_sha256="1" * 64, path="/p", manifest={}
        )
        roster.finish_validation(
            conn, v2.id, {"passed": False, "summary": "crash"}, False, VARIANTS
        )
        assert roster.version(conn, a).state == "active"
        assert roster.version(conn, v2.id).state == "failed"
        assert roster.version(conn, v2.id).validation == {"passed": False, "summary": "crash"}


def test_game_lists_filter_by_bot_variant_and_outcome_newest_first(db):
    a, b, c = add_bots(db, 3, VARIANTS)
    plan = [
        (a, b, 0, "papagra"),
        (b, c, 1, "stripes"),
        (c, a, None, "papagra"),
        (a, c, 1, "papagra"),
    ]
    gids = []
    for v0, v1, winner, variant in plan:
        gid = new_game(db, v0, v1, variant)
        claim(db, gid)
        with db.write() as conn:
            ledger.record_result(
                conn, gid, 1, record(winner, "crash" if winner == 1 else "score", winner == 1)
            )
        gids.append(gid)
    queued = new_game(db, a, b)
    with db.read() as conn:
        bot_a = roster.version(conn, a).bot_id

        def ids(**kw):
            return [g["id"] for g in views.list_games(conn, limit=10, offset=0, **kw)]

        assert ids() == gids[::-1]
        assert ids(bot_id=bot_a) == [gids[3], gids[2], gids[0]]
        assert ids(bot_id=bot_a, outcome="win") == [gids[0]]
        assert ids(bot_id=bot_a, outcome="draw") == [gids[2]]
        assert ids(bot_id=bot_a, outcome="forfeit") == [gids[3]]
        assert ids(variant="stripes") == [gids[1]]
        assert ids(bot_id=bot_a, variant="papagra") == [gids[3], gids[2], gids[0]]
        page = [g["id"] for g in views.list_games(conn, limit=2, offset=2)]
        assert page == [gids[1], gids[0]]
        assert [g["id"] for g in views.queue(conn, limit=10, offset=0)] == [queued]
        assert views.counts(conn) == {"finished": 4, "queued": 1}
        assert sorted(ledger.pair_results(conn, "papagra")) == [(a, b, 1.0, 1), (a, c, 0.5, 2)]
