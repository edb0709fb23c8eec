"""The worker fleet on the web: its JSON API, its page, and the archive download for workers.

`GET /api/v1/workers` (public, like the queue) lists every worker with its state (running, lost:
no heartbeat for `stalled_after` seconds, stopped), the games it is playing, its load and its
counts of games played, voided and stale, its host stalls (in all, and its stall rate over its
recent games, with `degraded` and the slots it uses: arena/league/fleet.py), its last failure,
and the job queue's counts. The server's own game slots, when it plays games itself, are the
worker `(server)`.
`GET /workers` is the same as a page in the site's layout, every value escaped.

`GET /api/v1/worker/archives/{sha256}` serves a version's archive to workers. Archives are the
bots' code, private to their owners, so it needs `Authorization: Bearer SECRET`, the worker
secret kept in the league's database: whoever can read the database (every worker must) can
read the archives, nobody else. The bytes come from the content-addressed BlobStore, which
checks them against their hash; the worker checks them again.
"""

from __future__ import annotations

import hmac
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.league import fleet, queue
from arena.league.archives import BlobStore
from arena.league.errors import LeagueError
from arena.league.service import League

#: seconds without a heartbeat after which the API calls a worker lost, unless the server
#: published its own (meta key `stalled_after`)
STALLED_AFTER = 30.0


def _league(request: Request) -> League:
    return request.app.state.league


async def fleet_status(league: League) -> dict[str, Any]:
    def run(conn: Any) -> dict[str, Any]:
        after = float(fleet.get_meta(conn, "stalled_after") or STALLED_AFTER)
        has_queue = not league.db.is_sqlite and queue.schema_installed(conn)
        return {
            "stalled_after": after,
            "jobs": queue.job_counts(conn) if has_queue else {},
            "items": fleet.list_workers(conn, after),
        }

    return await league.read(run)


async def workers(request: Request) -> Response:
    return JSONResponse(await fleet_status(_league(request)))


async def archive(request: Request) -> Response:
    league = _league(request)
    scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
    secret = await league.read(fleet.get_meta, fleet.WORKER_SECRET)
    if (
        scheme.lower() != "bearer"
        or secret is None
        or not hmac.compare_digest(token.strip().encode(), secret.encode())
    ):
        raise LeagueError("archives are for the league's workers (worker secret)", status=401)
    data = BlobStore(league.settings.archives_dir).get(request.path_params["sha"])
    return Response(data, media_type="application/octet-stream")


async def workers_page(request: Request) -> Response:
    from arena.league.web.auth import current_user
    from arena.league.web.render import render

    await current_user(request)
    data = await fleet_status(_league(request))
    return render(
        request,
        "workers.html",
        title="Workers",
        recent=fleet.RECENT,
        min_games=fleet.MIN_GAMES,
        degraded_rate=fleet.DEGRADED_RATE,
        server_slots=fleet.SERVER_SLOTS,
        **data,
    )


def worker_routes() -> list[Route]:
    return [
        Route("/api/v1/workers", workers),
        Route("/api/v1/worker/archives/{sha}", archive),
        Route("/workers", workers_page),
    ]
