"""The submit page and a submission's status page: login required, CSRF checked, the API's
refusals in words on the form, the status stream's content, every report text escaped."""

from __future__ import annotations

import io
import json
import re
import tarfile

import pytest
from starlette.testclient import TestClient

from arena.league.archives import pack_bot_dir
from arena.league.db import roster, schema

from .support import BOTS, csrf_of, login, page_client, sqlite_league

EVIL = "<script>alert(1)</script>"


@pytest.fixture
def site(tmp_path):
    with (
        sqlite_league(tmp_path, submissions={"max_archive_mb": 1}) as league,
        page_client(league) as client,
    ):
        _user, token = league.add_user("alice")
        _other, other_token = league.add_user("bob")
        yield client, league, token, other_token


def post_archive(client: TestClient, data: bytes, csrf: str | None = None, **kw):
    if csrf is None:
        csrf = csrf_of(client.get("/submit").text)
    files = {"archive": ("bot.tar.gz", data, "application/gzip")}
    return client.post("/submit", data={"csrf": csrf}, files=files, follow_redirects=False, **kw)


def bot_archive(name: str = "random-py") -> bytes:
    return pack_bot_dir(BOTS / name)


def renamed_archive(name: str) -> bytes:
    """bots/random-py under another manifest name."""
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(bot_archive()), mode="r:gz") as src,
        tarfile.open(fileobj=out, mode="w:gz") as dst,
    ):
        for member in src.getmembers():
            data = src.extractfile(member).read() if member.isfile() else None
            if member.name.endswith("bot.toml"):
                text = re.sub(r'(?m)^name = ".*"$', f"name = {json.dumps(name)}", data.decode())
                data = text.encode()
                member.size = len(data)
            dst.addfile(member, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if "event" in lines:
            out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_the_submit_page_needs_a_login(site):
    client, *_ = site
    resp = client.get("/submit", follow_redirects=False)
    assert resp.status_code == 303 and resp.headers["location"] == "/login?next=/submit"
    resp = client.post("/submit", data={"csrf": "x"}, follow_redirects=False)
    assert resp.status_code == 303 and resp.headers["location"].startswith("/login")


def test_a_submission_goes_to_its_status_page_queued(site):
    client, league, token, _ = site
    login(client, token)
    page = client.get("/submit")
    assert page.status_code == 200 and 'enctype="multipart/form-data"' in page.text
    resp = post_archive(client, bot_archive())
    assert resp.status_code == 303
    url = resp.headers["location"]
    assert re.fullmatch(r"/submissions/\d+", url)
    status = client.get(url)
    assert "random-py version 1" in status.text
    assert 'data-state="queued"' in status.text
    assert 'http-equiv="refresh"' in status.text  # inside <noscript>: the page works without JS
    assert 'data-events="' + url + '/events"' in status.text
    # the validator picks it up: the page says so
    league.validations.current = int(url.rsplit("/", 1)[1])
    league.validations.step = "game 1 of 2: stripes as red against the random bot"
    page = client.get(url).text
    assert 'data-state="validating"' in page
    assert "Now: game 1 of 2: stripes as red against the random bot." in page


def test_the_form_refuses_a_missing_or_stale_csrf_token(site):
    client, league, token, _ = site
    login(client, token)
    resp = post_archive(client, bot_archive(), csrf="forged")
    assert resp.status_code == 403 and "stale or came from another site" in resp.text
    resp = post_archive(client, bot_archive(), headers={"Origin": "http://evil.example"})
    assert resp.status_code == 403
    assert league.read_sync(roster.versions_in_state, schema.VersionState.VALIDATING) == []


def test_upload_errors_come_back_on_the_form_in_words(site):
    client, _, token, other_token = site
    login(client, token)
    # not an archive
    resp = post_archive(client, b"this is not an archive at all")
    assert resp.status_code == 400 and "not a tar.gz, tar or zip archive" in resp.text
    assert 'id="archive"' in resp.text  # the form is shown again
    # no file chosen
    csrf = csrf_of(client.get("/submit").text)
    resp = client.post(
        "/submit",
        data={"csrf": csrf},
        files={"archive": ("", b"", "application/octet-stream")},
        follow_redirects=False,
    )
    assert resp.status_code == 422 and "choose a bot archive" in resp.text
    # too big for this league (1 MB)
    resp = post_archive(client, b"\0" * (3 << 20))
    assert resp.status_code == 413 and "larger than this league" in resp.text
    # a manifest name that is someone else's
    assert post_archive(client, bot_archive()).status_code == 303
    client.cookies.clear()
    login(client, other_token)
    resp = post_archive(client, bot_archive())
    assert resp.status_code == 403 and "belongs to another user" in resp.text
    # a hostile name is refused, and escaped in the refusal
    resp = post_archive(client, renamed_archive(EVIL))
    assert resp.status_code == 422 and EVIL not in resp.text and "&lt;script&gt;" in resp.text


def test_the_rate_limit_is_told_on_the_form(site, tmp_path):
    client, league, token, _ = site
    league.settings.submissions.__dict__["per_hour"] = 1  # frozen dataclass: a test-only poke
    login(client, token)
    assert post_archive(client, bot_archive()).status_code == 303
    resp = post_archive(client, bot_archive())
    assert resp.status_code == 429 and "allows 1 per hour" in resp.text


def test_the_status_stream_sends_the_final_report_escaped_and_ends(site):
    client, league, token, _ = site
    login(client, token)
    url = post_archive(client, bot_archive()).headers["location"]
    vid = int(url.rsplit("/", 1)[1])
    report = {
        "passed": False,
        "stage": "games",
        "problem": f"crashed: {EVIL}",
        "games": [
            {
                "variant": "stripes",
                "options": {},
                "seat": 0,
                "colour": "dark",
                "passed": False,
                "reason": "crash",
                "problem": f"crashed {EVIL}",
                "turns": 3,
                "stderr_tail": "<b>bold</b> <img src=x onerror=alert(2)>\n<iframe src=//evil>",
                "inconclusive": False,
            }
        ],
        # the failing game's stderr, as validation makes it; the page shows it once
        "stderr_tail": "<b>bold</b> <img src=x onerror=alert(2)>\n<iframe src=//evil>",
        "warnings": [EVIL],
    }
    assert league.finish_validation_sync(vid, report)
    resp = client.get(url + "/events")
    assert resp.headers["content-type"].startswith("text/event-stream")
    got = events(resp.text)
    assert [name for name, _ in got] == ["status", "end"]
    status = got[0][1]
    assert status["state"] == "rejected"
    html = status["html"]
    assert "<script>" not in html and "<img" not in html and "<iframe" not in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html and "&lt;iframe" in html
    assert html.count("&lt;img src=x onerror=alert(2)&gt;") == 1
    page = client.get(url).text
    assert EVIL not in page and 'data-state="rejected"' in page
    assert 'http-equiv="refresh"' not in page  # final: nothing to follow


def test_unknown_submissions_are_404(site):
    client, *_ = site
    assert client.get("/submissions/999").status_code == 404
    assert client.get("/submissions/999/events").status_code == 404
    assert client.get("/submissions/abc").status_code == 404
