"""The worker fleet on the web: its JSON API, its page, and the archive download for workers.

`GET /api/v1/workers` (public, like the queue) lists every worker with its state (running, lost:
no heartbeat for `stalled_after` seconds, stopped), the games it is playing, its load and its
counts of games played, voided and stale, its host stalls (in all, and its stall rate over its
recent games, with `degraded` and the slots it uses: arena/league/db/fleet.py), its last
failure, and the job queue's counts (`League.fleet_status`). The server's own game slots, when
it plays games itself, are the worker `(server)`.
`GET /workers` is the same as a page in the site's layout, every value escaped.

`GET /api/v1/worker/archives/{sha256}` serves a version's archive to workers. Archives are the
bots' code, private to their owners, so it needs `Authorization: Bearer SECRET`, the worker
secret kept in the league's database: whoever can read the database (every worker must) can
read the archives, nobody else. The bytes come from the content-addressed BlobStore, which
checks them against their hash; the worker checks them again.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.league.archives import BlobStore
from arena.league.errors import LeagueError
from arena.league.service import League
from arena.league.web.auth import current_user
from arena.league.web.render import render


def _league(request: Request) -> League:
    return request.app.state.league


async def workers(request: Request) -> Response:
    return JSONResponse(await _league(request).fleet_status())


async def archive(request: Request) -> Response:
    league = _league(request)
    scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
    secret = await league.worker_secret()
    if (
        scheme.lower() != "bearer"
        or secret is None
        or not hmac.compare_digest(token.strip().encode(), secret.encode())
    ):
        raise LeagueError("archives are for the league's workers (worker secret)", status=401)
    data = BlobStore(league.settings.archives_dir).get(request.path_params["sha"])
    return Response(data, media_type="application/octet-stream")


async def workers_page(request: Request) -> Response:
    await current_user(request)
    league = _league(request)
    data = await league.fleet_status()
    return render(request, "workers.html", title="Workers", **league.fleet_rules(), **data)


def worker_routes() -> list[Route]:
    return [
        Route("/api/v1/workers", workers),
        Route("/api/v1/worker/archives/{sha}", archive),
        Route("/workers", workers_page),
    ]
