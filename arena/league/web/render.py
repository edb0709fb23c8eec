"""Pages from templates: one Jinja2 environment, one layout, one set of security headers.

Every page goes through `render`, so every page is autoescaped (bot names, logs and stderr are
hostile), knows who is logged in, carries the CSRF token for its forms, and is sent with a
Content-Security-Policy that allows scripts and styles from this server only: even if some
value slipped past the escaping, no inline script would run. Static files (the league's CSS and
the shared replay viewer's JS/CSS, the favicon) are served by `static_routes`, never from a CDN.

Two filters keep the pages saying things one way: `when` writes every timestamp in one format
("2026-01-31 12:34 UTC") inside a `<time datetime>` that machines read, and `words` writes a
reason code (a game's end, a voided attempt's kind) in the words of the one table beside the
codes (arena.referee.outcome.REASON_WORDS, arena.league.db.schema.VOID_WORDS). `reason_words`,
which the games tables of every page call, says how a game ended in the referee's own words.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from arena.league.db.schema import VOID_WORDS
from arena.league.web.session import csrf_token
from arena.referee.channel import STDERR_SEPARATOR
from arena.referee.outcome import reason_text
from arena.viewer import static_path as viewer_static_path

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "object-src 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def static_dir() -> Path:
    return Path(__file__).with_name("static")


#: a stored timestamp: ISO 8601 in UTC, as now_iso writes it (or with +00:00)
_ISO = re.compile(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)(:\d\d(?:\.\d+)?)?(Z|[+-]00:?00)?$")


def when(value: Any) -> Markup:
    """A timestamp as the pages show it: `<time datetime="ISO">2026-01-31 12:34 UTC</time>`,
    the seconds in its tooltip. Anything else (None, a date only) is shown as it is."""
    text = "" if value is None else str(value)
    m = _ISO.match(text)
    if m is None:
        return escape(text)
    day, minute, seconds = m.group(1), m.group(2), (m.group(3) or ":00")[:3]
    machine = f"{day}T{minute}{seconds}Z"
    return Markup(
        f'<time datetime="{machine}" title="{day} {minute}{seconds} UTC">{day} {minute} UTC</time>'
    )


def words(code: Any) -> str:
    """A reason code (a game's end, a void's kind) in words."""
    text = "" if code is None else str(code)
    return VOID_WORDS.get(text) or reason_text(text)


def reason_words(game: dict[str, Any], *, full: bool = False) -> str:
    """How a game ended, in the referee's words (the record's detail: "blue (x) ran out of
    time"), without the stderr tail the referee appends for a bot that failed to start unless
    `full`; the reason code spelled out when there is no detail."""
    detail = game.get("detail") or ""
    if not full:
        detail = detail.partition(STDERR_SEPARATOR)[0]
    if detail:
        return detail
    return reason_text(game.get("reason") or game.get("state"))


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("arena.league.web", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["words"] = words
    return env


def render_block(template: str, **context: Any) -> str:
    """A part of a page (no layout, no user): what an event stream sends to replace a block
    the page shows, escaped as the page itself is."""
    return environment().get_template(template).render(**context)


def render(request: Request, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
    """A page: `context` plus `request`, `user` (the handler awaits `auth.current_user` first;
    pages that do not are shown as to a visitor), `csrf`."""
    context.setdefault("user", getattr(request.state, "user", None))
    context.setdefault("title", None)
    league = request.app.state.league
    body = (
        environment()
        .get_template(template)
        .render(
            request=request, csrf=csrf_token(request), league_name=league.settings.name, **context
        )
    )
    return HTMLResponse(body, status_code=status, headers=HEADERS)


async def favicon(request: Request) -> FileResponse:
    """Browsers ask for /favicon.ico whatever the page says: the league's icon, shipped with
    the package (pyproject's package-data), cached for a day."""
    return FileResponse(
        static_dir() / "favicon.ico",
        media_type="image/x-icon",
        headers={"Cache-Control": "public, max-age=86400"},
    )


def static_routes() -> list[Mount | Route]:
    return [
        Route("/favicon.ico", favicon),
        Mount("/static/viewer", StaticFiles(directory=viewer_static_path()), name="viewer"),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
    ]
