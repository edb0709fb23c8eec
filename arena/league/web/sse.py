"""Server-sent events from trio: a page's live updates over one long GET.

An `EventStream` is an ASGI response that runs a producer (an async function handed an `emit`
coroutine) next to a task that watches the connection: when the client goes away, the
producer is cancelled at once, whatever it is waiting for. The producer waits for news under
its own cancel scopes; the stream adds a comment line every `PING` seconds, so a proxy keeps
the connection open and a dead peer shows up as a failed send, and ends after `LIFETIME`
seconds (the browser's EventSource reconnects by itself), so no stream is held forever. The
producer never waits on anything a game or a validation does: it only reads what they left.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from starlette.types import Receive, Scope, Send

from arena.league.web.render import HEADERS

#: seconds between keep-alive comments
PING = 15.0
#: seconds a stream lasts before the server ends it (the client reconnects)
LIFETIME = 600.0

Emit = Callable[[str, Any], Awaitable[None]]


def encode_event(name: str, data: Any) -> bytes:
    """One event; the data is JSON on one line (json.dumps escapes every newline)."""
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class EventStream:
    """`text/event-stream` response whose body `producer(emit)` writes."""

    def __init__(self, producer: Callable[[Emit], Awaitable[None]]) -> None:
        self.producer = producer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {**HEADERS, "Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
            }
        )

        async def chunk(body: bytes) -> None:
            await send({"type": "http.response.body", "body": body, "more_body": True})

        async def emit(name: str, data: Any) -> None:
            await chunk(encode_event(name, data))

        async def watch_client() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            nursery.cancel_scope.cancel()

        async def ping() -> None:
            while True:
                await trio.sleep(PING)
                await chunk(b": ping\n\n")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch_client)
            nursery.start_soon(ping)
            with trio.move_on_after(LIFETIME):
                await chunk(b"retry: 2000\n\n")
                await self.producer(emit)
            with trio.move_on_after(PING):  # a client that stopped reading gets no more time
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            nursery.cancel_scope.cancel()
