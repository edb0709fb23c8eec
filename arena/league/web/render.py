"""Pages from templates: one Jinja2 environment, one layout, one set of security headers.

Every page goes through `render`, so every page is autoescaped (bot names, logs and stderr are
hostile), knows who is logged in, carries the CSRF token for its forms, and is sent with a
Content-Security-Policy that allows scripts and styles from this server only: even if some
value slipped past the escaping, no inline script would run. Static files (the league's CSS and
the shared replay viewer's JS/CSS) are served by `static_routes`, never from a CDN.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from arena.league.web.auth import csrf_token
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


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("arena.league.web", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env


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


def static_routes() -> list[Mount]:
    return [
        Mount("/static/viewer", StaticFiles(directory=viewer_static_path()), name="viewer"),
        Mount("/static", StaticFiles(directory=static_dir()), name="static"),
    ]
