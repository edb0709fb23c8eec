"""Request bodies within bounds: every upload ends, in bounded time, with an answer the client
can read, and no connection outlives its client.

Two facts of the HTTP server make this a layer of its own, around the whole app:

- Hypercorn (0.18, trio) hands a request's body to the app through a queue of ten chunks. An
  app that answers without reading the body (a 413 for a declared size over the cap, a 401, a
  form refused) leaves the queue full: the connection's reading task blocks on it, and the
  close that follows the answer blocks on it too (it queues `http.disconnect`). The socket then
  stays ESTABLISHED, unread, long after the client left. So whatever the app read, the rest of
  the body is consumed here.
- A client that writes its whole body before it reads (Python's http.client, Node's fetch,
  curl without `Expect`) reads no answer until its last byte is sent: answering and closing
  mid-body makes it fail with EPIPE or a reset instead of reading the 413. So before the answer
  goes out, up to `drain_limit` bytes of the rest are read and dropped; then the answer is
  sent and the connection kept. A body longer still is not read: the answer says
  `connection: close` and the server closes after it (such a client sees the reset; a client
  that reads while it writes sees the answer).

And time: while a body is incomplete, each chunk must come within `idle` seconds and the body
within `total` seconds of the request. A client that stalls or trickles (slowloris) gets 408
and the connection is closed; the app's task is cancelled, so it holds nothing either.
Hypercorn already bounds what comes before a body: a request's head must arrive within its
`keep_alive_timeout` (5 s) and fit in `h11_max_incomplete_size` (16 KiB).

Requests without a body (every GET) pass through with one flag check per message: the server
sent events streams, which wait minutes for a disconnect, are never timed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import trio

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

#: bytes of an unread body read and dropped before answering, so that a client writing its
#: whole body first can read the answer (a 413 for a 20 MiB upload, say)
DRAIN_LIMIT = 64 << 20
#: seconds a body may pause between two chunks
IDLE = 10.0
#: seconds a whole body may take
TOTAL = 120.0
#: seconds the rest of the queue is read after a closing answer (the socket is closed by then)
_SETTLE = 5.0


class _TimedOut(Exception):
    pass


class _Body:
    """One request's body as the app and this layer read it."""

    def __init__(self, receive: Receive, idle: float, deadline: float) -> None:
        self._receive = receive
        self.idle = idle
        self.deadline = deadline
        #: the last chunk came, or the client went away: nothing more to read
        self.done = False
        self.timed_out = False

    async def receive(self) -> Message:
        if self.done:
            return await self._receive()
        wait = min(self.idle, self.deadline - trio.current_time())
        with trio.move_on_after(max(0.0, wait)):
            message = await self._receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                self.done = True
            return message
        self.timed_out = True
        raise _TimedOut

    async def drain(self, limit: float) -> bool:
        """Read and drop the rest of the body, up to `limit` bytes; whether it all came."""
        seen = 0
        while not self.done:
            message = await self.receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                return False
        return True

    async def settle(self) -> None:
        """Read whatever is queued until the server says the client is gone (it does once the
        answer is out and the connection closed); Hypercorn blocks until there is room."""
        with trio.move_on_after(_SETTLE):
            while (await self._receive())["type"] != "http.disconnect":
                pass


def bounded_bodies(
    app: ASGIApp, *, drain_limit: int = DRAIN_LIMIT, idle: float = IDLE, total: float = TOTAL
) -> ASGIApp:
    """The app, with the body rules of this module."""

    async def wrapped(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        body = _Body(receive, idle, trio.current_time() + total)
        declared = _content_length(scope)
        #: a body longer than the drain limit is not read: the answer closes the connection
        closing = declared is not None and declared > drain_limit
        started = False

        async def guarded_send(message: Message) -> None:
            nonlocal closing, started
            if message["type"] == "http.response.start":
                started = True
                if not body.done and not closing:
                    try:
                        closing = not await body.drain(drain_limit)
                    except _TimedOut:
                        closing = True
                closing = closing and not body.done
                if closing:
                    headers = [
                        (k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"
                    ]
                    message = {**message, "headers": [*headers, (b"connection", b"close")]}
            final = message["type"] == "http.response.body" and not message.get("more_body")
            if final and closing:
                await _send_and_settle(send, message, body)
            else:
                await send(message)

        async def guarded_receive() -> Message:
            try:
                return await body.receive()
            except _TimedOut:
                cancel.cancel()
                await trio.lowlevel.checkpoint()  # raises Cancelled: the app is stopped
                raise AssertionError("unreachable") from None

        with trio.CancelScope() as cancel:
            await app(scope, guarded_receive, guarded_send)
        if body.timed_out and not started:
            await send(
                {
                    "type": "http.response.start",
                    "status": 408,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"connection", b"close"),
                    ],
                }
            )
            await _send_and_settle(send, {"type": "http.response.body", "body": late}, body)

    late = json.dumps(
        {
            "error": {
                "status": 408,
                "message": f"the request body came too slowly (a pause of over {idle:g} s, "
                f"or over {total:g} s in all)",
                "field": None,
            }
        }
    ).encode()
    return wrapped


def _content_length(scope: MutableMapping[str, Any]) -> int | None:
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            return int(value) if value.isdigit() else None
    return None


async def _send_and_settle(send: Send, message: Message, body: _Body) -> None:
    """Send the last message of a closing answer while the queue is read, so the server can
    queue its `http.disconnect` and close the connection."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(body.settle)
        await send(message)
