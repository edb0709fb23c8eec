"""The game record: everything needed to replay a game and audit the referee's decisions.

It is plain data (JSON-safe dicts and lists through `to_dict`), versioned by its `format` field,
and documented in `docs/record.md`. Replaying it through the rules engine (`replay_states`)
re-checks every action, so a record is evidence, not just a log.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.games import IllegalAction, State, make_game

RECORD_FORMAT = "arena-record/1"
#: the last token of an opening's last turn that goes on with optional actions, where it could
#: end (docs/cli.md, `--opening`): the bots then start in that turn, `can_end_turn` true
TURN_GOES_ON = "..."

__all__ = ["RECORD_FORMAT", "TURN_GOES_ON", "GameRecord", "RecordError", "apply_turn"]


class RecordError(ArenaError):
    """A record file that cannot be read or does not replay."""


@dataclass
class GameRecord:
    format: str = RECORD_FORMAT
    match_id: str = ""
    game: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    opening: list[list[str]] = field(default_factory=list)
    #: per seat: name, version, author, command, source, hash, seat, colour, encoding
    bots: list[dict[str, Any]] = field(default_factory=list)
    time_control: dict[str, Any] = field(default_factory=dict)
    #: one entry per completed (or forfeited) turn:
    #: {turn, seat, actions: [{action, elapsed}], elapsed, clocks_after, requests, t}
    turns: list[dict[str, Any]] = field(default_factory=list)
    #: {seat, t (seconds since the game started), message}
    logs: list[dict[str, Any]] = field(default_factory=list)
    #: log messages dropped by seat once the per-game cap was reached
    logs_dropped: list[int] = field(default_factory=lambda: [0, 0])
    #: debug marks the bots drew (arena/referee/marks.py): {seat, turn, t, marks: [mark]}
    marks: list[dict[str, Any]] = field(default_factory=list)
    #: marks dropped by seat (broke a rule or a cap; the seat's logs say why)
    marks_dropped: list[int] = field(default_factory=lambda: [0, 0])
    #: {winner, result, reason, detail, scores, loser_seat, forfeit, failure}
    result: dict[str, Any] = field(default_factory=dict)
    #: captured stderr tail by seat
    stderr: list[str] = field(default_factory=lambda: ["", ""])
    #: per seat, [turn, offset] pairs: from `offset` (characters into `stderr[seat]`) on, the
    #: text was read while `turn` was being played (None: before the first turn)
    stderr_turns: list[list[list[Any]]] = field(default_factory=lambda: [[], []])
    #: how each bot ended: {returncode, signal, exited_after_end (within the grace period)}
    exits: list[dict[str, Any] | None] = field(default_factory=lambda: [None, None])
    #: what each bot reported in `ready` ({name, version, author, legal}); None if it never did
    ready: list[dict[str, Any] | None] = field(default_factory=lambda: [None, None])
    started_at: str = ""
    finished_at: str = ""
    duration: float = 0.0
    turn_count: int = 0
    final_position: dict[str, Any] | None = None

    # --- (de)serialisation ---------------------------------------------------------------------
    def to_dict(self, copy: bool = True) -> dict[str, Any]:
        """The record as plain data. `copy=False` shares the record's own lists and dicts
        (for a caller that serialises it at once: a tournament worker sends every record)."""
        if not copy:
            return {f.name: getattr(self, f.name) for f in _FIELDS}
        return {f.name: _plain_copy(getattr(self, f.name)) for f in _FIELDS}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameRecord:
        fmt = d.get("format")
        if fmt != RECORD_FORMAT:
            raise RecordError(
                f"not an arena game record (format {fmt!r}, expected {RECORD_FORMAT!r})"
            )
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def to_json(self, indent: int | None = None) -> str:
        """JSON text with times rounded to the microsecond (the referee keeps raw floats in
        memory: rounding every figure during the game would cost time on every turn)."""
        import json  # at the end of a game, not with the referee

        return json.dumps(_rounded(self.to_dict(copy=False)), indent=indent, ensure_ascii=False)

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> GameRecord:
        import json

        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except OSError as e:
            raise RecordError(f"{p}: cannot read: {e.strerror}") from None
        except ValueError as e:
            raise RecordError(f"{p}: not JSON: {e}") from None
        if not isinstance(data, dict):
            raise RecordError(f"{p}: not an arena game record")
        try:
            return cls.from_dict(data)
        except RecordError as e:
            raise RecordError(f"{p}: {e}") from None

    # --- convenience -----------------------------------------------------------------------------
    @property
    def winner(self) -> int | None:
        return self.result.get("winner")

    @property
    def reason(self) -> str:
        return self.result.get("reason", "")

    def summary(self) -> dict[str, Any]:
        """The short machine-readable outcome (`arena match --json`)."""
        return {
            "match_id": self.match_id,
            "game": self.game,
            "options": self.options,
            "seed": self.seed,
            "bots": [b.get("name") for b in self.bots],
            "winner": self.result.get("winner"),
            "result": self.result.get("result"),
            "reason": self.result.get("reason"),
            "detail": self.result.get("detail", ""),
            "scores": self.result.get("scores"),
            "turns": self.turn_count,
            "loser_seat": self.result.get("loser_seat"),
            "forfeit": self.result.get("forfeit", False),
            "duration": self.duration,
        }

    def initial_state(self) -> State:
        """The position after the opening, before the bots' first turn (RecordError if the
        game cannot be made or the opening does not replay). A partial last turn of the
        opening (arena/referee/match.py, `play_opening`) is left open: the bots went on."""
        try:
            state = make_game(self.game, self.options).new_initial_state()
        except ArenaError as e:
            raise RecordError(f"record's game cannot be created: {e}") from None
        for n, turn in enumerate(self.opening, 1):
            goes_on = bool(turn) and turn[-1] == TURN_GOES_ON
            for action in turn[:-1] if goes_on else turn:
                try:
                    state.apply(action)
                except IllegalAction as e:
                    raise RecordError(f"opening turn {n}: {action}: {e.message}") from None
            if not goes_on:
                _finish_turn(state)
        return state

    def replay_states(self) -> Iterator[tuple[dict[str, Any] | None, State]]:
        """The position after the opening (turn entry None), then after every recorded turn.

        Every action is re-applied through the rules engine: a record whose actions do not
        replay raises RecordError naming the turn, so the referee's decisions can be audited.
        A forfeited turn's actions are applied up to the illegal one, which is skipped.
        """
        state = self.initial_state()
        yield None, state
        failure = self.result.get("failure") or {}
        for i, turn in enumerate(self.turns):
            is_last = i == len(self.turns) - 1
            apply_turn(state, turn, complete=not (is_last and (failure or turn.get("resigned"))))
            yield turn, state


def apply_turn(state: State, turn: dict[str, Any], *, complete: bool = True) -> None:
    """Apply one recorded turn entry to `state` (illegal actions skipped); with `complete`,
    RecordError unless the turn was finished (a forfeited or resigned last turn is not)."""
    start_turn = state.turn_number()
    for entry in turn["actions"]:
        action = entry["action"]
        if entry.get("illegal"):
            continue
        try:
            state.apply(action)
        except IllegalAction as e:
            raise RecordError(
                f"turn {turn['turn']}: recorded action {action} does not replay: {e.message}"
            ) from None
    if (
        turn.get("ended_early")
        and not state.is_terminal()
        and state.turn_number() == start_turn
        and state.can_end_turn()
    ):
        state.end_turn()
    if complete:
        _check_turn_complete(state, start_turn, turn)


def _finish_turn(state: State) -> None:
    if not state.is_terminal() and state.turn_actions() and state.can_end_turn():
        state.end_turn()


def _check_turn_complete(state: State, start_turn: int, turn: dict[str, Any]) -> None:
    if not state.is_terminal() and state.turn_number() == start_turn:
        raise RecordError(f"turn {turn['turn']}: the recorded actions do not complete the turn")


_FIELDS = fields(GameRecord)


def _plain_copy(value: Any) -> Any:
    """A deep copy of JSON-like data (what a record holds): dataclasses.asdict's generic walk
    and copy.deepcopy of every leaf cost milliseconds per record."""
    t = type(value)
    if t is dict:
        return {k: _plain_copy(v) for k, v in value.items()}
    if t is list:
        return [_plain_copy(v) for v in value]
    if t is tuple:
        return tuple(_plain_copy(v) for v in value)
    return value


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value
