"""What a league keeps private, tried from outside: a bot's stderr and tracebacks reach only
its owner (and admins), on every page, endpoint and record; no server path reaches anyone;
logout, a new token and disabling end every session on the server; `league init` makes the
league directory 0700 and its secrets 0600 (docs/security.md)."""

from __future__ import annotations

import html
import json
import os
import re
import stat
import sys
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from arena.league.db import fleet, ledger, schema
from arena.league.web.auth import COOKIE
from arena.referee.channel import STDERR_SEPARATOR

from .support import (
    BOTS,
    ROOT,
    Server,
    add_user,
    cli,
    csrf_of,
    login,
    make_league,
    page_client,
    sqlite_league,
)

SECRET = "SECRET-STRATEGY-42"
DEPTH = 15

#: a bot whose first move raises deep inside a module of its own, after 30 lines of stderr:
#: a 20-line tail would start partway through its traceback
TRACER = """import sys
from protocol.sdk import run_bot
from helper import f0

for i in range(30):
    print(f"warming up {i}", file=sys.stderr, flush=True)

def choose(turn, bot):
    return f0()

raise SystemExit(run_bot(choose, name="tracer"))
"""
HELPER = "".join(f"def f{i}():\n    return f{i + 1}()\n\n" for i in range(DEPTH)) + (
    f"def f{DEPTH}():\n    raise ValueError({SECRET!r} + ' went wrong')\n"
)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _no_server_paths(text: str, league_dir: Path) -> None:
    for path in {str(league_dir), str(league_dir.resolve()), sys.prefix, str(ROOT)}:
        assert path not in text, f"server path {path} shown:\n{text[:3000]}"


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory):
    """A real server on loopback whose user dana submitted `tracer` (rejected by validation),
    with eve (another user) and root (an admin)."""
    from arena.league.archives import pack_bot_dir

    tmp_path = tmp_path_factory.mktemp("traced")
    d = make_league(tmp_path / "league", games='["stripes"]')
    dana, eve = add_user(d, "dana"), add_user(d, "eve")
    root = cli("league", "user", "add", "root", "--admin", "-C", str(d)).strip().splitlines()[-1]
    bot = tmp_path / "tracer"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'name = "tracer"\ncommand = ["python3", "bot.py"]\n[limits]\nmemory_mb = 256\n'
    )
    (bot / "bot.py").write_text(TRACER)
    (bot / "helper.py").write_text(HELPER)
    with Server(d) as server:
        resp = server.client.post(
            "/api/v1/bots",
            content=pack_bot_dir(bot),
            headers={**_auth(dana), "Content-Type": "application/gzip"},
        )
        assert resp.status_code == 202, resp.text
        answer = resp.json()
        server.wait_for(
            lambda: server.get(answer["url"]).json()["validation"],
            timeout=180,
            what="tracer's validation",
        )
        yield server, d, answer, {"dana": dana, "eve": eve, "root": root}


def _session(server: Server, token: str | None) -> httpx.Client:
    client = httpx.Client(base_url=server.url, timeout=30)
    if token is not None:
        login(client, token)
    return client


def _page(server: Server, path: str, token: str | None) -> str:
    with closing(_session(server, token)) as client:
        return client.get(path).text


@pytest.mark.slow
def test_a_bots_stderr_and_traceback_are_its_owners_alone(traced) -> None:
    """The submission page, its event stream, the bot page and the API show a visitor and
    another user the verdict, never the bot's stderr; its owner and an admin get it."""
    server, _, answer, tokens = traced
    url, page = answer["url"], f"/submissions/{answer['id']}"
    for who in (None, "eve"):
        for path in (page, page + "/events", "/bots/tracer"):
            text = _page(server, path, tokens[who] if who else None)
            assert "rejected" in text, (who, path)
            assert SECRET not in text and "Traceback" not in text, (who, path, text)
            assert "warming up" not in text, (who, path)
        version = server.get(url, headers=_auth(tokens[who]) if who else {}).json()
        assert version["state"] == "rejected"
        report = version["validation"]
        assert report["passed"] is False and report["stage"] == "games"
        assert "crashed" in report["problem"]
        assert "stderr_tail" not in report and "build_output" not in report
        assert all("stderr_tail" not in g for g in report["games"])
        assert SECRET not in json.dumps(version) and "Traceback" not in json.dumps(version)
    assert SECRET not in server.get("/api/v1/bots/tracer").text
    assert server.get(url, headers=_auth("not-a-token")).status_code == 401
    for who in ("dana", "root"):
        report = server.get(url, headers=_auth(tokens[who])).json()["validation"]
        assert f"ValueError: {SECRET} went wrong" in report["stderr_tail"]
        assert SECRET in _page(server, page, tokens[who])


