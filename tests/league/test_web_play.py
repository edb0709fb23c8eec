"""A person against a bot in the browser's seat (arena/league/challenges.py, web/play.py), without
a browser: the `BrowserIO` seat driven directly in trio and through the real websocket route
(Starlette's TestClient on trio), against the real bots/random-py under the league's sandbox.

What is pinned: the person's lines reach the real referee (illegal ones explained in the game's
words and asked again, multi-action turns collected), both clocks are the referee's (the bot on
the league's, the person on theirs), a game ends whatever the connection does (a browser that
never comes back resigns after the grace period, a server that stops fails the game with its
reason), the bot's process is reaped every time, and the game is recorded as an unrated
`challenge` that no rating or leaderboard sees.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from arena.league import migrations
from arena.league.challenges import BrowserIO
from arena.league.db import ledger, roster, schema, views
from arena.league.db.database import Database
from arena.league.errors import LeagueError
from arena.league.service import League
from arena.league.settings import settings_from_dict
from arena.referee import GameRecord
from arena.viewer import replay_data

from .support import BOTS, csrf_of, league_fixture, login, page_client, sqlite_league

#: Papagra on a 3x3 board: two actions a turn, and over within a few turns
MINI = {"name": "papagra", "label": "mini", "options": {"board": "square 3", "max_turns": 4}}


def alice_and_random_py(league: League) -> None:
    league.add_user("alice")
    league.add_house_bot("alice", BOTS / "random-py")


@contextmanager
def make(tmp_path: Path, **play: Any) -> Iterator[League]:
    """alice's random-py in a league that plays MINI and stripes."""
    with sqlite_league(
        tmp_path, games=[MINI, "stripes"], isolation="process", play={"clock": "60+1", **play}
    ) as league:
        alice_and_random_py(league)
        yield league


#: what `make(tmp_path)` makes
league = league_fixture(
    setup=alice_and_random_py,
    games=[MINI, "stripes"],
    isolation="process",
    play={"clock": "60+1"},
)


def user(league: League, name: str = "alice") -> roster.User:
    found = league.read_sync(roster.user_by_name, name)
    assert found is not None
    return found


def game_row(league: League, game_id: int) -> Any:
    with league.db.read() as conn:
        return conn.execute(sa.select(schema.games).where(schema.games.c.id == game_id)).one()


async def play_first_legal(io, first_lines: list[str] = ()) -> list[dict[str, Any]]:
    """A person who types `first_lines`, then plays the first legal action at every prompt;
    every view the page would have received."""
    script = list(first_lines)
    seen = []
    with io.connected():
        async for view in io.views():
            seen.append(view)
            if view["asking"]:
                io.submit(script.pop(0) if script else view["legal"][0], view["ask"])
    return seen


async def test_a_person_plays_a_whole_multi_action_game_recorded_unrated(league):
    async with league.challenges.running():
        ch = await league.challenges.start(user(league), "mini", "random-py", "first", "60+1")
        views = await play_first_legal(ch.io, ["zz9"])
        await ch.done.wait()
    final = views[-1]
    assert final["final"] and final["recorded"] and final["result"]["reason"] == "max_turns"
    # the typo was explained with the engine's words, and the same prompt came back
    rejected = [v for v in views if v["error"] and v["message"].startswith("zz9: ")]
    assert rejected and rejected[0]["asking"]
    # black's turns have two actions, collected one click at a time
    assert any(len(m["actions"]) == 2 for m in final["moves"] if m["seat"] == 0)
    row = game_row(league, ch.game_id)
    assert row.kind == "challenge" and row.state == "finished" and row.rated is False
    record = await league.record(ch.game_id)
    assert record["bots"][0]["kind"] == "human" and record["bots"][0]["name"] == "@alice"
    assert record["bots"][0]["time_control"]["base"] == 60.0  # the person's own clock
    assert record["time_control"] == league.settings.time_control.to_dict()  # the bot's
    assert record["exits"][1]["returncode"] is not None or record["exits"][1]["signal"]
    # its replay starts each clock from its own seat's time control
    replay = replay_data(GameRecord.from_dict(record))
    assert replay["steps"][0]["clocks"] == [60.0, league.settings.time_control.base]
    assert replay["time_control"] == "pink 60+1, black 5+0.05"
    # no rating moved, the leaderboard does not list the person, the bot list neither
    board = await league.leaderboard("mini", limit=10, offset=0)
    assert [(r["bot"], r["games"]) for r in board] == [("random-py", 0)]
    assert [b["name"] for b in await league.bots(limit=10, offset=0)] == ["random-py"]


