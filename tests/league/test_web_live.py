"""Live games against a real `arena league serve`: the event stream of a game in flight sends
the replay so far, then every new turn, then the end, and its frames are the recorded replay's;
a client that never reads its stream holds up no game; the pages list the games in flight and
say when games are played elsewhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from arena.league.live import LiveGames
from arena.referee.clock import TimeControl
from arena.referee.record import GameRecord
from arena.viewer import replay_data

from .support import ROOT, Server, add_slow_bots, make_league, page_client, sqlite_league


@pytest.fixture
def served(tmp_path: Path):
    d = make_league(
        tmp_path / "league", games='["stripes"]', concurrency="1", time_control='"60+1"'
    )
    add_slow_bots(d, 0.08)
    with Server(d) as server:
        yield server


def read_events(response: httpx.Response):
    """(name, data) for each event of a text/event-stream, as they come."""
    name, data = None, None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif line == "" and name is not None:
            yield name, data
            name, data = None, None


def game_in_flight(server: Server) -> int | None:
    """A game being played here now (not one claimed ahead, still waiting for its slot)."""
    m = re.search(r'<tr data-game-id="(\d+)" data-live>', server.get("/live").text)
    return int(m.group(1)) if m else None


def finished_games(server: Server) -> int:
    return server.get("/api/v1").json()["games"].get("finished", 0)


@pytest.mark.slow
def test_a_game_streams_its_frames_live_and_they_are_its_replay(served):
    server = served
    game_id = server.wait_for(lambda: game_in_flight(server), 60, "a game in flight")
    url = f"{server.url}/games/{game_id}/live"
    with (
        httpx.Client(timeout=httpx.Timeout(60, read=30)) as idle,
        httpx.Client(timeout=httpx.Timeout(60, read=30)) as reader,
    ):
        # a client that opens the stream and never reads it
        stalled = idle.stream("GET", url)
        stalled_response = stalled.__enter__()
        assert stalled_response.headers["content-type"].startswith("text/event-stream")
        steps: list[dict] = []
        names = []
        with reader.stream("GET", url) as response:
            assert response.status_code == 200
            for name, data in read_events(response):
                names.append(name)
                if name == "start":
                    assert not steps
                    assert data["format"] == "arena-replay/1" and data["game"] == "stripes"
                    assert [p["name"] for p in data["players"]] in (
                        ["slow-a", "slow-b"],
                        ["slow-b", "slow-a"],
                    )
                    steps = list(data["steps"])
                elif name == "steps":
                    assert data["from"] == len(steps)  # contiguous, nothing lost or repeated
                    steps.extend(data["steps"])
                elif name == "end":
                    assert data == {"state": "finished", "url": f"/games/{game_id}"}
                    break
        assert names[0] == "start" and names[-1] == "end" and "steps" in names
        record = GameRecord.from_dict(server.get(f"/api/v1/games/{game_id}/record").json())
        replay = replay_data(record)["steps"]
        assert len(steps) == len(replay)
        for live, final in zip(steps, replay, strict=True):
            for key in ("turn", "seat", "action", "cells", "scores", "status"):
                assert live.get(key) == final.get(key), key
        # the next game is played and recorded while the stalled client still holds its stream
        before = finished_games(server)
        server.wait_for(lambda: finished_games(server) > before, 90, "another game recorded")
        stalled.__exit__(None, None, None)
    # a client that goes away is forgotten at once: its stream stops watching the game
    game_id = server.wait_for(lambda: game_in_flight(server), 60, "a game in flight")
    # without JavaScript the page shows the position as it was when it was made, and reloads
    page = server.get(f"/games/{game_id}").text
    if 'data-live-game="' in page:  # (else the game ended in between: nothing to see)
        assert '<div class="arena-board live-still"><svg' in page
        assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in page
    url = f"{server.url}/games/{game_id}/live"
    with httpx.Client(timeout=httpx.Timeout(60, read=30)) as gone:
        with gone.stream("GET", url) as response:
            stream = read_events(response)  # kept: a dropped iterator closes the connection
            assert next(stream)[0] == "start"
            assert watching(server, game_id) == 1
        server.wait_for(lambda: watching(server, game_id) in (0, None), 30, "the watcher gone")
    assert "Traceback" not in server.log()


def watching(server: Server, game_id: int) -> int | None:
    """The /live list's count of streams following the game (None once it is over)."""
    m = re.search(
        rf'href="/games/{game_id}">.*?<td class="num">\d+</td><td class="num">(\d+)</td>',
        server.get("/live").text,
        re.S,
    )
    return int(m.group(1)) if m else None