@pytest.mark.slow
def test_no_server_path_reaches_anyone(traced) -> None:
    """Not in the owner's traceback (its own files as <bot>/, the arena's as <arena>/), not
    in any page or answer about the version, not in the manifest's command."""
    server, league_dir, answer, tokens = traced
    url, page = answer["url"], f"/submissions/{answer['id']}"
    for token in (None, tokens["eve"], tokens["dana"], tokens["root"]):
        _no_server_paths(_page(server, page, token), league_dir)
        _no_server_paths(_page(server, page + "/events", token), league_dir)
        headers = _auth(token) if token else {}
        _no_server_paths(server.get(url, headers=headers).text, league_dir)
    _no_server_paths(server.get("/api/v1/bots/tracer").text, league_dir)
    tail = server.get(url, headers=_auth(tokens["dana"])).json()["validation"]["stderr_tail"]
    assert 'File "<bot>/bot.py"' in tail and 'File "<bot>/helper.py"' in tail
    assert "<arena>/" in tail  # the SDK's frames, from the arena's install
    assert server.get(url).json()["manifest"]["command"] == ["python3", "bot.py"]


@pytest.mark.slow
def test_the_owners_traceback_is_shown_once_whole_and_preformatted(traced) -> None:
    """The rejected submission's report on its owner's page: the traceback once (not in the
    problem sentence, the games table and a details block), in a <pre>, from its first line
    to the exception, though the bot printed 30 lines before it."""
    server, _, answer, tokens = traced
    text = _page(server, f"/submissions/{answer['id']}", tokens["dana"])
    assert text.count("Traceback (most recent call last):") == 1, text
    assert text.count(f"ValueError: {SECRET} went wrong") == 1, text
    pres = [html.unescape(p) for p in re.findall(r"<pre[^>]*>(.*?)</pre>", text, re.S)]
    (traceback,) = [p for p in pres if "Traceback" in p]
    assert traceback.startswith("Traceback (most recent call last):")
    assert traceback.rstrip().endswith(f"ValueError: {SECRET} went wrong")
    assert all(f"in f{i}" in traceback for i in range(DEPTH + 1)), traceback
    assert 'File "<bot>/bot.py"' in traceback and "warming up" not in traceback
    # the report's problem names the failure in a sentence, without the stderr lines
    report = server.get(answer["url"], headers=_auth(tokens["dana"])).json()["validation"]
    assert "Traceback" not in report["problem"] and "\n" not in report["problem"]


@pytest.mark.slow
def test_the_manifest_shows_the_limits_that_apply(traced) -> None:
    """The request capped by the league's [limits], unset keys at the league's values (not
    at their range's maximum)."""
    server, _, answer, _ = traced
    limits = server.get(answer["url"]).json()["manifest"]["limits"]
    assert limits["memory_mb"] == 256  # asked for, under the league's 512
    assert (limits["processes"], limits["open_files"]) == (32, 128)  # the league's
    assert (limits["file_size_mb"], limits["stderr_bytes"]) == (16, 65536)
    assert limits["network"] is False
    bot = server.get("/api/v1/bots/tracer").json()
    assert bot["versions"][0]["manifest"]["limits"] == limits


