"""The submit page and a submission's status page, live while the version is validated.

The form posts the same multipart upload as `POST /api/v1/bots` and goes through the same
`League.submit`, so the archive checks, size caps, rate limit and bot-name ownership, and the
words of their refusals, are the API's; a refusal comes back on the form. A session user and
the CSRF token stand in for the API's bearer token.

A submission's page (`/submissions/{version id}`) shows where the version stands: queued
(waiting behind other validations), validating (its entrance games are being played), then
active or rejected with the validation report: the bot's stderr (a traceback shown once, whole,
as preformatted text) only to its owner and admins, server paths made neutral for everyone
(`arena.league.privacy`). The status block is one template; the page
renders it, and the event stream (`/submissions/{id}/events`) sends it again, rendered, each
time it changes, so the script only swaps it in. Without JavaScript the page refreshes itself
until the validation is over.

Once active, a version with a predecessor is under candidate tests (arena/league/candidates.py):
the block shows each variant's verdict as it forms (LLR and bounds, games and pairs, Elo ±
95%) and the page follows it, on every result this server records, until every test is over.
"""

from __future__ import annotations

from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arena.league import candidates, privacy
from arena.league.db import views
from arena.league.errors import LeagueError
from arena.league.service import League
from arena.league.web.api import archive_form, archive_from_form, check_declared_size
from arena.league.web.auth import current_user, require_user
from arena.league.web.render import environment, render
from arena.league.web.session import check_csrf
from arena.league.web.sse import PING, Emit, EventStream

#: what the pages call a version's state while and after it is validated
FINAL = ("active", "rejected", "retired", "disabled")


def _league(request: Request) -> League:
    return request.app.state.league


async def submit_page(request: Request) -> Response:
    user = await require_user(request)
    return _form(request, user)


def _form(
    request: Request,
    user: Any,
    error: str | None = None,
    status: int = 200,
    filename: str | None = None,
) -> Response:
    sub = _league(request).settings.submissions
    return render(
        request,
        "submit.html",
        status=status,
        title="Submit a bot",
        error=error,
        filename=filename,
        max_mb=sub.max_archive_mb,
        per_hour=sub.per_hour,
    )


async def submit(request: Request) -> Response:
    user = await require_user(request)
    league = _league(request)
    cap = league.settings.submissions.max_archive_mb << 20
    try:
        check_declared_size(request, cap)
    except LeagueError as e:
        # the unread body is drained (or the connection closed) by the server's body layer,
        # arena/league/web/bodies.py, so the browser sees this answer
        return _form(request, user, str(e), e.status)
    async with archive_form(request, cap) as form:
        await check_csrf(request)
        try:
            data = await archive_from_form(form, cap)
            out = await league.submit(user, data)
        except LeagueError as e:
            message = str(e)
            if e.field == "archive" and e.status == 422:
                message = "choose a bot archive (.tar.gz or .zip) to upload"
            upload = form.get("archive")
            filename = getattr(upload, "filename", None) or None
            return _form(request, user, message, e.status, filename)
    return RedirectResponse(f"/submissions/{out['id']}", status_code=303)


def _version_id(request: Request) -> int:
    raw = request.path_params["version_id"]
    if not raw.isdigit() or len(raw) > 18:
        raise LeagueError("no such submission", status=404)
    return int(raw)


async def _status(league: League, version_id: int, user: Any = None) -> dict[str, Any]:
    """Everything the status block shows (404 for an unknown id): the report as its owner
    (or an admin) may read it, with the bot's stderr, else as everyone may."""

    def run(conn: Any) -> dict[str, Any] | None:
        info = views.submission(conn, version_id)
        if info is not None:
            info["verdicts"] = candidates.version_verdicts(conn, version_id)
        return info

    info = await league.read(run)
    if info is None:
        raise LeagueError("no such submission", status=404)
    v = info["version"]
    state = league.version_state(v.state, v.id)
    owner = league.sees_private(user, v.owner_id)
    if owner:
        report = privacy.owner_report(v.validation, v.path or None)
    else:
        report = privacy.public_report(v.validation)
    testing = any(t["state"] == "testing" for t in info["verdicts"])
    return {
        "v": v,
        "state": state,
        "final": state in FINAL and not testing,
        "verdicts": info["verdicts"],
        "ahead": info["ahead"],
        "step": league.validations.step if state == "validating" else "",
        "report": report,
        "owner": owner,
        "variants": league.variants,
    }


def _fragment(status: dict[str, Any]) -> str:
    return environment().get_template("_submission_status.html").render(**status)


async def submission_page(request: Request) -> Response:
    user = await current_user(request)
    status = await _status(_league(request), _version_id(request), user)
    v = status["v"]
    return render(
        request,
        "submission.html",
        title=f"{v.bot} v{v.number}",
        **status,
    )


async def submission_events(request: Request) -> Response:
    """The status block, rendered, now and after every change, until it is final."""
    league = _league(request)
    version_id = _version_id(request)
    user = await current_user(request)
    await _status(league, version_id, user)  # a 404 is a plain answer, not a stream

    async def produce(emit: Emit) -> None:
        sent = None
        while True:
            # a validation bumps the validations' signal; a verdict moves with a result
            seen = league.validations.signal.generation, league.results.generation
            status = await _status(league, version_id, user)
            html = _fragment(status)
            if html != sent:
                await emit("status", {"state": status["state"], "html": html})
                sent = html
            if status["final"]:
                await emit("end", {"state": status["state"]})
                return
            # a validation ends between bumps only through `run_validations`, which bumps; a
            # result recorded by a remote worker bumps `results` at the queue executor's next
            # look (executors/remote.py); the timeout re-reads anyway (an admin may disable the
            # version meanwhile)
            with trio.move_on_after(PING):
                if status["state"] in FINAL:
                    await league.results.wait_past(seen[1])
                else:
                    await league.validations.signal.wait_past(seen[0])

    return EventStream(produce)  # type: ignore[return-value]


def submit_routes() -> list[Route]:
    return [
        Route("/submit", submit_page),
        Route("/submit", submit, methods=["POST"]),
        Route("/submissions/{version_id}", submission_page),
        Route("/submissions/{version_id}/events", submission_events),
    ]
