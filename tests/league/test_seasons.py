"""Seasons and finals in the league's database, on SQLite and PostgreSQL: open and close, fresh
ratings, a closed season kept whole, a game in flight across a close (recorded once, in its
own season, unrated), the migration of an existing league into its first season, and a final's
bracket derived from its recorded games only (arena/league/db/seasons.py, db/finals.py).
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from arena.league import migrations
from arena.league.db import finals, ledger, schema, seasons, views
from arena.league.errors import LeagueError
from arena.league.ratings import MU0, SIGMA0
from arena.league.settings import settings_from_dict

from .support import add_bots, database_fixtures, database_url
from .test_store import claim, new_game, rating_row, record

VARIANTS = ["papagra", "stripes"]
url, db = database_fixtures()


def play(db, a: int, b: int, winner: int | None, variant: str = "papagra") -> int:
    gid = new_game(db, a, b, variant)
    c = claim(db, gid)
    with db.write() as conn:
        assert ledger.record_result(conn, gid, c.attempt, record(winner))
    return gid


def first_season(db) -> seasons.Season:
    """What migration 0010 makes, for the tests' emptied tables."""
    with db.write() as conn:
        return seasons.open_season(conn, "1", VARIANTS)


def test_a_league_without_seasons_rates_as_before(db):
    a, b = add_bots(db, 2, VARIANTS)
    gid = play(db, a, b, 0)
    with db.read() as conn:
        assert views.game_detail(conn, gid)["rated"]
        assert seasons.ladder_open(conn)
    assert rating_row(db, a).games == 1


def test_open_close_fresh_ratings_and_a_kept_season(db):
    a, b, c = add_bots(db, 3, VARIANTS)
    s1 = first_season(db)
    for winner in (0, 0, None):
        play(db, a, b, winner)
    play(db, b, c, 1)
    before = {v: rating_row(db, v) for v in (a, b, c)}
    with db.read() as conn:
        live = views.leaderboard(conn, "papagra", limit=10, offset=0)
    with db.write() as conn, pytest.raises(LeagueError, match="is open: close it first"):
        seasons.open_season(conn, "2", VARIANTS)
    with db.write() as conn:
        closed = seasons.close_season(conn)
    assert closed.state == "closed" and closed.closed_at
    with db.read() as conn:
        assert not seasons.ladder_open(conn)  # between seasons: no rated games
        kept = seasons.kept_leaderboard(conn, s1.id, "papagra", limit=10, offset=0)
    assert [(r["bot"], r["games"], r["rating"]) for r in kept] == [
        (r["bot"], r["games"], r["rating"]) for r in live
    ]
    with db.write() as conn, pytest.raises(LeagueError, match="no season is open"):
        seasons.close_season(conn)
    with db.write() as conn, pytest.raises(LeagueError, match="already a season"):
        seasons.open_season(conn, "1", VARIANTS)
    with db.write() as conn:
        s2 = seasons.open_season(conn, "2", VARIANTS)
    # fresh ratings from the active versions: each back to the prior, in placement again
    for v in (a, b, c):
        for variant in VARIANTS:
            row = rating_row(db, v, variant)
            assert (row.mu, row.sigma, row.games, row.wins) == (MU0, SIGMA0, 0, 0)
    gid = play(db, a, c, 0)
    with db.read() as conn:
        seat = conn.execute(
            sa.select(schema.seats).where(schema.seats.c.game_id == gid, schema.seats.c.seat == 0)
        ).one()
        # the rating history of the new season starts from the prior, not the old rating
        assert (seat.mu_before, seat.sigma_before) == (MU0, SIGMA0)
        assert seat.mu_before != before[a].mu
        # the closed season is unchanged by the new season's games
        again = seasons.kept_leaderboard(conn, s1.id, "papagra", limit=10, offset=0)
        assert again == kept
        s1_games = {g["id"] for g in views.list_games(conn, limit=50, offset=0, season_id=s1.id)}
        s2_games = {g["id"] for g in views.list_games(conn, limit=50, offset=0, season_id=s2.id)}
        assert s2_games == {gid} and len(s1_games) == 4 and not s1_games & s2_games
        # the official Elo refit reads the open season's games only
        assert ledger.pair_results(conn, "papagra", s2.id) == [(a, c, 1.0, 1)]
        assert [s.name for s in seasons.all_seasons(conn)] == ["2", "1"]


