"""One moment of a recorded game: the position before an action, and the request of that moment.

`arena replay FILE --at TURN[.ACTION]` shows it, sends it to a bot (`--bot`) or prints it as
the bot would read it (`--messages`); `arena tournament record --command --turn` restarts the
game there. A moment is named as the record numbers turns: `20` is before turn 20's first
action, `20.2` before its second (Papagra's second action, Quadraphages' part b), whoever
played the actions before it (the opening or a bot).

The request is rebuilt with the referee's own builders (arena/referee/requests.py) from what
the record holds, so that it is the one the bot was sent: the position by replaying every
action through the rules engine, `last_turn` as the referee keeps it, and the clocks and
deadline as sent (`turns[].asked`). Records made before `asked` existed give the clocks after
the previous turn, less the time of the turn's earlier replies. A moment inside a reply (the
bot sent two actions in one move: no request was sent between them) or inside the opening is a
request the referee would have sent there, with the clocks of that moment. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from arena.errors import ArenaError
from arena.games import IllegalAction, State, make_game
from arena.referee.clock import Clocks, TimeControl
from arena.referee.record import TURN_GOES_ON, GameRecord, RecordError
from arena.referee.requests import hello_message, turn_message
from protocol.framing import DEFAULT_MAX_MESSAGE_BYTES

_MOMENT = re.compile(r"(\d+)(?:\.(\d+))?")


class MomentError(ArenaError):
    """A moment that is ill-formed or not in the record."""


def parse_moment(text: str, what: str = "--at") -> tuple[int, int]:
    """`"20"` -> (20, 1), `"20.2"` -> (20, 2); MomentError naming `what` otherwise."""
    m = _MOMENT.fullmatch(text.strip())
    if m is None or int(m.group(1)) < 1 or (m.group(2) is not None and int(m.group(2)) < 1):
        raise MomentError(
            f"{what}: expected TURN or TURN.ACTION with numbers from 1 (e.g. 20 or 20.2), "
            f"got {text!r}"
        )
    return int(m.group(1)), int(m.group(2) or 1)


@dataclass
class Moment:
    """Before action `action` (1-based) of turn `turn`."""

    record: GameRecord
    turn: int
    action: int
    state: State  # the position at the moment (a copy of its own)
    seat: int
    last_turn: dict[str, Any] | None
    clocks: list[float | None]
    deadline: float | None
    #: what was left of each seat's time bank (None: a game without banks)
    banks: list[float | None] | None = None
    #: the moment lies in the opening (played by nobody's clock)
    in_opening: bool = False
    #: the referee sent this very request in the game
    asked: bool = False
    #: what the record says was played from here: the reply's actions (or the opening's)
    played: list[str] = field(default_factory=list)
    #: the reply's time, when the moment began a reply
    elapsed: float | None = None
    #: the played action the engine refused, with its message
    illegal: tuple[str, str] | None = None
    #: how the request of this moment ended otherwise (a resignation, the game's failure)
    ending: str = ""

    @property
    def label(self) -> str:
        return f"{self.turn}" if self.action == 1 else f"{self.turn}.{self.action}"

    def time_control(self, seat: int | None = None) -> TimeControl:
        return seat_time_control(self.record, self.seat if seat is None else seat)

    def hello(self) -> dict[str, Any]:
        """The `hello` the bot in the moment's seat was sent (docs/protocol.md)."""
        r = self.record
        bot = r.bots[self.seat]
        return hello_message(
            game=r.game,
            options=r.options,
            seat=self.seat,
            colour=bot["colour"],
            opponent=r.bots[1 - self.seat]["name"],
            match_id=r.match_id,
            time_control=self.time_control(),
            max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES,
            seed=r.seed,
            bot_options=bot.get("bot_options"),
        )

    def request(self, legal: bool | None = None) -> dict[str, Any]:
        """The `turn` request of the moment; `legal` None: with the legal actions if the
        recorded bot asked for them in its `ready`."""
        if legal is None:
            ready = self.record.ready[self.seat] or {}
            legal = bool(ready.get("legal"))
        return turn_message(
            self.state,
            self.turn,
            self.seat,
            self.last_turn,
            self.clocks,
            self.deadline,
            legal,
            self.banks,
        )


def _as_sent(kw: dict[str, Any], sent: dict[str, Any]) -> None:
    """The moment's clocks, deadline and banks as the referee sent them (`turns[].asked`)."""
    kw["clocks"], kw["deadline"] = list(sent["clocks"]), sent["deadline"]
    kw["banks"] = list(sent["banks"]) if sent.get("banks") is not None else None


def seat_time_control(record: GameRecord, seat: int) -> TimeControl:
    own = record.bots[seat].get("time_control") if seat < len(record.bots) else None
    return TimeControl.from_dict(own or record.time_control or {})


