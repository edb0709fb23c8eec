"""A bot's debug marks, logs and per-turn stderr in the league, tried against a real
`arena league serve` on both backends: its owner's replay shows them beside each turn; a
visitor and the opponent's owner never get them, on the game page, the record or the API
(arena/league/privacy.py). The logs page names each line's turn."""

from __future__ import annotations

import json
import shutil
from contextlib import closing

import httpx
import pytest

from .support import BACKENDS, BOTS, ROOT, Server, add_user, cli, database_url, login, make_league

pytestmark = pytest.mark.slow

SECRET = "MARKSECRET1"  # a mark's text, at most 12 characters
PLAN = [
    [{"cell": "a1", "text": SECRET, "colour": "red"}],
    [{"cell": "b2"}, {"arrow": ["a1", "c3"]}, {"cell": "zz9"}],
]
PRIVATE = (SECRET, "stderr of turn", "log of turn", "zz9")


@pytest.fixture(scope="module", params=BACKENDS)
def served(request, tmp_path_factory):
    """A league playing stripes between alice's markbot and bob's random-py, until a game
    between them is finished: (server, game id, markbot's seat, tokens)."""
    tmp = tmp_path_factory.mktemp("marks")
    with database_url(request.param, tmp) as url:
        d = make_league(
            tmp / "league", url, concurrency="1", time_control='"5+0.1"', games='["stripes"]'
        )
        tokens = {name: add_user(d, name) for name in ("alice", "bob", "carol")}
        bot = tmp / "markbot"
        bot.mkdir()
        shutil.copy(ROOT / "tests" / "referee" / "bots" / "markbot.py", bot / "markbot.py")
        (bot / "plan.json").write_text(json.dumps(PLAN))
        (bot / "bot.toml").write_text(
            'name = "markbot"\ncommand = ["python3", "markbot.py", "plan.json"]\n'
            'encoding = "json"\n'
        )
        cli("league", "bot", "add", str(bot), "--owner", "alice", "-C", str(d))
        cli("league", "bot", "add", str(BOTS / "random-py"), "--owner", "bob", "-C", str(d))
        with Server(d) as server:

            def a_game():
                games = server.get("/api/v1/games", params={"bot": "markbot"}).json()["items"]
                done = [g for g in games if g["state"] == "finished"]
                return done[0] if done else None

            game = server.wait_for(a_game, timeout=180, what="a finished game of markbot")
            seat = [s["bot"] for s in game["seats"]].index("markbot")
            yield server, game["id"], seat, tokens


def _get(server: Server, path: str, token: str | None) -> str:
    with closing(httpx.Client(base_url=server.url, timeout=30)) as client:
        if token is not None:
            login(client, token)
        return client.get(path).text


def _replay(page: str) -> dict:
    start = page.index('<script type="application/json" id="replay-data">')
    start = page.index(">", start) + 1
    return json.loads(page[start : page.index("</script>", start)])


def test_a_visitor_and_the_opponents_owner_never_see_marks_logs_or_stderr(served) -> None:
    server, gid, _seat, tokens = served
    for who in (None, "bob", "carol"):
        token = tokens[who] if who else None
        for path in (f"/games/{gid}", f"/api/v1/games/{gid}/record", f"/api/v1/games/{gid}"):
            text = _get(server, path, token)
            for secret in PRIVATE:
                assert secret not in text, (who, path, secret)
        replay = _replay(_get(server, f"/games/{gid}", token))
        assert replay["marks"] == [] and replay["stderr"] == []
        assert replay["logs"] == [] or who == "bob"
        assert all(log["seat"] != _seat for log in replay["logs"])
    record = server.get(f"/api/v1/games/{gid}/record").json()
    for field in ("marks", "marks_dropped", "stderr", "stderr_turns", "logs"):
        assert field not in record
    bobs = server.get(
        f"/api/v1/games/{gid}/logs", headers={"Authorization": f"Bearer {tokens['bob']}"}
    ).json()
    assert [s["seat"] for s in bobs["seats"]] == [1 - _seat]
    assert bobs["seats"][0]["marks"] == []
    assert SECRET not in json.dumps(bobs)


def test_the_owners_replay_shows_its_bots_marks_logs_and_stderr_per_turn(served) -> None:
    server, gid, seat, tokens = served
    page = _get(server, f"/games/{gid}", tokens["alice"])
    replay = _replay(page)
    marks = replay["marks"]
    assert marks and {m["seat"] for m in marks} == {seat}
    assert {"cell": "a1", "text": SECRET, "colour": "red"} in [x for m in marks for x in m["marks"]]
    stderr = replay["stderr"]
    assert {p["seat"] for p in stderr} == {seat}
    by_turn = {p["turn"]: p["text"] for p in stderr}
    assert by_turn[None] == "stderr before the first turn\n"
    turns = [t for t in by_turn if t is not None]
    assert turns and all(by_turn[t] == f"stderr of turn {t}\n" for t in turns)
    logs = [log for log in replay["logs"] if not log.get("arena")]
    assert logs and all(log["message"] == f"log of turn {log['turn']}" for log in logs)
    notes = [log for log in replay["logs"] if log.get("arena")]
    assert notes and "'zz9' is not a cell of this board" in notes[0]["message"]
    assert all(log["seat"] == seat for log in replay["logs"])
    # the API gives the owner its marks beside its logs, each log line with its turn
    mine = server.get(
        f"/api/v1/games/{gid}/logs", headers={"Authorization": f"Bearer {tokens['alice']}"}
    ).json()
    assert [s["seat"] for s in mine["seats"]] == [seat]
    assert mine["seats"][0]["marks"] and SECRET in json.dumps(mine["seats"][0]["marks"])
    assert all("turn" in e for e in mine["seats"][0]["logs"] if "before" not in e["message"])


def test_the_logs_page_fills_the_turn_column(served) -> None:
    server, gid, _seat, tokens = served
    page = _get(server, f"/games/{gid}/logs", tokens["alice"])
    rows = [r for r in page.split("<tr>") if "log of turn" in r]
    assert rows
    for row in rows:
        turn = row.split("log of turn ", 1)[1].split("<", 1)[0]
        assert row.startswith(f'<td class="num">{turn}</td>'), row