def test_a_game_in_flight_across_a_close_counts_once_in_its_season_unrated(db):
    a, b = add_bots(db, 2, VARIANTS)
    s1 = first_season(db)
    play(db, a, b, 0)
    gid = new_game(db, a, b)
    c = claim(db, gid)  # it is being played...
    with db.write() as conn:
        seasons.close_season(conn)
    with db.read() as conn:
        kept = seasons.kept_leaderboard(conn, s1.id, "papagra", limit=10, offset=0)
    with db.write() as conn:
        seasons.open_season(conn, "2", VARIANTS)
    with db.write() as conn:  # ... and finishes after the close, and the next season's open
        assert ledger.record_result(conn, gid, c.attempt, record(1))
    with db.write() as conn:  # a duplicate delivery changes nothing
        assert not ledger.record_result(conn, gid, c.attempt, record(0))
    with db.read() as conn:
        detail = views.game_detail(conn, gid)
        assert detail["state"] == "finished" and detail["rated"] is False
        assert detail["result"] == "0-1"
        assert ledger.game_record(conn, gid) is not None
        # in its own season's list, not the new one's
        ids = [g["id"] for g in views.list_games(conn, limit=10, offset=0, season_id=s1.id)]
        assert gid in ids
        assert seasons.kept_leaderboard(conn, s1.id, "papagra", limit=10, offset=0) == kept
        seat = conn.execute(
            sa.select(schema.seats).where(schema.seats.c.game_id == gid, schema.seats.c.seat == 1)
        ).one()
        assert seat.outcome == "win" and seat.mu_after is None
    # neither the kept season nor the new one's fresh ratings moved
    assert rating_row(db, b).games == 0 and rating_row(db, b).mu == MU0


def test_a_voided_game_of_a_closed_season_is_replayed_unrated(db):
    a, b = add_bots(db, 2, VARIANTS)
    first_season(db)
    gid = new_game(db, a, b)
    claim(db, gid)
    with db.write() as conn:
        seasons.close_season(conn)
        assert ledger.void_attempt(conn, gid, 1, schema.VoidKind.WORKER_LOST, "lost", 3)
    c = claim(db, gid)
    with db.write() as conn:
        assert ledger.record_result(conn, gid, c.attempt, record(0))
    with db.read() as conn:
        assert views.game_detail(conn, gid)["rated"] is False


def _settings(tmp_path):
    return settings_from_dict(
        {"database": "sqlite:///x.sqlite", "games": VARIANTS, "opening_turns": 0}, root=tmp_path
    )


def _play_final(db, settings, f: finals.Final, winner_of) -> None:
    """Claim and record every queued game of the final, `winner_of(v0, v1)` deciding each,
    advancing the final as the server does, until it wants nothing."""
    for _ in range(200):
        with db.write() as conn:
            finals.advance(conn, settings)
            ids = ledger.queued_game_ids(conn, 100)
        if not ids:
            return
        for gid in ids:
            c = claim(db, gid)
            with db.write() as conn:
                assert ledger.record_result(conn, gid, c.attempt, record(winner_of(*c.versions)))
    raise AssertionError("the final never ended")


