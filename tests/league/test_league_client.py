"""The league client (`arena league leaderboard|games|download|logs`) against a real
`arena league serve` playing real games, on SQLite and PostgreSQL: the tables with their rank
intervals (the API's and the page's), the games' filters, records downloaded to files and
resumed, the owner's logs and one line for every refusal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from arena.referee.record import GameRecord

from .support import BACKENDS, BOTS, ROOT, Server, arena, cli, database_url, make_league

pytestmark = pytest.mark.slow

CHATTY = """import sys
from protocol.sdk import run_bot

def choose(turn, bot):
    print(f"chatty thinks <b>{len(turn['legal'])}</b>", file=sys.stderr, flush=True)
    bot.log(f"picked among {len(turn['legal'])} <i>moves</i>")
    return bot.rng.choice(turn["legal"])

raise SystemExit(run_bot(choose))
"""


@pytest.fixture(scope="module", params=BACKENDS)
def served(request, tmp_path_factory):
    """op's `chatty` (stderr and a log line every move) and `strong`, carol's `random-py`,
    playing stripes and papagra until at least 12 games are recorded."""
    tmp = tmp_path_factory.mktemp("client")
    with database_url(request.param, tmp) as url:
        d = make_league(
            tmp / "league",
            url,
            concurrency="2",
            time_control='"2+0.02"',
            games='["stripes", "papagra"]',
            memory_mb="256",
        )
        tokens = {
            name: cli("league", "user", "add", name, "-C", str(d)).strip()
            for name in ("op", "carol")
        }
        chatty = tmp / "chatty"
        chatty.mkdir()
        (chatty / "bot.toml").write_text('name = "chatty"\ncommand = ["python3", "bot.py"]\n')
        (chatty / "bot.py").write_text(CHATTY)
        for bot, owner in ((chatty, "op"), (BOTS / "strong", "op"), (BOTS / "random-py", "carol")):
            cli("league", "bot", "add", str(bot), "--owner", owner, "-C", str(d))
        with Server(d) as server:
            server.wait_for(
                lambda: server.get("/api/v1/queue").json()["counts"].get("finished", 0) >= 12,
                timeout=300,
                what="12 finished games",
            )
            yield server, tokens


def run(*args: str, token: str | None = None, check: bool = True):
    extra = ("--token", token) if token else ()
    return arena("league", *args, *extra, check=check)


def one_line_error(proc, *pieces: str) -> str:
    """A refusal: exit 2, one line on stderr naming the problem, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for piece in pieces:
        assert piece in lines[0], (piece, lines[0])
    return lines[0]


def consistent(check, what: str, attempts: int = 20):
    """The league keeps playing, so two reads (the client's and the API's) may straddle a
    recorded game: run `check` until it holds for one pair of reads (it raises
    AssertionError otherwise), a bounded number of times."""
    for attempt in range(attempts):
        try:
            return check()
        except AssertionError:
            if attempt == attempts - 1:
                raise
    raise AssertionError(what)


def test_leaderboard_shows_each_variant_with_rank_intervals(served):
    server, _ = served
    tables = json.loads(run("leaderboard", server.url, "--json").stdout)
    assert [t["variant"] for t in tables] == ["stripes", "papagra"]
    for table in tables:
        rows = table["items"]
        assert {r["bot"] for r in rows} == {"chatty", "strong", "random-py"}
        assert [r["rank"] for r in rows] == [1, 2, 3]
        for row in rows:
            assert 1 <= row["rank_low"] <= row["rank_high"] <= len(rows)

    def text_matches_api() -> None:
        lines = run("leaderboard", server.url, "stripes").stdout.splitlines()
        api = server.get("/api/v1/leaderboard/stripes").json()["items"]
        assert lines[0] == "stripes:" and "95% place" in lines[1]
        for row, line in zip(api, lines[2:], strict=True):
            low, high = row["rank_low"], row["rank_high"]
            place = str(low) if low == high else f"{low}-{high}"
            assert line.split()[:3] == [str(row["rank"]), place, row["bot"]]

    consistent(text_matches_api, "the client's table and the API's")

    def page_matches_api() -> None:
        # the page shows the same intervals, in the rank cell, escaped like everything else
        html = server.get("/leaderboard/stripes").text
        api = server.get("/api/v1/leaderboard/stripes").json()["items"]
        for row in api:
            low, high = row["rank_low"], row["rank_high"]
            shown = f"({low})" if low == high else f"({low}\u2013{high})"
            assert re.search(
                rf"<td class=\"num\">{row['rank']} <span class=\"muted rank-interval\"[^>]*>"
                rf"{re.escape(shown)}</span></td>\s*<td><a href=\"/bots/{row['bot']}\">",
                html,
            ), shown
        assert "<b>" not in html

    consistent(page_matches_api, "the page's table and the API's")


