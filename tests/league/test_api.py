"""The JSON API over a real database on both backends, through Starlette's TestClient on trio:
status codes (401, 403, 404, 413, 415, 422, 429) with JSON errors naming the field, pagination,
owner-only logs, admin-only actions, submissions (good, malicious, someone else's name)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena.league.archives import pack_bot_dir
from arena.league.db import ledger
from arena.league.db.database import Database
from arena.league.db.schema import GameKind, games
from arena.league.service import League
from arena.league.settings import settings_from_dict
from arena.league.web.app import create_app
from arena.league.web.openapi import openapi

from .support import BOTS, OpenAPIChecker, database_fixtures

url, db = database_fixtures()


class World:
    """A league with three accounts, two house bots and a few recorded games."""

    def __init__(self, db: Database, root: Path) -> None:
        self.settings = settings_from_dict(
            {"database": db.url, "games": ["stripes", "papagra"], "submissions": {"per_hour": 3}},
            root=root,
        )
        self.db = db
        self.league = League(self.settings, self.db)
        self.alice, self.alice_token = self.league.add_user("alice")
        self.bob, self.bob_token = self.league.add_user("bob")
        self.admin, self.admin_token = self.league.add_user("root", is_admin=True)
        self.va = self.league.add_house_bot("alice", BOTS / "random-py")
        self.vb = self.league.add_house_bot("bob", BOTS / "strong")
        self.games = []
        for i, winner in enumerate([0, 1, None, 0]):
            with self.db.write() as conn:
                v0, v1 = (self.va.id, self.vb.id) if i % 2 == 0 else (self.vb.id, self.va.id)
                gid = ledger.create_game(
                    conn,
                    ledger.NewGame(GameKind.RATED, "stripes", "stripes", {}, i, (), {}, v0, v1),
                )
                ledger.claim_game(conn, gid)
                ledger.record_result(
                    conn,
                    gid,
                    1,
                    {
                        "format": "arena-record/1",
                        "result": {"winner": winner, "reason": "score"},
                        "stderr": [f"stderr of seat 0 in {gid}", f"stderr of seat 1 in {gid}"],
                        "logs": [
                            {"seat": 0, "t": 0.0, "message": "s0"},
                            {"seat": 1, "t": 0.0, "message": "s1"},
                        ],
                    },
                )
            self.games.append(gid)


@pytest.fixture
def world(db, tmp_path):
    return World(db, tmp_path)


@pytest.fixture
def client(world):
    """A client whose every answer is validated against the OpenAPI description."""
    checker = OpenAPIChecker(openapi())
    with TestClient(create_app(world.league), backend="trio") as c:
        c.event_hooks = {"request": [], "response": [checker.hook]}
        yield c
    assert checker.checked > 0


def test_the_openapi_description_is_served_and_sound(client):
    """Every schema is valid JSON Schema 2020-12, every $ref resolves, every path parameter is
    declared, and every API route of the app is described (and nothing else); pages for people
    may be described too."""
    import json
    import re

    import jsonschema

    doc = client.get("/api/v1/openapi.json").json()
    assert doc == json.loads(json.dumps(openapi())) and doc["openapi"].startswith("3.1")
    for schema in doc["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)
    for ref in re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', json.dumps(doc)):
        assert ref in doc["components"]["schemas"]
    for template, ops in doc["paths"].items():
        for op in ops.values():
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == set(re.findall(r"{([^}]+)}", template)), template
    app = client.app
    routes = {
        (r.path, m.lower())
        for r in app.routes
        if r.path.startswith("/api/")
        for m in r.methods
        if m != "HEAD"
    }
    described = {(t, m) for t, ops in doc["paths"].items() for m in ops if t.startswith("/api/")}
    assert routes == described
    pages = {(r.path, m.lower()) for r in app.routes for m in getattr(r, "methods", ()) or ()}
    assert {(t, m) for t, ops in doc["paths"].items() for m in ops} <= pages


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def error(resp, status: int, field: str | None = None) -> str:
    assert resp.status_code == status, resp.text
    body = resp.json()["error"]
    assert body["status"] == status and body["field"] == field
    return body["message"]


def test_status_and_identity(client, world):
    data = client.get("/api/v1").json()
    assert [v["label"] for v in data["variants"]] == ["stripes", "papagra"]
    assert data["games"] == {"finished": 4}
    assert client.get("/api/v1/me", headers=auth(world.alice_token)).json() == {
        "name": "alice",
        "admin": False,
    }


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"}]
)
def test_a_missing_or_wrong_token_is_401(client, headers):
    resp = client.get("/api/v1/me", headers=headers)
    error(resp, 401)
    assert resp.headers["www-authenticate"] == "Bearer"
    error(client.post("/api/v1/bots", headers=headers, content=b"x"), 401)


def test_a_disabled_account_is_refused(client, world):
    world.league.set_user_disabled_sync("bob", True)
    error(client.get("/api/v1/me", headers=auth(world.bob_token)), 401)


def test_leaderboard_and_pagination(client):
    data = client.get("/api/v1/leaderboard/stripes").json()
    assert [r["rank"] for r in data["items"]] == [1, 2]
    assert {r["bot"] for r in data["items"]} == {"random-py", "strong"}
    assert all(r["games"] == 4 for r in data["items"])
    assert data["items"][0]["rating"] >= data["items"][1]["rating"]
    page = client.get("/api/v1/leaderboard/stripes", params={"limit": 1}).json()
    assert page["next"] == 1 and len(page["items"]) == 1
    last = client.get("/api/v1/leaderboard/stripes", params={"limit": 1, "offset": 1}).json()
    assert last["items"][0]["rank"] == 2
    assert client.get("/api/v1/leaderboard/papagra").json()["items"][0]["games"] == 0
    error(client.get("/api/v1/leaderboard/chess"), 404, "variant")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"offset": -1}, "offset"),
        ({"result": "lost"}, "result"),
        ({"bot": "random-py", "result": "maybe"}, "result"),
    ],
)
def test_malformed_parameters_are_422_naming_the_field(client, params, field):
    error(client.get("/api/v1/games", params=params), 422, field)


def test_games_filtered_by_bot_and_result(client, world):
    g = world.games
    all_ids = [x["id"] for x in client.get("/api/v1/games").json()["items"]]
    assert all_ids == g[::-1]
    wins = client.get("/api/v1/games", params={"bot": "random-py", "result": "win"}).json()
    # random-py sits first in even games: wins game 0 (seat 0 won) and game 1 (seat 1 won)
    assert [x["id"] for x in wins["items"]] == [g[1], g[0]]
    draws = client.get("/api/v1/games", params={"bot": "strong", "result": "draw"}).json()
    assert [x["id"] for x in draws["items"]] == [g[2]]
    error(client.get("/api/v1/games", params={"bot": "nobody"}), 404, "bot")
    error(client.get("/api/v1/games", params={"result": "win"}), 400, "result")
    game = client.get(f"/api/v1/games/{g[0]}").json()
    assert game["seats"][0]["bot"] == "random-py" and game["result"] == "1-0"
    error(client.get("/api/v1/games/999999"), 404)
    error(client.get("/api/v1/games/abc"), 422, "game_id")


def test_records_are_public_but_stderr_and_logs_are_the_owners(client, world):
    gid = world.games[0]  # random-py (alice) in seat 0, strong (bob) in seat 1
    record = client.get(f"/api/v1/games/{gid}/record").json()
    assert record["format"] == "arena-record/1"
    # left out, not blanked: a client cannot mistake them for an empty stderr
    assert "stderr" not in record and "logs" not in record
    error(client.get(f"/api/v1/games/{gid}/logs"), 401)
    mine = client.get(f"/api/v1/games/{gid}/logs", headers=auth(world.alice_token)).json()
    assert [(s["seat"], s["bot"]) for s in mine["seats"]] == [(0, "random-py")]
    assert mine["seats"][0]["stderr"] == f"stderr of seat 0 in {gid}"
    assert [e["message"] for e in mine["seats"][0]["logs"]] == ["s0"]
    bobs = client.get(f"/api/v1/games/{gid}/logs", headers=auth(world.bob_token)).json()
    assert [s["seat"] for s in bobs["seats"]] == [1]
    both = client.get(f"/api/v1/games/{gid}/logs", headers=auth(world.admin_token)).json()
    assert [s["seat"] for s in both["seats"]] == [0, 1]
    _, carol = world.league.add_user("carol")
    error(client.get(f"/api/v1/games/{gid}/logs", headers=auth(carol)), 403)


def test_bots_and_versions(client):
    bots = client.get("/api/v1/bots").json()["items"]
    assert [(b["name"], b["owner"], b["latest_version"]) for b in bots] == [
        ("random-py", "alice", 1),
        ("strong", "bob", 1),
    ]
    bot = client.get("/api/v1/bots/strong").json()
    assert [v["state"] for v in bot["versions"]] == ["active"]
    v = client.get("/api/v1/bots/strong/versions/1").json()
    assert v["validation"]["passed"] is True
    assert {r["variant"] for r in v["ratings"]} == {"stripes", "papagra"}
    error(client.get("/api/v1/bots/nobody"), 404)
    error(client.get("/api/v1/bots/strong/versions/7"), 404)
    error(client.get("/api/v1/bots/strong/versions/x"), 422, "number")


def test_admins_disable_bots_others_cannot(client, world):
    error(client.post("/api/v1/bots/strong/disable", headers=auth(world.bob_token)), 403)
    ok = client.post("/api/v1/bots/strong/disable", headers=auth(world.admin_token))
    assert ok.status_code == 200
    board = client.get("/api/v1/leaderboard/stripes").json()["items"]
    assert [r["bot"] for r in board] == ["random-py"]
    assert client.get("/api/v1/bots/strong").json()["disabled"] is True
    error(client.post("/api/v1/users/bob/disable", headers=auth(world.alice_token)), 403)
    assert client.post("/api/v1/users/bob/disable", headers=auth(world.admin_token)).is_success
    error(client.get("/api/v1/me", headers=auth(world.bob_token)), 401)


def renamed_bot(tmp_path: Path, source: str, name: str) -> bytes:
    import shutil

    d = tmp_path / name
    shutil.copytree(BOTS / source, d)
    manifest = d / "bot.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace(f'name = "{source}"', f'name = "{name}"'))
    assert f'name = "{name}"' in manifest.read_text()
    return pack_bot_dir(d)


def test_a_submission_becomes_a_validating_version(client, world, tmp_path):
    data = renamed_bot(tmp_path, "random-py", "alices-bot")
    resp = client.post(
        "/api/v1/bots",
        headers={**auth(world.alice_token), "Content-Type": "application/gzip"},
        content=data,
    )
    assert resp.status_code == 202, resp.text
    answer = resp.json()
    # the pages' word: waiting behind other validations (nothing validates in this test)
    assert (answer["bot"], answer["version"], answer["state"]) == ("alices-bot", 1, "queued")
    assert answer["status"] == "queued"
    v = client.get(answer["url"]).json()
    assert v["state"] == "queued" and v["validation"] is None
    stored = world.settings.archives_dir.rglob(v["archive_sha256"])
    assert len(list(stored)) == 1
    # the same name as a multipart form: version 2
    resp = client.post(
        "/api/v1/bots",
        headers=auth(world.alice_token),
        files={"archive": ("bot.tar.gz", data, "application/gzip")},
    )
    assert resp.status_code == 202 and resp.json()["version"] == 2
    # someone else's name
    taken = renamed_bot(tmp_path / "b", "random-py", "alices-bot")
    resp = client.post(
        "/api/v1/bots",
        headers={**auth(world.bob_token), "Content-Type": "application/gzip"},
        content=taken,
    )
    error(resp, 403, "name")


def test_refused_submissions_say_why(client, world, tmp_path):
    headers = {**auth(world.alice_token), "Content-Type": "application/gzip"}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, body in (
            ("bot.toml", b'name = "x"\ncommand = "python3 bot.py"\n'),
            ("../evil", b"!"),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    msg = error(
        client.post("/api/v1/bots", headers=headers, content=buf.getvalue()), 422, "archive"
    )
    assert "../evil" in msg
    error(client.post("/api/v1/bots", headers=headers, content=b"not an archive"), 400, "archive")
    error(
        client.post(
            "/api/v1/bots",
            headers={**auth(world.alice_token), "Content-Type": "text/plain"},
            content=b"x",
        ),
        415,
        "archive",
    )
    big = b"\0" * ((world.settings.submissions.max_archive_mb << 20) + (1 << 17))
    error(client.post("/api/v1/bots", headers=headers, content=big), 413, "archive")
    assert not list(world.settings.bots_dir.glob(".incoming-*"))


def test_submissions_are_rate_limited_per_account(client, world, tmp_path):
    headers = {**auth(world.bob_token), "Content-Type": "application/gzip"}
    data = renamed_bot(tmp_path, "random-py", "bobs-bot")
    for _ in range(2):  # bob's house bot counts as one of the 3 per hour
        assert client.post("/api/v1/bots", headers=headers, content=data).status_code == 202
    error(client.post("/api/v1/bots", headers=headers, content=data), 429)


def test_games_are_listed_newest_first_by_the_time_they_finished(client, world):
    """Two games scheduled in one order and finished in the other: the list (and a bot's, and
    a variant's) shows the one that finished last first, as docs/league.md says."""
    new = ledger.NewGame(
        GameKind.RATED, "stripes", "stripes", {}, 9, (), {}, world.va.id, world.vb.id
    )
    with world.db.write() as conn:
        early, late = ledger.create_game(conn, new), ledger.create_game(conn, new)
        for gid, finished in (
            (late, "2099-01-01T00:00:00.000Z"),
            (early, "2099-01-01T00:00:01.000Z"),
        ):
            ledger.claim_game(conn, gid)
            record = {"format": "arena-record/1", "result": {"winner": 0, "reason": "score"}}
            assert ledger.record_result(conn, gid, 1, record)
            # the later-scheduled game finished first (set, not waited for)
            conn.execute(games.update().where(games.c.id == gid).values(finished_at=finished))
    world.league.cache.changed()
    for query in ("", "?bot=random-py", "?variant=stripes"):
        items = client.get(f"/api/v1/games{query}").json()["items"]
        assert [g["id"] for g in items[:2]] == [early, late], query
        stamps = [g["finished_at"] for g in items]
        assert stamps == sorted(stamps, reverse=True), query