def test_a_knockout_final_is_derived_from_its_recorded_games(db, tmp_path):
    ids = add_bots(db, 5, VARIANTS)
    s1 = first_season(db)
    # a ladder that ranks bot0 > bot1 > ... > bot4
    for i in range(5):
        for j in range(i + 1, 5):
            play(db, ids[i], ids[j], 0)
    with db.write() as conn:
        seasons.close_season(conn)
    settings = _settings(tmp_path)
    with db.write() as conn:
        f = finals.start(
            conn, settings, season="1", variant="papagra", top=4, fmt="knockout", pairs=1
        )
    assert f.entrants == tuple(ids[:4])  # the season's top 4, best seed first
    with db.write() as conn:
        with pytest.raises(LeagueError, match="is running"):
            finals.start(
                conn, settings, season="1", variant="papagra", top=4, fmt="knockout", pairs=1
            )
        with pytest.raises(LeagueError, match="frozen"):
            finals.check_unfrozen(conn, "bot0")
        finals.check_unfrozen(conn, "bot4")  # not a finalist: submits as usual
        first = ledger.queued_game_ids(conn, 100)
        # round 1 only: 2 matches of one pair each; finals go before the ladder
        assert len(first) == 4
        assert finals.advance(conn, settings) == 0  # queued already: nothing twice
    # the lower seed wins every game: the bracket follows
    seed = {v: i for i, v in enumerate(f.entrants)}
    _play_final(db, settings, f, lambda v0, v1: 0 if seed[v0] > seed[v1] else 1)
    with db.read() as conn:
        done = finals.get(conn, f.id)
        assert done.state == "finished" and done.champion == ids[3]
        d = finals.detail(conn, done, "1")
        assert [len(r) for r in d["rounds"]] == [2, 1]
        assert d["rounds"][1][0]["winner"]["bot"] == "bot3"
        assert len(d["games"]) == 6  # 3 matches x 1 pair x 2 seats, each once
        for g in d["games"]:
            detail = views.game_detail(conn, g["id"])
            assert detail["kind"] == "final" and detail["rated"] is False
            assert ledger.game_record(conn, g["id"]) is not None
        # unrated: the kept season's ladder is as it was
        assert seasons.kept_leaderboard(conn, s1.id, "papagra", limit=1, offset=0)[0]["bot"] == (
            "bot0"
        )
        finals.check_unfrozen(conn, "bot0")  # ended: submissions thaw


def test_a_round_robin_final_and_a_failed_game_replaced(db, tmp_path):
    ids = add_bots(db, 3, VARIANTS)
    first_season(db)
    for i in range(3):
        for j in range(i + 1, 3):
            play(db, ids[i], ids[j], 0)
    settings = _settings(tmp_path)
    with db.write() as conn:  # a final of the open season, from its live leaderboard
        f = finals.start(
            conn, settings, season="1", variant="papagra", top=3, fmt="round-robin", pairs=1
        )
        queued = ledger.queued_game_ids(conn, 100)
    assert len(queued) == 6  # 3 pairings x 1 pair x 2 seats
    # one game fails for good (every attempt voided): the final queues it again
    gid = queued[0]
    for attempt in (1, 2, 3):
        claim(db, gid)
        with db.write() as conn:
            ledger.void_attempt(conn, gid, attempt, schema.VoidKind.SANDBOX_FAULT, "x", 3)
    with db.write() as conn:
        assert views.game_detail(conn, gid)["state"] == "failed"
        assert finals.advance(conn, settings) == 1
    _play_final(db, settings, f, lambda v0, v1: 0 if v0 == ids[2] else 1 if v1 == ids[2] else None)
    with db.read() as conn:
        d = finals.detail(conn, finals.get(conn, f.id), "1")
    assert d["state"] == "finished" and d["champion"]["bot"] == "bot2"
    assert [(r["bot"], r["points"]) for r in d["standings"]] == [
        ("bot2", 4.0),
        ("bot0", 1.0),
        ("bot1", 1.0),
    ]


