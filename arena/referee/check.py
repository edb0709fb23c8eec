"""What a bot did wrong in a game, in words for its author: the core of `arena check`.

`arena check` and the league's validation of a new version (arena/league/validation.py) judge
a bot the same way, so a bot author sees the same sentence locally and on the server: short
games against the bundled random bot, and for each game either nothing or one line naming the
failure (the illegal action and why, the turn it ran out of time in, the crash). A failure of
the sparring bot is reported as inconclusive, never as the checked bot's.
"""

from __future__ import annotations

from typing import Any

from arena.referee.bots import BotSpec
from arena.referee.clock import TimeControl
from arena.referee.outcome import Reason
from arena.referee.record import GameRecord
from arena.resources import SPARRING_BOT

#: the opponent checks play against (bots/random-py, shipped inside the package too)
CHECK_OPPONENT = SPARRING_BOT
#: check games are short: this many turns at most
CHECK_MAX_TURNS = 24


def check_problem(record: GameRecord, seat: int, bot: BotSpec, tc: TimeControl) -> str | None:
    """What the checked bot did wrong in this game, in words for its author; None if nothing."""
    res = record.result
    failure = res.get("failure") or {}
    if res.get("reason") == Reason.BOTH_FAILED_START:
        for f in failure.get("seats", []):
            if f["seat"] == seat:
                return failure_text(record, f, tc)
    if res.get("loser_seat") == seat and res.get("forfeit"):
        return failure_text(record, failure, tc)
    if res.get("loser_seat") == 1 - seat and res.get("forfeit"):
        return f"the sparring bot failed ({res['reason']}: {res['detail']}), inconclusive"
    ex = record.exits[seat]
    if ex is not None and ex.get("exited_after_end") is False:
        return "did not exit within 1 s after the end message (it was killed)"
    return None


def handshake_failed(record: GameRecord, seat: int) -> bool:
    """The bot never got to `ready`: every other game would fail the same way."""
    reason = record.result.get("reason")
    at_start = (Reason.FAILED_START, Reason.PROTOCOL_ERROR, Reason.BOTH_FAILED_START)
    return reason in at_start and (record.ready[seat] is None)


def failure_text(record: GameRecord, f: dict[str, Any], tc: TimeControl) -> str:
    """One failure (a record's `result.failure`) as a sentence."""
    reason = f.get("reason")
    detail = f.get("detail", "")
    if reason == "illegal_action":
        return f"sent {f.get('action')} in {record.game}: {f.get('message')}"
    if reason == "time_forfeit":
        turn = record.turns[-1]["turn"] if record.turns else "?"
        return f"ran out of time in turn {turn}: {detail}"
    if reason == "protocol_error":
        return f"protocol error: {detail}"
    if reason == "crash":
        return f"crashed: {detail}"
    if reason == "failed_start":
        return detail
    return f"{reason}: {detail}"
