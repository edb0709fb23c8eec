"""The read-only pages (arena/league/web/pages.py) through the real app: what each page shows,
sorting and paging by links, the owner-only parts (logs, retire/reactivate) and their CSRF
guard, the rating history kept with each result, and that nothing a user, a bot or its logs
wrote reaches a page as markup."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.league.db import ledger, roster, schema, views
from arena.league.ratings import Skill, rate
from arena.league.service import League
from arena.league.web import pages
from tests.viewer.test_replay import random_record

from .support import BOTS, csrf_of, login, page_client, sqlite_league

EVIL = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(1)</script>"


class World:
    """alice's random-py and a hostile owner's `strong` (the owner's name, the manifest's
    author, the validation's warnings, the referee's words and the logs all markup), five
    recorded stripes games between them (one a time forfeit), one queued."""

    def __init__(self, league: League) -> None:
        self.league = league
        self.db = league.db
        self.alice, self.alice_token = self.league.add_user("alice")
        self.bob, self.bob_token = self.league.add_user("bob")
        self.admin, self.admin_token = self.league.add_user("root", is_admin=True)
        with self.db.write() as conn:  # a name the API would refuse, straight into the store
            self.evil = roster.add_user(conn, EVIL, "evil-token")
        self.va = self.league.add_house_bot("alice", BOTS / "random-py")
        self.vb = self.league.add_house_bot(EVIL, BOTS / "strong")
        with self.db.write() as conn:
            conn.execute(
                schema.versions.update()
                .where(schema.versions.c.id == self.vb.id)
                .values(
                    validation=json.dumps(
                        {"passed": True, "stage": "passed", "warnings": [SCRIPT]}
                    ),
                    manifest=json.dumps({"name": "strong", "version": EVIL, "author": SCRIPT}),
                )
            )
        self.games = []
        for i, (winner, reason) in enumerate(
            [(0, "score"), (1, "score"), (None, "score"), (0, "time_forfeit"), (1, "score")]
        ):
            v0, v1 = (self.va.id, self.vb.id) if i % 2 == 0 else (self.vb.id, self.va.id)
            self.games.append(self.play(v0, v1, winner, reason, seed=i))
        with self.db.write() as conn:
            self.queued = ledger.create_game(conn, self.new_game(self.va.id, self.vb.id, 99))

    def new_game(self, v0: int, v1: int, seed: int) -> ledger.NewGame:
        return ledger.NewGame(schema.GameKind.RATED, "stripes", "stripes", {}, seed, (), {}, v0, v1)

    def play(self, v0: int, v1: int, winner: int | None, reason: str, seed: int) -> int:
        record = random_record("stripes", {}, seed, 12).to_dict()
        record["result"] = {
            "winner": winner,
            "reason": reason,
            "detail": f"the end {EVIL}"
            if reason == "score"
            else f"blue ({SCRIPT}) ran out of time",
            "forfeit": reason == "time_forfeit",
        }
        record["stderr"] = [f"seat 0 says {EVIL}", f"seat 1 says {SCRIPT}"]
        record["logs"] = [
            {"seat": 0, "t": 0.1, "message": f"log of seat 0 {EVIL}"},
            {"seat": 1, "t": 0.2, "message": f"log of seat 1 {SCRIPT}"},
        ]
        with self.db.write() as conn:
            gid = ledger.create_game(conn, self.new_game(v0, v1, seed))
            ledger.claim_game(conn, gid)
            assert ledger.record_result(conn, gid, 1, record)
        return gid


@pytest.fixture
def world(tmp_path):
    with sqlite_league(tmp_path, games=["stripes", "papagra"]) as league:
        yield World(league)


@pytest.fixture
def client(world):
    with page_client(world.league) as c:
        yield c


def no_markup(html: str) -> None:
    """Nothing hostile came through as markup (each appears escaped where it is shown)."""
    assert EVIL not in html and SCRIPT not in html
    assert "<img" not in html and "<script>alert" not in html


def cells(html: str, table_class: str) -> list[list[str]]:
    body = html.split(f'<table class="{table_class}">', 1)[1].split("</table>", 1)[0]
    body = body.split("<tbody>", 1)[1]
    return [
        [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def test_home_shows_variants_top_bots_queue_and_recent_games(client, world):
    html = client.get("/").text
    no_markup(html)
    assert "5 games played" in html and "0 in flight" in html and "1 queued" in html
    assert 'href="/leaderboard/stripes"' in html and 'href="/leaderboard/papagra"' in html
    assert 'href="/bots/strong"' in html and 'href="/bots/random-py"' in html
    for gid in world.games:
        assert f'href="/games/{gid}"' in html
    assert "the end &lt;img src=x onerror=alert(1)&gt;" in html


def test_the_leaderboard_shows_ratings_owners_forfeits_and_a_chart(client, world):
    html = client.get("/leaderboard/stripes").text
    no_markup(html)
    rows = cells(html, "leaderboard")
    board = world.league.read_sync(views.leaderboard, "stripes", limit=10, offset=0)
    assert [r[1] for r in rows] == [b["bot"] for b in board]
    owners = {r[1]: r[2] for r in rows}
    assert owners == {
        "random-py": "alice",
        "strong": EVIL.replace("<", "&lt;").replace(">", "&gt;"),
    }
    by_bot = {r[1]: r for r in rows}
    # the fourth game: strong in seat 0 won on time, random-py forfeited
    loser = "random-py"
    assert by_bot[loser][-1] == "1 (out of time 1)"  # the reason code in words
    assert by_bot[loser][6] == "5" and by_bot["strong"][6] == "5"
    assert "<svg" in html and "polyline" in html and "strong v1" in html
    assert client.get("/leaderboard").text.count('href="/leaderboard/') == 2
    assert client.get("/leaderboard/chess").status_code == 404


def test_the_leaderboard_sorts_by_any_column_without_javascript(client, world):
    rank_order = [r[1] for r in cells(client.get("/leaderboard/stripes").text, "leaderboard")]
    by_name = [r[1] for r in cells(client.get("/leaderboard/stripes?sort=bot").text, "leaderboard")]
    assert by_name == sorted(rank_order)
    desc = client.get("/leaderboard/stripes?sort=bot&dir=desc").text
    assert [r[1] for r in cells(desc, "leaderboard")] == sorted(rank_order, reverse=True)
    # the current column's header links to the other direction; ranks stay ratings' ranks
    assert 'href="?sort=bot&amp;dir=asc"' in desc
    # the rank cell is "2 (1-2)": the place by rating, then its 95% interval
    ranks = {r[1]: r[0].split()[0] for r in cells(desc, "leaderboard")}
    assert ranks == {b: str(i + 1) for i, b in enumerate(rank_order)}
    wins = cells(client.get("/leaderboard/stripes?sort=wins&dir=asc").text, "leaderboard")
    assert [int(r[7]) for r in wins] == sorted(int(r[7]) for r in wins)
    assert client.get("/leaderboard/stripes?sort=password").status_code == 422
    assert client.get("/leaderboard/stripes?dir=sideways").status_code == 422


def test_the_games_list_filters_and_pages_by_key(client, world, monkeypatch):
    monkeypatch.setattr(pages, "GAMES_PAGE", 2)
    first = client.get("/games").text
    no_markup(first)
    ids = [int(r[0]) for r in cells(first, "games")]
    assert ids == sorted(world.games, reverse=True)[:2]
    older = re.search(r'href="(\?before=\d+)">older', first).group(1)
    second = [int(r[0]) for r in cells(client.get("/games" + older).text, "games")]
    assert second == sorted(world.games, reverse=True)[2:4]
    assert client.get("/games?variant=papagra").text.count('href="/games/') == 0
    assert client.get("/games?bot=nobody").status_code == 404
    assert client.get("/games?before=x").status_code == 422


def test_a_game_page_shows_players_ratings_reason_and_the_replay(client, world):
    gid = world.games[-1]
    html = client.get(f"/games/{gid}").text
    no_markup(html)
    assert 'data-arena-replay="replay-data"' in html and "/static/viewer/viewer.js" in html
    data = json.loads(html.split('id="replay-data">', 1)[1].split("</script>", 1)[0])
    assert data["steps"]
    assert f'href="/api/v1/games/{gid}/record"' in html
    assert "the end &lt;img src=x onerror=alert(1)&gt;" in html
    players = cells(html, "players")
    with world.db.read() as conn:
        seats = views.game_seats(conn, gid)
    for row, seat in zip(players, seats, strict=True):
        assert (
            row[4] == f"{seat['before']['rating']:.2f}"
            and row[5] == f"{seat['after']['rating']:.2f}"
        )
    # the last game moved both ratings to what the ratings table holds now
    now = {
        r["bot"]: r["rating"]
        for r in world.league.read_sync(views.leaderboard, "stripes", limit=9, offset=0)
    }
    assert {s["bot"]: round(s["after"]["rating"], 3) for s in seats} == now
    assert "your bot" not in html  # a visitor gets no logs link


def test_a_queued_game_says_so_and_leaves_a_hook_for_live_updates(client, world):
    html = client.get(f"/games/{world.queued}").text
    assert f'data-game-id="{world.queued}" data-state="queued"' in html
    assert "waiting for a free slot" in html
    assert f'data-live-game="/games/{world.queued}/live"' in html  # followed live (web/live.py)
    assert client.get("/games/99999").status_code == 404
    assert client.get("/games/abc").status_code == 404


def test_results_keep_each_seats_rating_before_and_after(world):
    """_rate writes the before/after with the result: replaying the ratings in game order gives
    the same numbers."""
    skills = {world.va.id: Skill(), world.vb.id: Skill()}
    with world.db.read() as conn:
        for gid in world.games:
            g = views.game_detail(conn, gid)
            v0, v1 = (s["version_id"] for s in g["seats"])
            seats = views.game_seats(conn, gid)
            assert seats[0]["before"]["mu"] == pytest.approx(skills[v0].mu)
            points0 = 0.5 if g["winner"] is None else float(g["winner"] == 0)
            skills[v0], skills[v1] = rate(skills[v0], skills[v1], points0)
            assert seats[1]["after"]["sigma"] == pytest.approx(skills[v1].sigma)
        history = views.rating_history(conn, world.va.id, "stripes", limit=3)
    assert [p.game_id for p in history] == world.games[-3:]
    assert history[-1].rating == pytest.approx(skills[world.va.id].conservative)


def test_a_bot_page_shows_versions_ratings_history_games_and_crosstable(client, world):
    html = client.get("/bots/strong").text
    no_markup(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the warning, escaped
    assert "<svg" in html and "stripes" in html
    games = cells(html, "games")
    assert [int(r[0]) for r in games] == sorted(world.games, reverse=True)
    outcome = {int(r[0]): r[4] for r in games}
    assert outcome[world.games[3]] == "win" and outcome[world.games[1]] == "loss"
    assert outcome[world.games[2]] == "draw"
    cross = cells(html, "crosstable")
    assert cross == [["random-py", "5", "2", "1", "2", "0", "50%"]]
    with world.db.read() as conn:  # bounded to its last games: strong won the last two
        (last2,) = views.crosstable(conn, world.vb.bot_id, limit=10, games=2)
    assert (last2["games"], last2["wins"], last2["losses"]) == (2, 2, 0)
    # visitors get neither the logs nor the retire control
    assert "/logs" not in html and "Retire" not in html
    assert client.get("/bots/nobody").status_code == 404


def test_owners_and_admins_see_logs_others_do_not(client, world):
    gid = world.games[0]  # alice's random-py in seat 0
    resp = client.get(f"/games/{gid}/logs", follow_redirects=False)
    assert resp.status_code == 303 and resp.headers["location"].startswith("/login")
    login(client, world.bob_token)
    assert client.get(f"/games/{gid}/logs").status_code == 403
    assert f"/games/{gid}/logs" not in client.get("/bots/random-py").text
    login(client, world.alice_token)
    assert f'href="/games/{gid}/logs"' in client.get("/bots/random-py").text
    assert f'href="/games/{gid}/logs"' in client.get(f"/games/{gid}").text
    html = client.get(f"/games/{gid}/logs").text
    no_markup(html)
    assert "seat 0 says &lt;img src=x onerror=alert(1)&gt;" in html
    assert "log of seat 0 &lt;img" in html and "seat 1 says" not in html
    login(client, world.admin_token)
    html = client.get(f"/games/{gid}/logs").text
    no_markup(html)
    assert "seat 1 says &lt;script&gt;" in html


def test_retire_and_reactivate_need_the_owner_and_a_csrf_token(client, world):
    def post(action: str, csrf: str | None = None, confirm: bool = True) -> object:
        page = client.get("/bots/random-py").text
        token = csrf or (csrf_of(page) if 'name="csrf"' in page else "x")
        data = {"csrf": token, "action": action, **({"confirm": "yes"} if confirm else {})}
        return client.post("/bots/random-py/retire", data=data, follow_redirects=False)

    assert post("retire").status_code == 303  # a visitor: to the login form
    login(client, world.bob_token)
    assert post("retire").status_code == 403
    assert client.get("/bots/random-py/retire").status_code == 403
    login(client, world.alice_token)
    assert post("retire", csrf="forged").status_code == 403
    assert "Retire this bot" in client.get("/bots/random-py").text
    # retiring asks first: without the box ticked nothing changes, and the page asks again
    confirm_page = client.get("/bots/random-py/retire")
    assert confirm_page.status_code == 200 and 'name="confirm"' in confirm_page.text
    unconfirmed = post("retire", confirm=False)
    assert unconfirmed.status_code == 422 and "Tick the box" in unconfirmed.text
    board = world.league.read_sync(views.leaderboard, "stripes", limit=9, offset=0)
    assert sorted(r["bot"] for r in board) == ["random-py", "strong"]
    resp = post("retire")
    assert resp.status_code == 303 and resp.headers["location"] == "/bots/random-py"
    html = client.get("/bots/random-py").text
    assert "retired" in html and "Reactivate this bot" in html
    # its version reads retired, not disabled (an admin's word)
    versions = cells(html, "versions")
    assert versions[0][1] == "retired", versions
    board = world.league.read_sync(views.leaderboard, "stripes", limit=9, offset=0)
    assert [r["bot"] for r in board] == ["strong"]
    assert post("reactivate").status_code == 303
    board = world.league.read_sync(views.leaderboard, "stripes", limit=9, offset=0)
    assert sorted(r["bot"] for r in board) == ["random-py", "strong"]
    # an admin's disabling is not the owner's to undo
    import trio

    trio.run(world.league.disable_bot, world.admin, "random-py")
    assert "Disabled by an admin" in client.get("/bots/random-py").text
    assert post("reactivate").status_code == 403
    assert post("dance").status_code == 422


def test_the_workers_page_is_in_the_layout_and_escaped(client, world):
    from arena.league.db import fleet

    with world.db.write() as conn:
        fleet.register(conn, EVIL, SCRIPT, 4242, 2)
    html = client.get("/workers").text
    no_markup(html)
    assert 'href="/leaderboard"' in html  # the site's nav
    rows = cells(html, "workers")
    assert rows[0][0] == EVIL.replace("<", "&lt;").replace(">", "&gt;")


def test_a_persons_seat_is_shown_without_a_page(client, world):
    with world.db.write() as conn:
        human = roster.human_version(conn, world.alice)
        gid = ledger.create_game(
            conn,
            ledger.NewGame(
                schema.GameKind.CHALLENGE, "stripes", "stripes", {}, 5, (), {}, human, world.vb.id
            ),
        )
    html = client.get(f"/games/{gid}").text
    assert "<span>@alice</span>" in html and 'href="/bots/@alice"' not in html
    assert 'href="/bots/%40alice"' not in html
    assert client.get("/bots/@alice").status_code == 404


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sort=st.sampled_from([c[0] for c in pages.COLUMNS]),
    descending=st.booleans(),
    extra=st.lists(st.tuples(st.floats(-20, 60), st.integers(0, 9)), max_size=6),
)
def test_any_sort_shows_the_same_rows_with_the_ratings_ranks(world, sort, descending, extra):
    """Whatever the column and direction: the same versions, each with its place by rating,
    ordered by that column (ties by rank)."""
    with world.db.write() as conn:
        conn.execute(schema.ratings.delete().where(schema.ratings.c.version_id > world.vb.id))
        for i, (mu, games) in enumerate(extra):
            v = roster.add_version(
                conn,
                owner_id=world.bob.id,
                bot_name=f"extra{i}",
                archive_sha256="0",
                path="",
                manifest={},
            )
            roster.set_version_state(conn, v.id, schema.VersionState.ACTIVE)
            ledger.ensure_rating(conn, v.id, "stripes", mu=mu)
            conn.execute(
                schema.ratings.update()
                .where(schema.ratings.c.version_id == v.id)
                .values(games=games, wins=games // 2)
            )
    with world.db.read() as conn:
        base = views.leaderboard(conn, "stripes", limit=50, offset=0)
        rows = views.leaderboard(
            conn, "stripes", limit=50, offset=0, sort=sort, descending=descending
        )
    assert [r["rank"] for r in base] == list(range(1, len(base) + 1))
    assert sorted(rows, key=lambda r: r["rank"]) == base
    # base is in rank order and Python's sort is stable (also reversed): ties stay by rank
    known = [r for r in base if r[sort] is not None]
    expected = sorted(known, key=lambda r: r[sort], reverse=descending)
    assert rows == expected + [r for r in base if r[sort] is None]


def test_home_and_live_count_the_same_games_in_flight(client, world):
    """A game claimed but not started yet (a slot claims its next game ahead) is in flight on
    both pages or on neither: one definition, one query (views.in_flight)."""
    assert "0 in flight" in client.get("/").text
    assert "No game is being played right now" in client.get("/live").text
    with world.db.write() as conn:
        assert ledger.claim_game(conn, world.queued) is not None
    world.league.cache.changed()  # what the pages read was cached before the claim
    home, live = client.get("/").text, client.get("/live").text
    assert "1 in flight" in home
    for html in (home, live):
        rows = cells(html, "live-games")
        assert [r[0] for r in rows] == [str(world.queued)], rows
        assert f'href="/live/{world.queued}"' in html  # its watch link
        no_markup(html)  # the players are a hostile owner's bots


def test_a_watch_link_to_a_game_that_is_over_says_so(client, world):
    gid = world.games[0]
    resp = client.get(f"/live/{gid}", follow_redirects=False)
    assert resp.status_code == 303 and resp.headers["location"] == f"/games/{gid}?ended=1"
    assert "ended before you got here" in client.get(resp.headers["location"]).text
    assert "ended before" not in client.get(f"/games/{gid}").text
    with world.db.write() as conn:
        ledger.claim_game(conn, world.queued)
    assert client.get(f"/live/{world.queued}", follow_redirects=False).headers["location"] == (
        f"/games/{world.queued}"
    )


def test_the_leaderboard_shows_each_rank_interval(client, world):
    """Beside each place, the 95% interval of the bot's true place, as the API gives it (a
    hostile owner's name in the same row stays text)."""
    html = client.get("/leaderboard/stripes").text
    no_markup(html)
    board = world.league.read_sync(views.leaderboard, "stripes", limit=10, offset=0)
    shown = {r[1]: r[0] for r in cells(html, "leaderboard")}
    for row in board:
        low, high = row["rank_low"], row["rank_high"]
        assert 1 <= low <= high <= len(board)
        interval = f"{low}" if low == high else f"{low}\u2013{high}"
        assert shown[row["bot"]] == f"{row['rank']} ({interval})"
    # two bots after five games: neither place is sure yet
    assert any(r["rank_low"] < r["rank_high"] for r in board)
    assert 'title="95% interval of its true place"' in html
