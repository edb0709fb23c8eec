"""The one interface every part of the arena uses to talk to a rules engine.

The split follows OpenSpiel: a `Game` holds the rules and their parameters (immutable, shared by
every position), a `State` is one position that knows its legal actions and how to apply one.
Engines are pure Python: no I/O, no trio, no clocks, so the referee, the tournament runner, the
tests and Python bots can all drive them the same way.

Actions are plain strings in the game's notation (RULES.md): that is what bots send, what the
record stores and what `legal_actions` lists, so there is exactly one spelling of every action.

A turn may hold several actions (Papagra: two; Quadraphages: up to five). The engine tracks the
turn itself: after the last action of a turn `current_player` changes by itself. Optional actions
(Papagra's `extra_removals` variant) are the only case where a turn may end before
`actions_remaining()` reaches 0; the caller then ends it with `end_turn()`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from arena.games.errors import OptionError


@dataclass(frozen=True)
class Result:
    """How a game ended, in terms the record, the reports and the bots all share.

    `winner` is a seat (0 moved first) or None for a draw. `reason` is a short stable code
    (`board_full`, `repetition`, `max_turns`, `no_moves`, `stuck`, `both_passed`, `blocked`,
    `resign`, ...) documented on each game's rules page; `detail` is a sentence for humans.
    """

    winner: int | None
    reason: str
    scores: tuple[int, int]
    detail: str = ""

    @property
    def result_string(self) -> str:
        return RESULT_STRINGS[self.winner]


#: a result as the reports write it, by the winning seat (None: a draw)
RESULT_STRINGS: dict[int | None, str] = {0: "1-0", 1: "0-1", None: "1/2-1/2"}


@dataclass(frozen=True)
class OptionSpec:
    """One game option: its name, default, help text and a parser from the CLI's string form.

    `parse` receives either the string given on the command line / in a TOML file or an
    already-typed value (TOML ints and bools), and returns the typed value or raises ValueError
    with a message naming the valid values.
    """

    name: str
    default: Any
    help: str
    parse: Callable[[Any], Any]


#: the largest `max_turns` any game accepts: far beyond any real game, small enough that the
#: value fits every protocol encoding and a game at the limit still ends
MAX_TURNS = 100_000


def parse_int(
    lo: int | None = None, hi: int | None = None, odd: bool = False
) -> Callable[[Any], int]:
    """Parser for integer options with bounds; rejects bools, which TOML would happily pass."""

    def parse(value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError(f"expected an integer, got {value!r}")
        try:
            n = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"expected an integer, got {value!r}") from None
        if lo is not None and n < lo:
            raise ValueError(f"must be at least {lo}, got {n}")
        if hi is not None and n > hi:
            raise ValueError(f"must be at most {hi}, got {n}")
        if odd and n % 2 == 0:
            raise ValueError(f"must be odd, got {n}")
        return n

    return parse


def parse_choice(*choices: Any) -> Callable[[Any], Any]:
    """Parser for options with a fixed set of values (compared as strings for CLI input)."""

    def parse(value: Any) -> Any:
        for c in choices:
            if value == c or str(value) == str(c):
                return c
        raise ValueError(f"expected one of {', '.join(map(str, choices))}, got {value!r}")

    return parse


def parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in ("true", "yes", "1", "on"):
        return True
    if s in ("false", "no", "0", "off"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


class Game(ABC):
    """The rules of one game variant and its option values; immutable and cheap to share."""

    #: the name used on the CLI, in configs and in records (`papagra`, `hexaphage`, ...)
    name: ClassVar[str]
    #: human title (`Papagra`, `Wrigglers Squared`, ...)
    title: ClassVar[str]
    #: colour names by seat, seat 0 moves first (`("pink", "black")`)
    colours: ClassVar[tuple[str, str]]
    #: the options this game accepts, in display order
    option_specs: ClassVar[Sequence[OptionSpec]]
    #: option sets small enough (boards, turn limits) for the property tests every engine
    #: passes (tests/games/test_properties.py) to reach game ends fast on random play
    small_options: ClassVar[Sequence[Mapping[str, Any]]] = ({},)

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.options: dict[str, Any] = resolve_options(self.name, self.option_specs, options or {})

    @abstractmethod
    def new_initial_state(self) -> State:
        """The starting position."""

    @abstractmethod
    def state_from_description(self, description: Mapping[str, Any]) -> State:
        """Inverse of `State.describe()`: rebuilds a position from its plain description."""

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{type(self).__name__}({opts})"


class State(ABC):
    """One position of a game, mutable: `apply` changes it in place, `clone` copies it."""

    game: Game

    # --- whose turn and what may be played -------------------------------------------------
    @abstractmethod
    def current_player(self) -> int | None:
        """Seat to act (0 or 1), or None once the game is over."""

    @abstractmethod
    def turn_number(self) -> int:
        """1-based count of turns started so far, both players' turns counted."""

    @abstractmethod
    def actions_remaining(self) -> int:
        """How many more actions the current turn may still take (optional ones included)."""

    def can_end_turn(self) -> bool:
        """True when only optional actions remain, so the turn may end now via `end_turn`."""
        return False

    def end_turn(self) -> None:
        """End the current turn early, skipping its optional actions."""
        raise NotImplementedError("this game has no optional actions")

    @abstractmethod
    def turn_actions(self) -> list[str]:
        """The actions already made in the current (unfinished) turn."""

    @abstractmethod
    def legal_actions(self) -> list[str]:
        """Every legal next action, in notation; empty once the game is over."""

    @abstractmethod
    def apply(self, action: str) -> None:
        """Validate and play one action; raises IllegalAction with a bot-readable message."""

    # --- the end -------------------------------------------------------------------------
    @abstractmethod
    def is_terminal(self) -> bool: ...

    @abstractmethod
    def result(self) -> Result | None:
        """The result once terminal, else None."""

    @abstractmethod
    def scores(self) -> tuple[int, int]:
        """Current scores by seat, in the game's own measure."""

    def resign(self, seat: int) -> None:
        """Record a resignation: the resigner loses whatever the position says."""
        self._set_result(
            Result(1 - seat, "resign", self.scores(), f"{self.game.colours[seat]} resigned")
        )

    @abstractmethod
    def _set_result(self, result: Result) -> None:
        """Force the game over (resignation; the referee uses `adjudicate` for forfeits)."""

    # --- views -----------------------------------------------------------------------------
    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """Language-neutral position: only dicts, lists, ints, bools, None and strings.

        Common keys in every game: `game`, `options`, `turn`, `to_move` (seat or None),
        `actions_remaining`, `turn_actions`, `scores`, `board` (`{"kind": "square"|"hex",
        "size": N, "cells": [every cell name]}`), `cells` (cell name -> content, non-empty cells
        only), `result` (None or `{"winner", "reason", "scores", "detail"}`), plus game-specific
        keys documented on the game's rules page.
        """

    @abstractmethod
    def render_text(self) -> str:
        """A text board in the style of the seed diagrams."""

    @abstractmethod
    def render_svg(self) -> str:
        """A standalone SVG picture of the position."""

    @abstractmethod
    def key(self) -> Any:
        """Hashable key of the arrangement relevant for repetition detection."""

    @abstractmethod
    def clone(self) -> State: ...

    def __str__(self) -> str:
        return self.render_text()


def result_to_dict(result: Result | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "winner": result.winner,
        "reason": result.reason,
        "scores": list(result.scores),
        "detail": result.detail,
    }


def result_from_dict(d: Mapping[str, Any] | None) -> Result | None:
    if d is None:
        return None
    return Result(d["winner"], d["reason"], tuple(d["scores"]), d.get("detail", ""))  # type: ignore[arg-type]


def resolve_options(
    game_name: str, specs: Sequence[OptionSpec], given: Mapping[str, Any]
) -> dict[str, Any]:
    """Merge given options over the defaults; every error names the option and the valid set."""
    known = {s.name: s for s in specs}
    out = {s.name: s.default for s in specs}
    for key, raw in given.items():
        spec = known.get(key)
        if spec is None:
            valid = ", ".join(known) or "none"
            raise OptionError(f"{game_name}: unknown option {key!r} (valid options: {valid})")
        try:
            out[key] = spec.parse(raw)
        except ValueError as e:
            raise OptionError(f"{game_name}: option {key}: {e}") from None
    return out
