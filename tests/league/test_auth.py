"""Logging in to the pages: the session cookie's flags, the CSRF guard on every form, no open
redirect, and a disabled account logged out at its next request."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from arena.league.web.auth import COOKIE

from .support import csrf_of, login, page_client, sqlite_league


@pytest.fixture
def site(tmp_path):
    with sqlite_league(tmp_path) as league, page_client(league) as client:
        _user, token = league.add_user("alice")
        yield client, league, token


def test_login_sets_an_httponly_samesite_cookie_and_greets_the_user(site):
    client, _, token = site
    resp = login(client, token, "/workers")
    assert resp.headers["location"] == "/workers"
    cookie = resp.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "httponly" in cookie.lower()
    assert "samesite=lax" in cookie.lower()
    page = client.get("/login")
    assert "alice" in page.text and 'action="/logout"' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]


def test_a_wrong_token_is_refused_on_the_form(site):
    client, _, _ = site
    resp = login(client, "not-a-token", expect=401)
    assert "unknown or disabled token" in resp.text
    assert COOKIE not in client.cookies or "uid" not in resp.text


@pytest.mark.parametrize("target", ["//evil.example/x", "https://evil.example", "/\\evil"])
def test_login_never_redirects_off_the_site(site, target):
    client, _, token = site
    resp = login(client, token, target)
    assert resp.headers["location"] == "/"


def test_forms_without_the_csrf_token_or_from_another_origin_are_refused(site):
    client, _, token = site
    login(client, token)
    csrf = csrf_of(client.get("/login").text)
    assert client.post("/logout", data={}, follow_redirects=False).status_code == 403
    assert client.post("/logout", data={"csrf": "x" + csrf}).status_code == 403
    evil = client.post("/logout", data={"csrf": csrf}, headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403 and "another site" in evil.text
    # a fresh client (another browser) has no session, so a copied token is worthless
    with TestClient(client.app, base_url="http://league.test", backend="trio") as other:
        assert other.post("/logout", data={"csrf": csrf}).status_code == 403
    ok = client.post("/logout", data={"csrf": csrf}, follow_redirects=False)
    assert ok.status_code == 303
    assert 'action="/logout"' not in client.get("/login").text


def test_a_disabled_account_is_logged_out_at_its_next_request(site):
    client, league, token = site
    login(client, token)
    assert 'action="/logout"' in client.get("/login").text
    league.set_user_disabled_sync("alice", True)
    assert 'action="/logout"' not in client.get("/login").text
    login(client, token, expect=401)


def test_pages_answer_errors_as_pages_and_the_api_as_json(site):
    client, _, _ = site
    page = client.get("/no-such-page")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    api = client.get("/api/v1/no-such")
    assert api.status_code == 404 and api.json()["error"]["status"] == 404
