"""Timestamps people type (`--since 2026-03-01`, `?since=2026-03-01T12:00:00+02:00`) as the
league's tables keep them.

Every table stamps UTC as `2026-01-31T12:34:56.789Z` (arena/referee/outcome.py `now_iso`),
which sorts as text, so a bound given in any ISO 8601 form is turned into that form once and
compared as text in SQL (an index range on `finished_at`). A date alone is midnight UTC; a time
without an offset is UTC. Anything else is refused naming what was expected: the client says
so before it asks the server, the API answers 422 with the parameter's name.
"""

from __future__ import annotations

from datetime import UTC, datetime

from arena.errors import ArenaError


class BadTimestamp(ArenaError):
    """A date or time that is not ISO 8601."""


def table_time(text: str, what: str = "date") -> str:
    """`text` (ISO 8601: 2026-03-01, 2026-03-01T12:00, ...+02:00, ...Z) as a table timestamp.
    Raises BadTimestamp naming `what`."""
    raw = text.strip()
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise BadTimestamp(
            f"{what} {text!r}: expected an ISO 8601 date or time, e.g. 2026-03-01 or "
            "2026-03-01T12:00:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
