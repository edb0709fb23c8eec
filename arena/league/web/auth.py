"""Who is looking at a page: the login session, its epoch, login and logout.

People log in with their API token (the same one the CLI and the API use; there are no
passwords to leak). The session is Starlette's signed cookie (itsdangerous), HttpOnly and
SameSite=Lax, holding only the user's id, the account's session epoch and a random CSRF token;
the signing key is made on first use and kept in the league database, so every server process
of one league accepts the same cookies and a restart logs nobody out.

A signed cookie is valid until it expires wherever it was copied to, so ending a session is
the server's business: each account has a `session_epoch` in the database, a session is good
only while the epoch it carries is the account's, and logout, a new API token and disabling
the account bump it, which ends EVERY session of that account at once, on every server
process. We chose an epoch over a table of sessions because the user is looked up on every
request anyway (so the check costs no query), nothing has to be pruned, and "log out
everywhere" is what a person who logs out of a shared or stolen browser wants; the price is
that logging out on one device logs out the others too.

The CSRF guard every form handler calls (`check_csrf`) lives in `session`, which `render`
shares: this module renders the login page, so the guard cannot live here.
"""

from __future__ import annotations

import secrets

from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.league.errors import LeagueError
from arena.league.service import League, User
from arena.league.web.render import render
from arena.league.web.session import check_csrf

COOKIE = "arena_session"
#: a login lasts this long without a visit
MAX_AGE = 14 * 24 * 3600


def session_middleware(league: League, *, https_only: bool = False) -> Middleware:
    return Middleware(
        SessionMiddleware,
        secret_key=league.session_secret_sync(),
        session_cookie=COOKIE,
        max_age=MAX_AGE,
        same_site="lax",
        https_only=https_only,
    )


def _league(request: Request) -> League:
    return request.app.state.league


async def current_user(request: Request) -> User | None:
    """The logged-in user, looked up once per request (`request.state.user` remembers it)."""
    if hasattr(request.state, "user"):
        return request.state.user
    user = None
    uid = request.session.get("uid")
    if isinstance(uid, int):
        user = await _league(request).user(uid)
        if user is None or user.disabled or request.session.get("epoch") != user.session_epoch:
            request.session.pop("uid", None)
            request.session.pop("epoch", None)
            user = None
    request.state.user = user
    return user


async def require_user(request: Request) -> User:
    """The logged-in user, or 401 (pages turn it into a redirect to the login form)."""
    user = await current_user(request)
    if user is None:
        raise LeagueError("log in first", status=401)
    return user


def _safe_next(target: str | None) -> str:
    """Only local paths: a login must not become an open redirect."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


async def login_page(request: Request) -> Response:
    await current_user(request)
    return render(request, "login.html", next=_safe_next(request.query_params.get("next")))


async def login(request: Request) -> Response:
    form = await check_csrf(request)
    token = str(form.get("token") or "").strip()
    target = _safe_next(str(form.get("next") or "/"))
    user = await _league(request).token_user(token) if token else None
    if user is None or user.disabled:
        return render(
            request, "login.html", status=401, next=target, error="unknown or disabled token"
        )
    request.session.clear()
    request.state.user = user
    request.session["uid"] = user.id
    request.session["epoch"] = user.session_epoch
    request.session["csrf"] = secrets.token_urlsafe(24)
    return RedirectResponse(target, status_code=303)


async def logout(request: Request) -> Response:
    """Ends every session of the account on the server (the cookie alone would stay valid
    wherever it was copied), then this one's cookie."""
    await check_csrf(request)
    user = await current_user(request)
    if user is not None:
        await _league(request).end_sessions(user)
    request.session.clear()
    return RedirectResponse("/", status_code=303)


def auth_routes() -> list[Route]:
    return [
        Route("/login", login_page),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
    ]