def test_games_filters(served):
    server, _ = served
    everything = json.loads(run("games", server.url, "--json", "--limit", "500").stdout)
    assert len(everything) >= 12
    mine = json.loads(run("games", server.url, "--bot", "chatty", "--json").stdout)
    assert mine and all("chatty" in {s["bot"] for s in g["seats"]} for g in mine)
    papagra = json.loads(run("games", server.url, "--variant", "papagra", "--json").stdout)
    assert papagra and {g["variant"] for g in papagra} == {"papagra"}
    three = run("games", server.url, "--bot", "strong", "--limit", "3").stdout.splitlines()
    assert len(three) == 3 and all(re.search(r"\bstrong v1\b", line) for line in three)
    wins = json.loads(
        run("games", server.url, "--bot", "strong", "--result", "win", "--json").stdout
    )
    for g in wins:
        seat = [s["bot"] for s in g["seats"]].index("strong")
        assert g["winner"] == seat
    reason = everything[0]["reason"]
    by_reason = json.loads(run("games", server.url, "--reason", reason, "--json").stdout)
    assert by_reason and {g["reason"] for g in by_reason} == {reason}
    # since and until bound the finish time (an ISO date or time; no offset is UTC)
    cut = sorted(g["finished_at"] for g in everything)[len(everything) // 2]
    after = json.loads(run("games", server.url, "--since", cut, "--json", "--limit", "500").stdout)
    before = json.loads(run("games", server.url, "--until", cut, "--json").stdout)
    assert after and all(g["finished_at"] >= cut for g in after)
    assert before and all(g["finished_at"] < cut for g in before)
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    assert run("games", server.url, "--since", tomorrow).stdout.strip() == "no game matches"
    one_line_error(run("games", server.url, "--since", "last tuesday", check=False), "--since")
    one_line_error(run("games", server.url, "--bot", "nobody", check=False), "HTTP 404")
    one_line_error(run("games", server.url, "--variant", "chess", check=False), "HTTP 404")
    one_line_error(run("games", "http://127.0.0.1:9", check=False), "cannot reach")
    # the API itself names a bad bound as a 422 on its parameter
    bad = server.get("/api/v1/games", params={"until": "soon"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "until"


def test_download_a_game_and_a_bots_games_since_a_date_resuming(served, tmp_path):
    server, tokens = served
    game = json.loads(run("games", server.url, "--json", "--limit", "1").stdout)[0]
    out = tmp_path / "one.json"
    assert run("download", server.url, str(game["id"]), "-o", str(out)).stdout.strip() == str(out)
    record = json.loads(out.read_text())
    assert record["format"] == "arena-record/1" and "stderr" not in record
    assert GameRecord.load(out).result["winner"] == game["winner"]  # `arena replay` loads it

    # every game of chatty between two dates, as files; a second run fetches only what is missing
    listed = json.loads(
        run("games", server.url, "--bot", "chatty", "--json", "--limit", "5000").stdout
    )
    until = sorted(g["finished_at"] for g in listed)[-1]  # later games are still being played
    expected = {f"game-{g['id']}.json" for g in listed if g["finished_at"] < until}
    folder = tmp_path / "chatty"
    args = ("download", server.url, "--bot", "chatty", "--since", "2000-01-01")
    first = run(*args, "--until", until, "-o", str(folder), token=tokens["carol"]).stdout
    assert {p.name for p in folder.iterdir()} == expected
    assert (
        first.splitlines()[-1] == f"downloaded {len(expected)} games to {folder}, 0 already there"
    )
    removed = sorted(expected)[0]
    (folder / removed).unlink()
    kept = sorted(expected)[-1]
    (folder / kept).write_text("{}")  # a file there is taken as done, never fetched again
    again = run(*args, "--until", until, "-o", str(folder)).stdout.splitlines()
    assert again[:-1] == [str(folder / removed)]
    assert again[-1] == f"downloaded 1 game to {folder}, {len(expected) - 1} already there"
    assert (folder / kept).read_text() == "{}"
    assert not [p for p in folder.iterdir() if p.name.endswith(".part")]

    one_line_error(run("download", server.url, check=False), "GAME", "--bot")
    one_line_error(run("download", server.url, "99999999", check=False), "HTTP 404")
    one_line_error(
        run("download", server.url, "--bot", "chatty", "--since", "2026-13-45", check=False),
        "--since",
    )


def test_logs_are_the_owners_only(served):
    server, tokens = served
    games = json.loads(
        run("games", server.url, "--bot", "chatty", "--json", "--limit", "200").stdout
    )
    ops = next(g for g in games if {s["bot"] for s in g["seats"]} == {"chatty", "strong"})
    mine = json.loads(run("logs", server.url, str(ops["id"]), "--json", token=tokens["op"]).stdout)
    assert {s["bot"] for s in mine["seats"]} == {"chatty", "strong"}  # op owns both
    seat = next(s for s in mine["seats"] if s["bot"] == "chatty")
    assert "chatty thinks <b>" in seat["stderr"]
    assert any("<i>moves</i>" in e["message"] for e in seat["logs"])
    text = run("logs", server.url, str(ops["id"]), token=tokens["op"]).stdout
    assert f"game {ops['id']} (finished)" in text and "chatty thinks <b>" in text
    assert "picked among" in text
    # carol owns neither: refused in one line (403)
    one_line_error(
        run("logs", server.url, str(ops["id"]), token=tokens["carol"], check=False),
        "HTTP 403",
        "owners",
    )
    # in a game of chatty against her random-py she reads her own bot's seat only
    mixed = next((g for g in games if "random-py" in {s["bot"] for s in g["seats"]}), None)
    if mixed is not None:
        hers = json.loads(
            run("logs", server.url, str(mixed["id"]), "--json", token=tokens["carol"]).stdout
        )
        assert [s["bot"] for s in hers["seats"]] == ["random-py"]
        assert "chatty thinks" not in json.dumps(hers)
    # a wrong token (401), no token at all, an unknown game (404): one line each
    one_line_error(run("logs", server.url, str(ops["id"]), token="nope", check=False), "HTTP 401")
    env = {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "league", "logs", server.url, str(ops["id"])],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    one_line_error(proc, "no token", "ARENA_TOKEN")
    one_line_error(run("logs", server.url, "99999999", token=tokens["op"], check=False), "HTTP 404")
    # the token may come from the environment, as for submit
    env["ARENA_TOKEN"] = tokens["op"]
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "league", "logs", server.url, str(ops["id"])],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "chatty thinks" in proc.stdout, proc.stderr