def test_the_migration_puts_an_existing_league_into_its_first_season(tmp_path):
    with database_url("sqlite", tmp_path) as u:
        engine = sa.create_engine(u)
        try:
            migrations.upgrade(engine, "0008")
            with engine.begin() as conn:
                conn.execute(
                    sa.text(
                        "INSERT INTO users (id, name, token_hash, is_admin, disabled, created_at,"
                        " session_epoch) VALUES (1, 'u', 'h', 0, 0, '2026-01-01', 0)"
                    )
                )
                conn.execute(
                    sa.text(
                        "INSERT INTO bots (id, name, owner_id, disabled, created_at) "
                        "VALUES (1, 'b', 1, 0, '2026-01-01')"
                    )
                )
                conn.execute(
                    sa.text(
                        "INSERT INTO versions (id, bot_id, number, state, archive_sha256, path,"
                        " manifest, created_at) VALUES (1, 1, 1, 'active', 'x', '/p', '{}',"
                        " '2026-01-01')"
                    )
                )
                conn.execute(
                    sa.text(
                        "INSERT INTO games (id, kind, variant, game_name, options, seed, opening,"
                        " time_control, version0, version1, state, attempt, priority, created_at)"
                        " VALUES (7, 'rated', 'papagra', 'papagra', '{}', 1, '[]', '{}', 1, 1,"
                        " 'finished', 1, 0, '2026-01-02T00:00:00.000Z')"
                    )
                )
            migrations.upgrade(engine)
            with engine.connect() as conn:
                rows = conn.execute(sa.text("SELECT id, name, state, opened_at FROM seasons"))
                (sid, name, state, opened), *more = rows.all()
                assert not more and (name, state) == ("1", "open")
                assert opened == "2026-01-02T00:00:00.000Z"
                assert conn.execute(sa.text("SELECT season_id FROM games")).scalar() == sid
        finally:
            engine.dispose()


def test_a_new_league_starts_in_season_one(tmp_path):
    with database_url("sqlite", tmp_path) as u:
        engine = sa.create_engine(u)
        try:
            migrations.upgrade(engine)
            with engine.connect() as conn:
                rows = conn.execute(sa.text("SELECT name, state FROM seasons")).all()
            assert [tuple(r) for r in rows] == [("1", "open")]
        finally:
            engine.dispose()


def test_the_admin_page_opens_and_closes_seasons_and_starts_a_final(tmp_path):
    from .support import csrf_of, league_on, login, page_client

    with league_on("sqlite", tmp_path) as league:
        _, admin = league.add_user("boss", is_admin=True)
        _, plain = league.add_user("pleb")
        add_bots(league.db, 3, ["stripes"])
        with page_client(league) as client:
            login(client, plain)
            assert client.get("/admin/seasons").status_code == 403
        with page_client(league) as client:
            login(client, admin)
            page = client.get("/admin/seasons")
            assert page.status_code == 200 and 'id="close-form"' in page.text
            csrf = csrf_of(page.text)
            # closing asks for the box first
            unticked = client.post("/admin/seasons", data={"csrf": csrf, "action": "close"})
            assert unticked.status_code == 422 and "Tick the box" in unticked.text
            done = client.post(
                "/admin/seasons",
                data={"csrf": csrf, "action": "close", "confirm": "yes"},
                follow_redirects=False,
            )
            assert done.status_code == 303
            page = client.get("/admin/seasons")
            assert 'id="open-form"' in page.text and "No season is open" in page.text
            started = client.post(
                "/admin/seasons",
                data={
                    "csrf": csrf,
                    "action": "final",
                    "season": "1",
                    "variant": "stripes",
                    "top": "3",
                    "format": "knockout",
                    "pairs": "1",
                },
                follow_redirects=False,
            )
            assert started.status_code == 303, started.text
            bad = client.post(
                "/admin/seasons",
                data={"csrf": csrf, "action": "open", "name": "../x"},
            )
            assert bad.status_code == 422 and "season name" in bad.text
            opened = client.post(
                "/admin/seasons",
                data={"csrf": csrf, "action": "open", "name": "2"},
                follow_redirects=False,
            )
            assert opened.status_code == 303
            listing = client.get("/seasons").text
            assert "/seasons/1" in listing and "/seasons/2" in listing
            season = client.get("/seasons/1")
            assert season.status_code == 200 and "/finals/1" in season.text
            final = client.get("/finals/1")
            assert final.status_code == 200 and 'id="bracket"' in final.text
            assert "bot0" in final.text and "bye" in final.text
            assert client.get("/seasons/nope").status_code == 404
            assert client.get("/finals/99").status_code == 404
