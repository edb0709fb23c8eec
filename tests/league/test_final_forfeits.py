"""A finalist disqualified mid-final (an admin disabled its bot), in the league's database on
SQLite and PostgreSQL and in the pure bracket: a round robin counts its unplayed games as its
opponents' wins and places it last, its finished games standing; the forfeit is kept when the
bot is enabled again; a bracket with forfeits never wants a disqualified entrant's game and
decides each of its open matches against it."""

from __future__ import annotations

import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.league.db import finals, ledger, roster, schema
from arena.tournaments.knockout import GameKey, Rules, bracket

from .support import add_bots, database_fixtures
from .test_seasons import VARIANTS, _play_final, _settings, first_season, play
from .test_store import claim, record

url, db = database_fixtures()


def _versions(conn, game_id: int) -> tuple[int, int]:
    g = schema.games
    row = conn.execute(sa.select(g.c.version0, g.c.version1).where(g.c.id == game_id)).one()
    return (row.version0, row.version1)


def test_a_round_robin_finalist_disabled_forfeits_its_unplayed_games(db, tmp_path):
    ids = add_bots(db, 3, VARIANTS)
    first_season(db)
    for i in range(3):
        for j in range(i + 1, 3):
            play(db, ids[i], ids[j], 0)
    settings_ = _settings(tmp_path)
    with db.write() as conn:
        f = finals.start(
            conn, settings_, season="1", variant="papagra", top=3, fmt="round-robin", pairs=1
        )
        queued = ledger.queued_game_ids(conn, 100)
    # bot0 wins its first game, another is in play when an admin disables it
    with db.read() as conn:
        games = {gid: _versions(conn, gid) for gid in queued}
    won = next(gid for gid, vs in games.items() if set(vs) == {ids[0], ids[2]})
    in_play = next(gid for gid, vs in games.items() if set(vs) == {ids[0], ids[1]})
    c = claim(db, won)
    with db.write() as conn:
        assert ledger.record_result(conn, won, c.attempt, record(c.versions.index(ids[0])))
    late = claim(db, in_play)
    with db.write() as conn:
        bot0 = roster.bot_by_name(conn, "bot0")
        roster.set_bot_disabled(conn, bot0.id, True, "admin")
        assert finals.disqualify(conn, bot0.id) == [f.id]
    with db.write() as conn:  # the game in play ends: its result is stale, dropped
        assert not ledger.record_result(conn, in_play, late.attempt, record(0))
    _play_final(db, settings_, f, lambda v0, v1: 0 if v0 == ids[1] else 1 if v1 == ids[1] else 0)
    with db.write() as conn:  # enabled again: nothing comes back
        roster.set_bot_disabled(conn, bot0.id, False)
        assert finals.advance(conn, settings_) == 0
        d = finals.detail(conn, finals.get(conn, f.id), "1")
        played = [g for g in d["games"] if ids[0] in _versions(conn, g["id"])]
    assert d["state"] == "finished" and d["champion"]["bot"] == "bot1"
    assert [f_["bot"] for f_ in d["forfeits"]] == ["bot0"]
    # bot0: its one win (over bot2) stands, its three other games are lost unplayed (wins of
    # their opponents, not games they played); placed last, behind bot2 on the same points
    assert [(r["bot"], r["points"], r["games"], r["forfeited"]) for r in d["standings"]] == [
        ("bot1", 4.0, 2, False),
        ("bot2", 1.0, 3, False),
        ("bot0", 1.0, 1, True),
    ]
    assert sorted(g["state"] for g in played) == ["failed", "failed", "failed", "finished"]


@settings(max_examples=200, deadline=None)
@given(
    entrants=st.integers(2, 9),
    pairs=st.integers(1, 2),
    forfeits=st.sets(st.integers(0, 8), min_size=1, max_size=3),
    outcomes=st.lists(st.sampled_from([0, 1, None]), min_size=40, max_size=40),
)
def test_a_bracket_never_wants_a_disqualified_entrants_game(entrants, pairs, forfeits, outcomes):
    rules = Rules(pairs, 1)
    out = frozenset(f for f in forfeits if f < entrants)
    results: dict[GameKey, int | None] = {}
    draws = iter(outcomes)
    for _ in range(40):  # play what the bracket wants, with forfeits, to the end
        b = bracket(entrants, rules, results, out)
        assert not any(set(g.seats) & out for g in b.wanted)
        if not b.wanted:
            break
        for g in b.wanted:
            pick = next(draws, 0)
            results[g.key] = None if pick is None else g.seats[pick]
    b = bracket(entrants, rules, results, out)
    assert b.champion is not None
    if len(out) < entrants:
        assert b.champion not in out
    for m in b.matches:
        if m.sides[0] is not None and m.sides[1] is not None and set(m.sides) & out:
            assert m.winner is not None
            if m.decided_by == "forfeit" and not set(m.sides) <= out:
                assert m.winner not in out