async def test_a_page_that_reconnects_gets_the_whole_game_and_plays_on(league):
    async with league.challenges.running():
        ch = await league.challenges.start(user(league), "mini", "random-py", "first", "60+1")
        io = ch.io
        with io.connected():
            async for first in io.views():
                if first["asking"]:
                    break
        assert io.connections == 0  # the page went away (a reload)
        # a click meant for an earlier prompt is not played
        io.submit(first["legal"][0], first["ask"] - 1)
        stale = io.view()
        assert stale["message"].startswith("that was meant for an earlier")
        assert stale["ask"] == first["ask"]
        views = await play_first_legal(io)
    again = views[0]  # the reloaded page gets the same prompt, whole
    assert again["asking"] and again["ask"] == first["ask"]
    assert again["board"] == first["board"] and again["legal"] == first["legal"]
    assert views[-1]["recorded"] and views[-1]["moves"][0]["actions"] == [first["legal"][0]]


async def test_a_browser_that_never_comes_back_resigns_after_the_grace(tmp_path):
    with make(tmp_path, disconnect_grace=0.5) as league:
        async with league.challenges.running():
            alice = user(league)
            ch = await league.challenges.start(alice, "stripes", "random-py", "first", "60+1")
            with trio.fail_after(60):
                await ch.done.wait()
        record = await league.record(ch.game_id)
    assert record["result"]["reason"] == "resign" and record["result"]["winner"] == 1
    assert record["result"]["detail"].endswith("resigned: the browser disconnected")
    assert record["exits"][1] is not None


async def test_a_server_that_stops_fails_the_game_and_reaps_the_bot(league):
    async with league.challenges.running():
        ch = await league.challenges.start(user(league), "stripes", "random-py", "second", "60+1")
        with ch.io.connected():
            async for view in ch.io.views():
                if view["asking"]:
                    break  # the bot has moved: its process is up; now the server stops
    assert ch.done.is_set()
    row = game_row(league, ch.game_id)
    assert row.state == "failed" and "the server stopped" in row.detail
    assert ch.io.view()["final"] and "the server stopped" in ch.io.view()["message"]


async def test_choices_are_checked_and_one_game_per_person(league):
    alice = user(league)
    async with league.challenges.running():
        for args, field in (
            (("nope", "random-py", "first", "60+1"), "variant"),
            (("mini", "nobody", "first", "60+1"), "bot"),
            (("mini", "random-py", "middle", "60+1"), "seat"),
            (("mini", "random-py", "first", "5000+1"), "clock"),
            (("mini", "random-py", "first", "soon"), "clock"),
        ):
            with pytest.raises(LeagueError) as e:
                await league.challenges.start(alice, *args)
            assert e.value.field == field
        ch = await league.challenges.start(alice, "mini", "random-py", "first", "60+1")
        with pytest.raises(LeagueError, match=f"playing game {ch.game_id}") as e:
            await league.challenges.start(alice, "mini", "random-py", "first", "60+1")
        assert e.value.status == 409
        ch.io.submit("resign", None)
        await ch.done.wait()
    assert game_row(league, ch.game_id).reason == "resign"


async def test_a_double_click_on_start_starts_one_game(league):
    outcomes = []

    async def start():
        try:
            outcomes.append(await league.challenges.start(user(league), "mini", "random-py",
                                                          "first", "60+1"))  # fmt: skip
        except LeagueError as e:
            outcomes.append(e)

    async with league.challenges.running():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(start)
            nursery.start_soon(start)
        (game,) = [o for o in outcomes if not isinstance(o, LeagueError)]
        (refused,) = [o for o in outcomes if isinstance(o, LeagueError)]
        assert refused.status == 409
        game.io.submit("resign", None)
        await game.done.wait()
    with league.db.read() as conn:
        kinds = conn.execute(sa.select(schema.games.c.kind)).scalars().all()
    assert kinds == ["challenge"]


# --- through the websocket route ------------------------------------------------------------


def start_game(client: TestClient, variant: str, seat: str, clock: str) -> Any:
    """The /play form sent against random-py; the answer, not followed (303 to the board)."""
    csrf = csrf_of(client.get("/play").text)
    form = {"csrf": csrf, "variant": variant, "bot": "random-py", "seat": seat, "clock": clock}
    return client.post("/play", data=form, follow_redirects=False)


@pytest.fixture
def site(tmp_path):
    with make(tmp_path) as league, page_client(league) as client:
        _bob, token = league.add_user("bob")
        login(client, token)
        yield client, league


