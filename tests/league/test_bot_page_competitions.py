"""The bot page in a league with seasons, candidate tests and finals, through the real app on
SQLite and PostgreSQL: its rating chart is one season's (it never falls to the prior where a
new season restarted the ratings), the leaderboard's chart too, and its crosstable counts ladder
games only (a candidate test's games would make the bot its own opponent, a final's are
another contest)."""

from __future__ import annotations

import re

from arena.league.db import ledger, schema, seasons, views
from arena.league.ratings import MU0, SIGMA0

from .support import BACKENDS, BOTS, league_fixture, page_client

league = league_fixture(backends=BACKENDS)


def _play(league, kind: schema.GameKind, v0: int, v1: int, winner: int | None) -> int:
    with league.db.write() as conn:
        gid = ledger.create_game(
            conn, ledger.NewGame(kind, "stripes", "stripes", {}, 1, (), {}, v0, v1)
        )
        claim = ledger.claim_game(conn, gid)
        assert claim is not None
        result = {"winner": winner, "reason": "score", "forfeit": False, "scores": [1, 2]}
        record = {"format": "arena-record/1", "result": result, "turn_count": 7}
        assert ledger.record_result(conn, gid, claim.attempt, record)
    return gid


def _polylines(html: str) -> list[int]:
    """How many points each line of the page's wide chart has."""
    wide = html.split('<div class="chart-wide">', 1)[1].split("</svg>", 1)[0]
    return [len(p.split()) for p in re.findall(r'<polyline points="([^"]+)"', wide)]


def _crosstable(html: str) -> dict[str, list[str]]:
    body = html.split('<table class="crosstable">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>", 1)[1], re.S)
    cells = [
        [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r)]
        for r in rows
    ]
    return {c[0]: c[1:] for c in cells}


def test_the_bot_chart_is_one_season_and_the_crosstable_ladder_games_only(league):
    league.add_user("ann")
    league.add_user("bob")
    mine = league.add_house_bot("ann", BOTS / "strong")
    other = league.add_house_bot("bob", BOTS / "random-py")
    # season 1: eight ladder games, mine winning most, so its rating climbs well above the prior
    for i in range(8):
        v0, v1 = (mine.id, other.id) if i % 2 == 0 else (other.id, mine.id)
        _play(league, schema.GameKind.RATED, v0, v1, (0 if v0 == mine.id else 1) if i else None)
    with league.db.write() as conn:
        seasons.close_season(conn)
        seasons.open_season(conn, "2", league.variants)
    # season 2: three ladder games, from the prior again
    for _ in range(3):
        _play(league, schema.GameKind.RATED, mine.id, other.id, 0)
    with page_client(league) as client:
        # the leaderboard's chart is the open season's: each line holds season 2's three games
        board = client.get("/leaderboard/stripes").text
        assert _polylines(board) == [4, 4], _polylines(board)
    # a new version of mine and its candidate games against version 1 (unrated), and a final's
    mine2 = league.add_house_bot("ann", BOTS / "strong")
    assert mine2.bot_id == mine.bot_id
    for i in range(4):
        v0, v1 = (mine2.id, mine.id) if i % 2 == 0 else (mine.id, mine2.id)
        _play(league, schema.GameKind.CANDIDATE, v0, v1, 0)
    for _ in range(2):
        _play(league, schema.GameKind.FINAL, mine.id, other.id, 1)

    with page_client(league) as client:
        html = client.get("/bots/strong").text
        # one line of season 2's three games (and the prior it started from), not eleven games
        # falling to the prior at the eighth; the caption names the season
        assert _polylines(html) == [4], _polylines(html)
        assert 'data-season="2"' in html and "of season 2" in html
        with league.db.read() as conn:
            points = views.bot_rating_history(
                conn, mine.bot_id, limit=400, season_id=views.bot_last_season(conn, mine.bot_id)
            )
        assert [p.mu_before for p in points][:1] == [MU0]
        assert points[0].sigma_before == SIGMA0
        assert all(p.mu > MU0 for p in points)  # mine won them all: no drop inside the line

        # the crosstable: the eleven ladder games against random-py, nothing against itself
        cross = _crosstable(html)
        assert set(cross) == {"random-py"}, cross
        assert cross["random-py"][0] == "11"
        assert "ladder games" in html