def test_failed_games_reasons_and_records_carry_no_stderr_and_no_server_paths(tmp_path):
    """Siblings: a game's detail quotes the crashed bot's stderr, a voided attempt's reason
    names the interpreter's path, a record carries stderr, logs and commands, a worker's last
    failure names its cache: none of it reaches a visitor."""
    with sqlite_league(tmp_path, games=["stripes"]) as league, page_client(league) as client:
        league.add_user("alice")
        va = league.add_house_bot("alice", BOTS / "random-py")
        bot_dir = va.path
        sandbox = f"bot random-py: cannot start the sandbox: {sys.executable}"
        with league.db.write() as conn:
            new = ledger.NewGame(
                schema.GameKind.RATED, "stripes", "stripes", {}, 1, (), {}, va.id, va.id
            )
            crashed = ledger.create_game(conn, new)
            ledger.claim_game(conn, crashed)
            detail = f"red (random-py) crashed: exited with status 1{STDERR_SEPARATOR}{SECRET}"
            record = {
                "format": "arena-record/1",
                "bots": [
                    {
                        "name": "random-py",
                        "command": [sys.executable, f"{bot_dir}/bot.py"],
                        "source": bot_dir,
                    },
                    {"name": "random-py", "command": [sys.executable, "bot.py"], "source": bot_dir},
                ],
                "result": {
                    "winner": 1,
                    "result": "0-1",
                    "reason": "crash",
                    "detail": detail,
                    "forfeit": True,
                    "loser_seat": 0,
                    "failure": {
                        "seat": 0,
                        "reason": "crash",
                        "detail": detail,
                        "stderr_tail": SECRET,
                    },
                },
                "stderr": [SECRET, ""],
                "logs": [{"seat": 0, "t": 0.0, "message": SECRET}],
            }
            assert ledger.record_result(conn, crashed, 1, record)
            failed = ledger.create_game(conn, new)
            ledger.claim_game(conn, failed)
            assert ledger.void_attempt(conn, failed, 1, schema.VoidKind.SANDBOX_FAULT, sandbox, 1)
            fleet.register(conn, "w1", "host", 1, 1)
            fleet.begin_attempt(conn, failed, 1, "w1")
            fleet.end_attempt(conn, failed, 1, fleet.VOIDED, f"{sandbox} in /root/.cache/x/y")
        league.cache.changed()

        shown = [
            client.get(f"/api/v1/games/{crashed}").text,
            client.get(f"/api/v1/games/{crashed}/record").text,
            client.get(f"/api/v1/games/{failed}").text,
            client.get("/api/v1/games").text,
            client.get("/api/v1/workers").text,
            client.get(f"/games/{crashed}").text,
            client.get(f"/games/{failed}").text,
            client.get("/games").text,
            client.get("/").text,
            client.get("/workers").text,
            client.get("/bots/random-py").text,
            client.get("/api/v1/bots/random-py").text,
        ]
        for text in shown:
            assert SECRET not in text
            assert sys.executable not in text and sys.prefix not in text
            assert str(tmp_path) not in text and "/root/.cache" not in text
        public = client.get(f"/api/v1/games/{crashed}/record").json()
        assert "stderr" not in public and "logs" not in public
        assert public["result"]["detail"] == "red (random-py) crashed: exited with status 1"
        assert [b["command"] for b in public["bots"]] == [["python3", "bot.py"]] * 2
        game = client.get(f"/api/v1/games/{failed}").json()
        assert game["state"] == "failed"
        python = Path(sys.executable).name  # python in a venv, python3 from the system
        assert game["detail"] == f"bot random-py: cannot start the sandbox: <arena>/bin/{python}"
        assert game["voids"][0]["reason"] == game["detail"]
        assert f"cannot start the sandbox: &lt;arena&gt;/bin/{python}" in shown[6]


def test_logout_token_rotation_and_disabling_end_every_session(tmp_path):
    """A cookie copied before logout no longer opens /submit afterwards, nor does any other
    session of the account; a new token and disabling the account do the same."""
    d = make_league(tmp_path / "league")
    token = add_user(d, "dana")

    def cookie_of(client: httpx.Client) -> str:
        return client.cookies[COOKIE]

    def opens_submit(cookie: str) -> bool:
        with httpx.Client(base_url=server.url, cookies={COOKIE: cookie}, timeout=30) as c:
            resp = c.get("/submit", follow_redirects=False)
            assert resp.status_code in (200, 303), resp.status_code
            return resp.status_code == 200

    with Server(d) as server:
        laptop, phone = _session(server, token), _session(server, token)
        copied, other = cookie_of(laptop), cookie_of(phone)
        assert opens_submit(copied) and opens_submit(other)
        csrf = csrf_of(laptop.get("/submit").text)
        assert laptop.post("/logout", data={"csrf": csrf}).status_code in (200, 303)
        assert not opens_submit(copied)  # the copy made before logout
        assert not opens_submit(other)  # every session of the account
        assert opens_submit(cookie_of(_session(server, token)))  # a new login works

        # a new token: sessions opened with the old one end, the old token is refused
        before = cookie_of(_session(server, token))
        new = cli("league", "user", "token", "dana", "-C", str(d)).strip().splitlines()[-1]
        assert new != token and not opens_submit(before)
        login(httpx.Client(base_url=server.url, timeout=30), token, expect=401)
        assert server.get("/api/v1/me", headers=_auth(token)).status_code == 401
        assert server.get("/api/v1/me", headers=_auth(new)).json()["name"] == "dana"

        # disabling ends them too, and enabling again does not bring them back
        before = cookie_of(_session(server, new))
        cli("league", "user", "disable", "dana", "-C", str(d))
        assert not opens_submit(before)
        cli("league", "user", "enable", "dana", "-C", str(d))
        assert not opens_submit(before)
        laptop.close()
        phone.close()


def test_league_init_makes_the_league_directory_and_its_secrets_private(tmp_path):
    d = tmp_path / "league"
    old = os.umask(0o022)  # the usual umask: files 0644, directories 0755 by default
    try:
        cli("league", "init", str(d))
    finally:
        os.umask(old)

    def mode(p: Path) -> int:
        return stat.S_IMODE(p.stat().st_mode)

    assert mode(d) == 0o700
    assert mode(d / "bots") == 0o700 and mode(d / "archives") == 0o700
    assert mode(d / "league.sqlite") == 0o600  # tokens' hashes, the session key, the secret
    assert mode(d / "league.toml") == 0o600  # may hold the database's password
    for extra in d.glob("league.sqlite-*"):  # WAL and shared memory, if left
        assert mode(extra) & 0o077 == 0, extra