def test_the_form_starts_a_game_played_over_the_websocket(site):
    client, _ = site
    form = client.get("/play")
    assert form.status_code == 200 and 'value="random-py"' in form.text
    assert '<option value="stripes" selected>' in client.get("/play?variant=stripes").text
    bad = start_game(client, "mini", "second", "99999+1")
    assert bad.status_code == 422 and "longer than this league allows" in bad.text
    start = start_game(client, "mini", "second", "120+2")
    assert start.status_code == 303
    game_id = int(start.headers["location"].rsplit("/", 1)[1])
    page = client.get(f"/play/{game_id}")
    assert page.status_code == 200 and 'src="/static/play.js"' in page.text
    views = []
    with client.websocket_connect(f"ws://league.test/play/{game_id}/ws") as ws:
        ws.send_text("not json")  # ignored, like anything that is not a line
        while True:
            try:
                view = ws.receive_json()
            except Exception:  # closed by the server after the final view
                break
            views.append(view)
            if view["asking"]:
                ws.send_text(json.dumps({"line": view["legal"][-1], "ask": view["ask"]}))
            if view["final"]:
                break
    assert views[-1]["recorded"] and views[-1]["you"] == 1
    # the board is sent when it changed only (it is the bulk of a message)
    assert views[0]["board"].startswith("<svg") and any(v["board"] is None for v in views)
    assert views[-1]["players"][1]["clock"] == "120+2"
    detail = client.get(f"/api/v1/games/{game_id}").json()
    assert detail["kind"] == "challenge" and detail["rated"] is False
    assert detail["seats"][1]["bot"] == "@bob" and detail["state"] == "finished"
    # the finished game's board page now leads to its game page
    gone = client.get(f"/play/{game_id}", follow_redirects=False)
    assert gone.status_code in (200, 303)


def test_only_the_player_may_open_the_socket(site):
    client, _ = site
    start = start_game(client, "stripes", "first", "60+1")
    game_id = int(start.headers["location"].rsplit("/", 1)[1])
    url = f"ws://league.test/play/{game_id}/ws"
    evil = {"Origin": "http://evil.example"}
    with pytest.raises(WebSocketDisconnect) as e, client.websocket_connect(url, headers=evil) as ws:
        ws.receive_json()
    assert e.value.code == 1008 and e.value.reason.startswith("only the person playing")
    stranger = TestClient(client.app, base_url="http://league.test", backend="trio")
    with stranger, pytest.raises(WebSocketDisconnect) as e, stranger.websocket_connect(url) as ws:
        ws.receive_json()
    assert e.value.code == 1008
    elsewhere = f"ws://league.test/play/{game_id + 99}/ws"
    with pytest.raises(WebSocketDisconnect) as e, client.websocket_connect(elsewhere) as ws:
        ws.receive_json()
    assert e.value.reason == "this game is not in play on this server"
    with client.websocket_connect(f"ws://league.test/play/{game_id}/ws") as ws:
        view = ws.receive_json()
        while not view["asking"]:
            view = ws.receive_json()
        ws.send_text(json.dumps({"line": "resign", "ask": view["ask"]}))
        while not view["final"]:
            view = ws.receive_json()
    assert view["result"]["reason"] == "resign" and view["result"]["you"] == "loss"


async def test_others_can_watch_the_game_live(league):
    async with league.challenges.running():
        ch = await league.challenges.start(user(league), "mini", "random-py", "second", "60+1")
        live = league.live.games[ch.game_id]
        assert live.record.bots[1]["name"] == "@alice"
        with ch.io.connected():
            async for view in ch.io.views():
                if view["asking"]:
                    break
        assert live.turns == 1 and live.frames()["steps"]  # the bot's first turn, replayable
        assert live.frames()["steps"][0]["clocks"] == [5.0, 60.0]  # each seat's own clock
        ch.io.submit("resign", None)
        await ch.done.wait()
    assert ch.game_id not in league.live.games and live.finished


@pytest.mark.postgres
def test_a_challenge_never_becomes_a_job_and_a_stop_fails_it_on_postgresql(tmp_path):
    """With workers (`--no-local-games`) the server re-defers a job for every game in flight
    without one; a person's game has none on purpose and must never be handed to a worker,
    and a stop must fail it rather than queue it again (its person is gone)."""
    from arena.league import queue

    from .support import postgres_database

    with postgres_database() as url:
        engine = sa.create_engine(url)
        migrations.upgrade(engine)
        queue.install_schema(engine)
        engine.dispose()
        settings = settings_from_dict({"database": url, "games": [MINI]}, root=tmp_path)
        league = League(settings, Database(url))
        try:
            league.add_user("alice")
            league.add_house_bot("alice", BOTS / "random-py")
            alice = user(league)
            with league.db.write() as conn:
                challenge = league.challenges._create(
                    conn, alice, settings.game("mini"), "random-py", 0
                )
                bot = views.active_bots(conn)[0]["version_id"]
                rated = ledger.create_game(
                    conn,
                    ledger.NewGame(
                        kind=schema.GameKind.RATED,
                        variant="mini",
                        game_name="papagra",
                        options={},
                        seed=1,
                        opening=(),
                        time_control={},
                        version0=bot,
                        version1=roster.human_version(conn, alice),
                    ),
                )
            with league.db.read() as conn:
                assert queue.orphans(conn) == [rated]
            with league.db.write() as conn:
                assert ledger.void_running(conn, schema.VoidKind.SERVER_STOPPED, "stop", 3) == 1
            assert game_row(league, challenge.game_id).state == "failed"
            assert game_row(league, rated).state == "queued"
        finally:
            league.db.dispose()