def _replies(actions: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A turn's recorded actions by the reply that carried them: the first action of each
    reply carries its time, the others 0 (docs/record.md)."""
    out: list[list[dict[str, Any]]] = []
    for i, item in enumerate(actions):
        if i == 0 or item.get("elapsed"):
            out.append([])
        out[-1].append(item)
    return out


def moments_range(record: GameRecord) -> str:
    """The moments a record holds, for an error message."""
    last = record.turns[-1]["turn"] if record.turns else len(record.opening)
    return f"turns 1 to {last}" if last else "no turns"


def find_moment(record: GameRecord, turn: int, action: int, what: str = "--at") -> Moment:
    """The moment before action `action` of turn `turn`; MomentError (naming the option
    `what`) if the record has none, RecordError if the record does not replay."""
    try:
        state = make_game(record.game, record.options).new_initial_state()
    except ArenaError as e:
        raise RecordError(f"record's game cannot be created: {e}") from None
    tcs = (seat_time_control(record, 0), seat_time_control(record, 1))
    clocks = Clocks(tcs[0], tcs)
    last_turn: dict[str, Any] | None = None

    def moment(**kw: Any) -> Moment:
        seat = state.current_player()
        assert seat is not None
        if "clocks" not in kw:
            kw["clocks"] = clocks.snapshot()
            kw["deadline"] = clocks.deadline(seat)
            kw["banks"] = clocks.bank_snapshot() if clocks.banked else None
        return Moment(record, turn, action, state.clone(), seat, last_turn, **kw)

    # the opening: nobody's clock runs
    for n, opening_turn in enumerate(record.opening, 1):
        goes_on = bool(opening_turn) and opening_turn[-1] == TURN_GOES_ON
        actions = list(opening_turn[:-1] if goes_on else opening_turn)
        seat, start = state.current_player(), state.turn_number()
        for i, a in enumerate(actions, 1):
            if (start, i) == (turn, action):
                return moment(in_opening=True, played=actions[i - 1 :])
            _apply(state, a, f"opening turn {n}")
        if goes_on or state.turn_number() != start or not state.can_end_turn():
            if state.turn_number() != start:
                last_turn = {"seat": seat, "actions": actions}
            continue
        state.end_turn()
        last_turn = {"seat": seat, "actions": actions}

    failure = record.result.get("failure") or {}
    for k, entry in enumerate(record.turns):
        start, seat = state.turn_number(), entry["seat"]
        if entry["turn"] != start:
            raise RecordError(f"turn {entry['turn']}: the record expected turn {start} here")
        before = state.turn_actions()
        done = len(before)
        asked = entry.get("asked") or []
        played: list[str] = []
        for r, items in enumerate(_replies(entry["actions"])):
            sent = asked[r] if r < len(asked) else None
            for j, item in enumerate(items):
                if (start, done + 1) == (turn, action):
                    a = item["action"]
                    illegal = None
                    if item.get("illegal"):
                        illegal = (a, _failure_message(failure, a))
                    kw: dict[str, Any] = {
                        "played": [i["action"] for i in items[j:]],
                        "illegal": illegal,
                    }
                    if j == 0:
                        kw["asked"] = True
                        kw["elapsed"] = item.get("elapsed")
                        if sent is not None:
                            _as_sent(kw, sent)
                    return moment(**kw)
                if item.get("illegal"):
                    continue
                _apply(state, item["action"], f"turn {start}")
                played.append(item["action"])
                done += 1
            clocks.charge(seat, items[0].get("elapsed") or 0.0)
        is_last = k == len(record.turns) - 1
        if is_last and (turn, action) == (start, done + 1) and state.turn_number() == start:
            # the last request of the game, which got no playable answer
            r = len(_replies(entry["actions"]))
            sent = asked[r] if r < len(asked) else None
            kw = {"asked": True, "ending": _ending(record, entry)}
            if sent is not None:
                _as_sent(kw, sent)
            return moment(**kw)
        if (
            entry.get("ended_early")
            and not state.is_terminal()
            and state.turn_number() == start
            and state.can_end_turn()
        ):
            state.end_turn()
        if state.turn_number() != start or state.is_terminal():
            last_turn = {"seat": seat, "actions": before + played}
        after = entry.get("clocks_after")
        clocks.end_turn(seat)
        if after is not None:
            clocks.remaining = list(after)
    raise MomentError(
        f"{what} {turn}.{action}: the record has no such moment ({moments_range(record)}; "
        f"ACTION counts the actions of the turn from 1)"
        if action > 1
        else f"{what} {turn}: the record has no turn {turn} ({moments_range(record)})"
    )


def _apply(state: State, action: str, where: str) -> None:
    try:
        state.apply(action)
    except IllegalAction as e:
        message = f"{where}: recorded action {action} does not replay: {e.message}"
        raise RecordError(message) from None


def _failure_message(failure: dict[str, Any], action: str) -> str:
    if failure.get("action") == action:
        return str(failure.get("message", ""))
    return ""


def _ending(record: GameRecord, entry: dict[str, Any]) -> str:
    if entry.get("resigned"):
        return "resigned"
    failure = record.result.get("failure") or {}
    if failure:
        return f"{failure.get('reason')}: {failure.get('detail', '')}"
    return ""


def opening_before(moment: Moment) -> list[list[str]]:
    """The opening that restarts the game at `moment` (`arena tournament record --command
    --turn`): every action the record holds before it, by turn; a partial last turn that
    could end there goes on (TURN_GOES_ON), as it did in the game."""
    record = moment.record
    turns: dict[int, list[str]] = {}
    for n, opening_turn in enumerate(record.opening, 1):
        goes_on = bool(opening_turn) and opening_turn[-1] == TURN_GOES_ON
        turns[n] = list(opening_turn[:-1] if goes_on else opening_turn)
    for entry in record.turns:
        if entry["turn"] > moment.turn:
            break
        acts = [a["action"] for a in entry["actions"] if not a.get("illegal")]
        turns.setdefault(entry["turn"], []).extend(acts)
    out = [turns[t] for t in sorted(turns) if t < moment.turn]
    if moment.action > 1:
        partial = turns[moment.turn][: moment.action - 1]
        out.append(partial + ([TURN_GOES_ON] if moment.state.can_end_turn() else []))
    return out
