"""Every status the JSON API answers is in its OpenAPI description, as a client written from the
description alone expects: a real server on loopback is driven down every error path of every
endpoint, and `Server`'s response hook checks each answer's status against that operation's
`responses` (and its body against the schema). The statuses expected here are the ones
docs/league.md tells a client about, field by field."""

from __future__ import annotations

import io
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from arena.league.archives import BlobStore, pack_bot_dir
from arena.league.db import fleet, roster
from arena.league.db.database import Database

from .support import BOTS, ROOT, OpenAPIChecker, Server, add_user, cli, make_league

pytestmark = pytest.mark.slow


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _tar(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return buf.getvalue()


def _renamed(tmp_path: Path, name: str) -> bytes:
    import shutil

    d = tmp_path / name
    shutil.copytree(BOTS / "random-py", d)
    text = (d / "bot.toml").read_text()
    (d / "bot.toml").write_text(re.sub(r'(?m)^name = ".*"$', f'name = "{name}"', text))
    return pack_bot_dir(d)


@dataclass(frozen=True)
class Answer:
    method: str
    path: str
    status: int
    body: Any


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> list[Answer]:
    """Every endpoint of a real server driven down its error paths: the answers, each already
    checked to be the status and error field a client is told to expect."""
    tmp_path = tmp_path_factory.mktemp("statuses")
    seen: list[Answer] = []
    d = make_league(tmp_path / "league", games='["stripes"]', max_archive_mb="1", per_hour="2")
    alice, bob, dave = add_user(d, "alice"), add_user(d, "bob"), add_user(d, "dave")
    admin = cli("league", "user", "add", "root", "--admin", "-C", str(d)).strip().splitlines()[-1]
    for house in ("random-py", "strong"):  # two active bots: games are played
        cli("league", "bot", "add", str(BOTS / house), "--owner", "alice", "-C", str(d))
    db = Database(f"sqlite:///{d / 'league.sqlite'}")
    with db.write() as conn:
        secret = fleet.worker_secret(conn)
        sha = roster.version(conn, 1).archive_sha256
    db.dispose()
    gz = {"Content-Type": "application/gzip"}

    with Server(d) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        # a client without the server's OpenAPI hook: the description is checked by the test
        # below, answer by answer, so one gap does not hide the others

        def expect(status: int, method: str, path: str, field: str | None = None, **kw) -> dict:
            resp = c.request(method, path, **kw)
            assert resp.status_code == status, (method, path, resp.status_code, resp.text)
            body = (
                resp.json() if resp.headers["content-type"].startswith("application/json") else {}
            )
            if status >= 400:
                assert body["error"]["status"] == status and body["error"]["field"] == field, body
            seen.append(Answer(method, resp.request.url.path, status, body))
            return body

        expect(200, "GET", "/api/v1")
        expect(200, "GET", "/api/v1/openapi.json")
        expect(401, "GET", "/api/v1/me")
        expect(401, "GET", "/api/v1/me", headers={"Authorization": "Basic x"})
        expect(401, "GET", "/api/v1/me", headers=_auth("wrong"))
        expect(200, "GET", "/api/v1/me", headers=_auth(alice))

        expect(200, "GET", "/api/v1/leaderboard/stripes")
        expect(404, "GET", "/api/v1/leaderboard/chess", "variant")
        expect(422, "GET", "/api/v1/leaderboard/stripes?limit=0", "limit")
        expect(422, "GET", "/api/v1/leaderboard/stripes?all=perhaps", "all")
        expect(200, "GET", "/api/v1/bots")
        expect(422, "GET", "/api/v1/bots?offset=-1", "offset")

        # uploads: every refusal docs/league.md lists (dave has submitted nothing: alice's
        # house bots count against her hourly rate)
        bots = "/api/v1/bots"
        expect(401, "POST", bots, content=b"x", headers=gz)
        expect(415, "POST", bots, "archive", content=b"x", headers={**_auth(dave)})
        expect(
            415,
            "POST",
            bots,
            "archive",
            content=b"x",
            headers={**_auth(dave), "Content-Type": "text/plain"},
        )
        expect(422, "POST", bots, "archive", content=b"", headers={**_auth(dave), **gz})
        expect(
            422,
            "POST",
            bots,
            "archive",
            headers=_auth(dave),
            data={"other": "field"},
            files={"x": ("x", b"x")},
        )
        expect(
            400, "POST", bots, "archive", content=b"not an archive", headers={**_auth(dave), **gz}
        )
        expect(
            413,
            "POST",
            bots,
            "archive",
            content=b"\0" * ((1 << 20) + 1000),
            headers={**_auth(dave), **gz},
        )
        expect(
            422,
            "POST",
            bots,
            "archive",
            content=_tar({"x.py": b""}),
            headers={**_auth(dave), **gz},
        )
        bad_manifest = _tar({"bot.toml": b'name = "x"\n', "bot.py": b""})  # no command
        expect(422, "POST", bots, "bot.toml", content=bad_manifest, headers={**_auth(dave), **gz})
        expect(
            403,
            "POST",
            bots,
            "name",
            content=pack_bot_dir(BOTS / "random-py"),
            headers={**_auth(bob), **gz},
        )
        expect(
            202,
            "POST",
            bots,
            content=_renamed(tmp_path / "a", "mine"),
            headers={**_auth(bob), **gz},
        )
        expect(
            202,
            "POST",
            bots,
            content=_renamed(tmp_path / "b", "mine"),
            headers={**_auth(bob), **gz},
        )
        expect(
            429,
            "POST",
            bots,
            content=_renamed(tmp_path / "c", "mine"),
            headers={**_auth(bob), **gz},
        )

        expect(200, "GET", "/api/v1/bots/random-py")
        expect(404, "GET", "/api/v1/bots/nobody")
        version = "/api/v1/bots/random-py/versions"
        expect(200, "GET", f"{version}/1")
        expect(200, "GET", f"{version}/1", headers=_auth(alice))
        expect(401, "GET", f"{version}/1", headers=_auth("wrong"))
        expect(404, "GET", f"{version}/9")
        expect(422, "GET", f"{version}/x", "number")

        for what, name in (("bots", "random-py"), ("users", "bob")):
            path = f"/api/v1/{what}/{name}/disable"
            expect(401, "POST", path)
            expect(403, "POST", path, headers=_auth(alice))
            expect(404, "POST", f"/api/v1/{what}/nobody/disable", headers=_auth(admin))
            expect(422, "POST", path + "?enable=perhaps", "enable", headers=_auth(admin))
            expect(200, "POST", path, headers=_auth(admin))
            expect(200, "POST", path + "?enable=true", headers=_auth(admin))

        expect(200, "GET", "/api/v1/games")
        expect(400, "GET", "/api/v1/games?result=win", "result")
        expect(404, "GET", "/api/v1/games?bot=nobody", "bot")
        expect(404, "GET", "/api/v1/games?variant=chess", "variant")
        expect(422, "GET", "/api/v1/games?bot=random-py&result=perhaps", "result")
        expect(422, "GET", "/api/v1/games?limit=201", "limit")
        for tail in ("", "/record"):
            expect(404, "GET", f"/api/v1/games/999{tail}")
            expect(422, "GET", f"/api/v1/games/x{tail}", "game_id")
        expect(401, "GET", "/api/v1/games/1/logs")
        expect(404, "GET", "/api/v1/games/999/logs", headers=_auth(alice))
        expect(422, "GET", "/api/v1/games/x/logs", "game_id", headers=_auth(alice))
        expect(200, "GET", "/api/v1/queue")
        expect(422, "GET", "/api/v1/queue?limit=x", "limit")
        expect(200, "GET", "/api/v1/workers")

        archive = f"/api/v1/worker/archives/{sha}"
        expect(401, "GET", archive)
        expect(401, "GET", archive, headers=_auth("wrong"))
        assert c.get(archive, headers=_auth(secret)).status_code == 200
        expect(404, "GET", "/api/v1/worker/archives/" + "0" * 64, headers=_auth(secret))
        expect(404, "GET", "/api/v1/worker/archives/nothex", headers=_auth(secret))
        # the league's own fault: an archive whose bytes no longer match their name on disk
        blobs = BlobStore(d / "archives")
        bad = blobs.put(b"a stored archive")
        blobs.path(bad).write_bytes(b"bit rot")
        expect(500, "GET", f"/api/v1/worker/archives/{bad}", headers=_auth(secret))

        # games played by now (the house bot and the submissions): a record, a game, its logs
        server.wait_for(
            lambda: c.get("/api/v1/games").json()["items"], timeout=180, what="a finished game"
        )
        gid = c.get("/api/v1/games").json()["items"][0]["id"]
        expect(200, "GET", f"/api/v1/games/{gid}")
        expect(200, "GET", f"/api/v1/games/{gid}/record")
        expect(200, "GET", f"/api/v1/games/{gid}/logs", headers=_auth(admin))
        carol = add_user(d, "carol")
        expect(403, "GET", f"/api/v1/games/{gid}/logs", headers=_auth(carol))
        return seen


def test_every_status_each_endpoint_answers_is_described(answers: list[Answer]) -> None:
    """Each answer's status is in its operation's `responses` of the served description, and
    its JSON body matches that response's schema."""
    (spec,) = [a.body for a in answers if a.path == "/api/v1/openapi.json"]  # as served
    checker = OpenAPIChecker(spec)
    gaps = []
    for a in answers:
        try:
            checker.check(a.method, a.path, a.status, a.body)
        except AssertionError as e:
            gaps.append(str(e).splitlines()[0])
        except Exception as e:  # a body that does not match its schema
            gaps.append(f"{a.method} {a.path} {a.status}: {str(e).splitlines()[0]}")
    assert gaps == [], "\n".join(sorted(set(gaps)))
    assert checker.checked > 60


def test_the_docs_tell_a_client_every_refusal(answers: list[Answer]) -> None:
    """docs/league.md, read as a client writer reads it: every refusal of an upload is a row
    of its table (status and field), the oversize message is the server's, and the other
    endpoints' error fields are named."""
    docs = (ROOT / "docs" / "league.md").read_text()
    section = docs.split("Every refusal of an upload is a JSON error", 1)
    assert len(section) == 2, "docs/league.md has no table of upload refusals"
    rows = re.findall(r"^\| (\d{3}) \| (?:`([^`]+)`|null) \|", section[1].split("\n\n", 2)[1], re.M)
    table = {(int(status), field or None) for status, field in rows}
    for a in answers:
        if a.method == "POST" and a.path == "/api/v1/bots" and a.status >= 400:
            err = a.body["error"]
            assert (a.status, err["field"]) in table, (a.status, err)
            if a.status == 413:
                assert re.sub(r"\d+", "N", err["message"]) in docs, err["message"]
    others = {
        (a.status, a.body["error"]["field"])
        for a in answers
        if a.path == "/api/v1/games" and a.status >= 400 and a.body["error"]["field"] != "limit"
    }
    assert others == {(400, "result"), (404, "bot"), (404, "variant"), (422, "result")}
    api = docs.split("## The JSON API (v1)", 1)[1]
    for status, field in others:
        assert re.search(rf"{status}[^|]*?field: \"{field}\"", api) or (status == 422), (
            status,
            field,
        )
    assert "415" in api or "415" in section[1]