def bot_processes(league_dir: Path) -> list[int]:
    """Processes running from a directory of the league (its bots' working directories)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = (proc / "cwd").resolve()
        except OSError:
            continue
        if cwd.is_relative_to(league_dir):
            out.append(int(proc.name))
    return out


@pytest.mark.slow
def test_a_real_server_stopped_mid_game_fails_it_and_leaves_no_bot_behind(tmp_path):
    import signal

    import httpx

    from .support import Server, add_user, cli, make_league

    d = make_league(tmp_path / "league", games='["stripes"]')
    token = add_user(d, "ada")
    cli("league", "bot", "add", str(BOTS / "random-py"), "--owner", "ada", "-C", str(d))
    server = Server(d)
    try:
        web = httpx.Client(base_url=server.url, timeout=30)
        login(web, token)
        csrf = csrf_of(web.get("/play").text)
        start = web.post(
            "/play",
            data={"csrf": csrf, "variant": "stripes", "bot": "random-py", "seat": "first",
                  "clock": "600+5"},
        )  # fmt: skip
        assert start.status_code == 303, start.text
        game_id = int(start.headers["location"].rsplit("/", 1)[1])
        # the bot is up, waiting for the person's first move
        server.wait_for(lambda: bot_processes(d), 30, "the bot's process")
        assert server.get(f"/api/v1/games/{game_id}").json()["state"] == "running"
    finally:
        assert server.stop(signal.SIGTERM) == 0
    assert bot_processes(d) == []  # reaped before the server exited
    db = Database(f"sqlite:///{d / 'league.sqlite'}")
    try:
        with db.read() as conn:
            row = conn.execute(sa.select(schema.games).where(schema.games.c.id == game_id)).one()
        assert row.kind == "challenge" and row.state == "failed"
        assert "the server stopped" in row.detail
    finally:
        db.dispose()


# --- whatever a page sends ------------------------------------------------------------------

_NOISE = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["?", "help", "", "a1 a1", "-a1", "z0", "1", "pass", "<b>x</b>"]),
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    noise=st.lists(st.tuples(_NOISE, st.integers(-2, 2)), max_size=30),
    seed=st.integers(0, 2**31),
)
def test_whatever_a_page_sends_the_referee_sees_only_legal_moves(noise, seed):
    """Two people in the browser's seat (no subprocess: fast), their pages sending noise (any
    text, answers to wrong prompts) before each real action: the game always ends by the
    rules, nobody forfeits, and the record replays."""
    from arena.referee import MatchConfig, TimeControl, play_match
    from arena.referee.human import HumanPlayer

    async def main():
        tc = TimeControl(startup=10.0, base=600.0)
        ios = [
            BrowserIO(
                game_id=1,
                variant="mini",
                game_name="papagra",
                options=MINI["options"],
                seat=s,
                names=("@a", "@b"),
                clocks=(tc, tc),
                grace=600.0,
            )
            for s in (0, 1)
        ]
        todo = list(noise)

        async def person(io):
            with io.connected():
                async for view in io.views():
                    if view["asking"]:
                        while todo:
                            text, offset = todo.pop()
                            if not text.strip().lower().startswith("resign"):
                                io.submit(text, view["ask"] + offset)
                        io.submit(view["legal"][seed % len(view["legal"])], view["ask"])
                    if view["result"] is not None:
                        return

        config = MatchConfig(
            "papagra",
            MINI["options"],
            (HumanPlayer(ios[0], "@a"), HumanPlayer(ios[1], "@b")),
            tc,
            seed=seed,
        )
        async with trio.open_nursery() as nursery:
            for io in ios:
                nursery.start_soon(person, io)
            with trio.fail_after(60):
                record = await play_match(
                    config, observer=lambda ev: [io.on_turn(ev) for io in ios]
                )
        return record

    record = trio.run(main)
    assert record.result["reason"] in ("max_turns", "repetition", "board_full", "no_moves")
    assert not record.result["forfeit"]
    assert not any(a.get("illegal") for t in record.turns for a in t["actions"])
    *_, (_, state) = record.replay_states()
    assert state.describe() == record.final_position
