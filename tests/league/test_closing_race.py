"""Hypercorn's close racing a response's last write (see `quiet_closing_races`): the response is
dropped quietly, the app does not fail, and nothing else is swallowed."""

from __future__ import annotations

import pytest
import trio

from arena.league.server import quiet_closing_races


async def test_a_write_lost_to_hypercorns_close_is_dropped_quietly():
    sent: list[dict] = []

    async def send(message: dict) -> None:
        if message.get("type") == "http.response.body":
            raise trio.BusyResourceError(
                "another task is currently sending data on this SocketStream"
            )
        sent.append(message)

    async def app(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x", "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    await quiet_closing_races(app)({"type": "http"}, None, send)
    assert [m["type"] for m in sent] == ["http.response.start"]


async def test_other_failures_and_other_scopes_still_raise():
    async def broken(message: dict) -> None:
        raise trio.BrokenResourceError("peer gone")

    async def busy(message: dict) -> None:
        raise trio.BusyResourceError("busy")

    async def app(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})

    with pytest.raises(trio.BrokenResourceError):
        await quiet_closing_races(app)({"type": "http"}, None, broken)
    with pytest.raises(trio.BusyResourceError):
        await quiet_closing_races(app)({"type": "websocket"}, None, busy)