@pytest.fixture
def site(tmp_path):
    with sqlite_league(tmp_path) as league, page_client(league) as client:
        yield client, league


def claimed_game(league, names: tuple[str, str]) -> int:
    """A rated game between two bots of these names (straight into the store: one is a name
    the API would refuse), claimed by a slot: in flight, not started."""
    from arena.league.db import ledger, roster, schema

    with league.db.write() as conn:
        owner = roster.add_user(conn, "owner", "owner-token")
        versions = []
        for i, name in enumerate(names):
            v = roster.add_version(
                conn,
                owner_id=owner.id,
                bot_name=name,
                archive_sha256="0" * 64,
                path=f"/bots/{i}",
                manifest={},
            )
            roster.finish_validation(conn, v.id, {"passed": True}, True, ["stripes"])
            versions.append(v.id)
        game = ledger.NewGame(
            schema.GameKind.RATED, "stripes", "stripes", {}, 1, (), {}, versions[0], versions[1]
        )
        gid = ledger.create_game(conn, game)
        assert ledger.claim_game(conn, gid) is not None
    league.cache.changed()
    return gid


def test_the_live_list_names_games_in_flight_escaped_and_remote_games_are_said(site):
    client, league = site
    assert "No game is being played right now" in client.get("/live").text
    evil = "<script>alert(1)</script>"
    gid = claimed_game(league, (evil, "b"))
    page = client.get("/live").text  # claimed, not started: in flight all the same
    assert f'href="/games/{gid}"' in page and "next on its slot" in page
    assert evil not in page and "&lt;script&gt;" in page
    tc = TimeControl(base=5.0).to_dict()
    match = {"game": "stripes", "options": {}, "seed": 1, "time_control": tc}
    league.live.start(gid, "stripes", match, [evil, "b"])
    page = client.get("/live").text
    assert f'href="/games/{gid}"' in page and "next on its slot" not in page
    assert evil not in page and "&lt;script&gt;" in page
    assert league.live.get(gid).frames()["players"][0]["name"] == evil  # data, drawn as text
    league.live.end(gid)
    league.live.local = False
    page = client.get("/live").text
    assert "played by remote workers" in page and "on a worker" in page
    assert client.get("/games/99/live").status_code == 404
    assert client.get("/live/99").status_code == 404


async def played_record() -> GameRecord:
    from arena.referee import MatchConfig, load_bot, play_match

    bot = load_bot(ROOT / "bots" / "random-py")
    config = MatchConfig(game="stripes", options={}, bots=(bot, bot), seed=3)
    return await play_match(config)


async def test_frames_made_turn_by_turn_are_the_replay_and_readers_keep_their_place():
    record = await played_record()
    games = LiveGames()
    match = {
        "game": record.game,
        "options": record.options,
        "seed": record.seed,
        "opening": record.opening,
        "time_control": record.time_control,
    }
    games.start(1, "stripes", match, ["a", "b"])
    game = games.get(1)
    kind, data = await game.update(0)
    assert kind == "start" and len(data["steps"]) == 1  # the position before any turn
    readers = {"fast": 1, "slow": 1}
    got: list[dict] = list(data["steps"])
    for i, entry in enumerate(record.turns):
        games.turn(1, entry)
        kind, data = await game.update(readers["fast"])
        assert kind == "steps" and data["from"] == readers["fast"]
        readers["fast"] += len(data["steps"])
        got.extend(data["steps"])
        if i % 7 == 0:  # a slow reader catches up with everything since it last looked
            kind, data = await game.update(readers["slow"])
            assert kind == "steps" and data["from"] == readers["slow"]
            readers["slow"] += len(data["steps"])
    assert await game.update(readers["fast"]) == (None, None)
    replay = replay_data(record)["steps"]
    assert [(s["action"], s.get("cells")) for s in got] == [
        (s["action"], s.get("cells")) for s in replay
    ]
    games.end(1)
    assert game.finished and games.list() == []


async def test_turns_that_do_not_replay_stop_the_live_view_not_the_game():
    games = LiveGames()
    tc = TimeControl(base=5.0).to_dict()
    games.start(2, "stripes", {"game": "stripes", "options": {}, "time_control": tc}, ["a", "b"])
    games.turn(2, {"turn": 1, "seat": 0, "actions": [{"action": "zz99"}]})
    kind, data = await games.get(2).update(0)
    assert kind == "unavailable" and "zz99" in data["reason"]
