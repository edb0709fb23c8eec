"""The cross-site request forgery guard, which every page and every form handler shares.

Every state-changing form carries the session's CSRF token in a hidden `csrf` field and its
handler calls `check_csrf`, which also refuses a cross-origin `Origin` header. SameSite=Lax
alone would stop most forgeries; the token covers old browsers and same-site subdomains.

It sits apart from `auth` (who is logged in) because `render` puts the token in every page and
`auth` renders the login page: kept in `auth`, the two would import each other.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlsplit

from starlette.datastructures import FormData
from starlette.requests import Request

from arena.league.errors import LeagueError


def csrf_token(request: Request) -> str:
    """The token forms must echo; made lazily so anonymous visitors get one for the login form."""
    token = request.session.get("csrf")
    if not token:
        token = secrets.token_urlsafe(24)
        request.session["csrf"] = token
    return token


def same_origin(request: Request) -> bool:
    """Whether the browser says the request comes from this site's own pages (a missing
    `Origin` header counts: old browsers and same-origin GETs send none)."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    o = urlsplit(origin)
    return (o.netloc or "").lower() == (request.headers.get("host") or "").lower()


async def check_csrf(request: Request) -> FormData:
    """The request's form, once its CSRF token and origin are checked (403 otherwise)."""
    form = await request.form()
    sent = form.get("csrf")
    expected = request.session.get("csrf")
    if (
        not isinstance(sent, str)
        or not expected
        or not hmac.compare_digest(sent.encode(), str(expected).encode())
        or not same_origin(request)
    ):
        raise LeagueError(
            "this form is stale or came from another site; reload and retry", status=403
        )
    return form
