"""Builds the test vectors from the rules engines, deterministically, byte for byte.

Why search rather than hand-written sequences: a corner case (a forced pass, a mark blocked by
the opponent's, a stone with no landing) is easiest to state as a *predicate* over one action
("the legal list is only `pass`"), and a seeded random playout that meets it is a replayable
sequence of actions from the start by construction. So every game has a list of detectors; the
generator plays seeded playouts (string seeds, which `random.Random` hashes the same way in
every Python) under each option set, in a fixed order, and keeps the first position each
detector accepts. A detector that no playout meets is an error, not a silent omission: an engine
change that makes a corner case unreachable must be noticed. A few seeded playouts are sampled
at evenly spaced steps on top, for plain breadth.

Every vector is independent: it holds the whole game so far (`turns`, complete turns as the
record and `--opening` spell them, plus `turn_actions` of the unfinished one), so a reader can
replay it alone, and the position exactly as a `turn` message carries it. The output is JSON
with one vector per line: small (see MAX_FILE_BYTES), readable and diff-friendly.

The engines are the only source of truth: nothing here knows a rule beyond what it asks a
`State` (and, to *find* a corner case, what the position's documented keys say).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.games import GAME_NAMES, State, make_game

#: the format of the files; bump it when a field changes meaning (docs/vectors.md)
FORMAT = 1
#: how to rebuild the files, written into each one
GENERATOR = "python -m protocol.vectors"
#: every file stays under this, so a reader's repository need not carry megabytes
MAX_FILE_BYTES = 250_000
#: playouts tried per option set while a detector is still unmet
SEARCH_PLAYOUTS = 300
#: a playout stops here even when its game has not ended (long random games)
MAX_PLAYOUT_ACTIONS = 2000


# --- playing -----------------------------------------------------------------------------------
@dataclass
class Progress:
    """A game being played, with the turns as the protocol groups them."""

    state: State
    #: complete turns so far, each the list of its actions
    turns: list[list[str]] = field(default_factory=list)
    #: the actions of the turn in progress
    current: list[str] = field(default_factory=list)

    def snapshot(self) -> tuple[list[list[str]], list[str], State]:
        return [list(t) for t in self.turns], list(self.current), self.state.clone()

    def apply(self, action: str) -> None:
        turn = self.state.turn_number()
        self.state.apply(action)
        self.current.append(action)
        if self.state.is_terminal() or self.state.turn_number() != turn:
            self._close()

    def end_turn(self) -> None:
        self.state.end_turn()
        self._close()

    def _close(self) -> None:
        self.turns.append(self.current)
        self.current = []


def replay(
    game: str,
    options: Mapping[str, Any],
    turns: Sequence[Sequence[str]],
    turn_actions: Sequence[str],
) -> State:
    """The position a vector names, rebuilt from the start: each complete turn's actions, then
    `end_turn` where a turn is complete but only optional actions were left (Papagra's
    `extra_removals`), then the unfinished turn's actions. The way a reader replays one."""
    state = make_game(game, options).new_initial_state()
    for turn in turns:
        start = state.turn_number()
        for action in turn:
            state.apply(action)
        if not state.is_terminal() and state.turn_number() == start:
            state.end_turn()
    for action in turn_actions:
        state.apply(action)
    return state


def vector(
    vid: str,
    about: str,
    game: str,
    turns: list[list[str]],
    turn_actions: list[str],
    state: State,
) -> dict[str, Any]:
    """One vector: what to replay, the position as `turn` carries it, and the answers."""
    result = state.result()
    return {
        "id": vid,
        "about": about,
        "options": dict(state.game.options),
        "turns": turns,
        "turn_actions": turn_actions,
        "position": state.describe(),
        "to_move": state.current_player(),
        "actions_remaining": state.actions_remaining(),
        "can_end_turn": state.can_end_turn(),
        "legal": state.legal_actions(),
        "scores": list(state.scores()),
        "terminal": state.is_terminal(),
        "result": None
        if result is None
        else {
            "result": result.result_string,
            "winner": result.winner,
            "reason": result.reason,
            "scores": list(result.scores),
            "detail": result.detail,
        },
    }


# --- detectors ---------------------------------------------------------------------------------
#: (before, action, after) -> True when the step shows the corner case; `action` is None for the
#: early end of a turn (Papagra's optional actions skipped)
Predicate = Callable[[State, str | None, State], bool]


@dataclass(frozen=True)
class Detector:
    """A corner case: its name (the vector's id), a sentence for readers, which option sets
    to search, and whether the vector is the position before the step (to check legal
    actions there) or after it (to check scores and the end)."""

    name: str
    about: str
    options: tuple[Mapping[str, Any], ...]
    test: Predicate
    at: str = "after"  # or "before"
    #: playouts lean towards adds or removals (`-` actions), per seat and playout: the random
    #: mix rarely fills a board with one colour
    biased: bool = False


def _neighbours4(cell: str) -> list[str]:
    col, row = _split(cell)
    return [f"{_col(col + dc)}{row + dr}" for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1))]


def _split(cell: str) -> tuple[int, int]:
    i = 0
    while cell[i].isalpha():
        i += 1
    col = 0
    for ch in cell[:i]:
        col = col * 26 + ord(ch) - 96
    return col, int(cell[i:])


def _col(n: int) -> str:
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(97 + r) + out
    return out or "?"


def _crowded(state: State, seat: int) -> bool:
    """Wrigglers: a stone of `seat` with 3 or more own neighbours (its group scores nothing)."""
    pos = state.describe()
    colour = state.game.colours[seat]
    cells = pos["cells"]
    return any(
        content == colour and sum(cells.get(n) == colour for n in _neighbours4(c)) >= 3
        for c, content in cells.items()
    )


def _created(before: State, after: State) -> tuple[set[int], set[int]]:
    """Papagra: sizes of the matched groups each colour gained by this step."""
    old = {(seat, tuple(cells)) for seat, cells in before.matched_groups()}  # type: ignore[attr-defined]
    new = {(seat, tuple(cells)) for seat, cells in after.matched_groups()}  # type: ignore[attr-defined]
    sizes: tuple[set[int], set[int]] = (set(), set())
    for seat, cells in new - old:
        sizes[seat].add(len(cells))
    return sizes


def _mark_blocked(before: State, action: str | None, after: State) -> bool:
    """A created size above the colour's mark that the mark did not take."""
    if action is None:
        return False
    created = _created(before, after)
    old, new = before.scores(), after.scores()
    return any(any(k > old[s] and new[s] != k for k in created[s]) for s in (0, 1))


def _same_size_both(before: State, action: str | None, after: State) -> bool:
    """One action creates the same size in both colours, above both marks: the mover's mark
    takes it, the opponent's may not (though it was free a moment before)."""
    seat = before.current_player()
    if action is None or seat is None:
        return False
    created = _created(before, after)
    old = before.scores()
    return any(k > old[0] and k > old[1] for k in created[seat] & created[1 - seat])


def _opponent_mark_only(before: State, action: str | None, after: State) -> bool:
    seat = before.current_player()
    if action is None or seat is None:
        return False
    old, new = before.scores(), after.scores()
    return old[seat] == new[seat] and old[1 - seat] != new[1 - seat]


def _pos(state: State) -> dict[str, Any]:
    return state.describe()


def _ends(reason: str) -> Predicate:
    def test(before: State, action: str | None, after: State) -> bool:
        res = after.result()
        return res is not None and res.reason == reason

    return test


def _papagra() -> list[Detector]:
    hex3 = {"board": "hex 3", "max_turns": 60}
    sq4 = {"board": "square 4", "max_turns": 60}
    extra = {"board": "hex 3", "extra_removals": 2, "max_turns": 60}
    tiny = {"board": "square 2"}
    small = (hex3, sq4)
    return [
        Detector(
            "second-action",
            "mid-turn: the second action of a two-action turn (turn_actions holds the first)",
            ({},),
            lambda b, a, s: len(s.turn_actions()) == 1 and s.turn_number() > 3,
        ),
        Detector(
            "remove-just-added",
            "removing the stone added by the first action of the same turn is legal",
            small,
            lambda b, a, s: bool(b.turn_actions()) and a == "-" + b.turn_actions()[-1],
        ),
        Detector(
            "mark-moves",
            "an action creates a matched group: the mover's colour's mark (its score) moves up",
            ({},),
            lambda b, a, s: b.scores() != s.scores() and b.turn_number() > 6,
        ),
        Detector(
            "opponent-mark-moves",
            "an action creates a matched group of the opponent's colour: the opponent's mark "
            "moves during the mover's turn",
            small,
            _opponent_mark_only,
        ),
        Detector(
            "both-marks-move",
            "one action raises both marks (the mover's moves first)",
            small,
            lambda b, a, s: all(s.scores()[i] != b.scores()[i] for i in (0, 1)),
        ),
        Detector(
            "mark-blocked",
            "a created group's size is taken by the opponent's mark (or by the mover's "
            "same-size group): the mark stays where it was",
            small,
            _mark_blocked,
        ),
        Detector(
            "same-size-both-colours",
            "one action creates matched groups of the same size in both colours: only the "
            "mover's mark may take that number",
            small,
            _same_size_both,
        ),
        Detector(
            "optional-third-action",
            "extra_removals: after two actions only the optional removal is left "
            "(can_end_turn is true; multi-stone removals like -a1-c1 are legal)",
            (extra,),
            lambda b, a, s: s.can_end_turn() and not s.is_terminal(),
            at="after",
        ),
        Detector(
            "multi-removal",
            "extra_removals: the optional third action removes several own stones at once",
            (extra,),
            lambda b, a, s: a is not None and a.count("-") >= 2,
        ),
        Detector(
            "turn-ended-early",
            "extra_removals: a turn that ended after two actions, skipping the optional one",
            (extra,),
            lambda b, a, s: a is None and s.turn_number() > 4,
        ),
        Detector(
            "end-repetition",
            "the third repetition at the end of a turn",
            small,
            _ends("repetition"),
        ),
        Detector("end-max-turns", "the turn limit", small, _ends("max_turns")),
        Detector(
            "end-board-full",
            "every cell holds a stone of the leader's colour after a turn: the leader wins",
            (tiny, {"board": "square 3"}, {"board": "hex 3"}),
            _ends("board_full"),
            biased=True,
        ),
        Detector(
            "end-no-moves",
            "the player to move has no stone to remove and no empty cell",
            (tiny, {"board": "square 3"}),
            _ends("no_moves"),
            biased=True,
        ),
    ]


def _wrigglers() -> list[Detector]:
    ludii = {"ludii_rules": True}
    return [
        Detector(
            "removal-legal",
            "a stone with 3 or more own neighbours may be removed (a `-` action is legal)",
            ({},),
            lambda b, a, s: any(x.startswith("-") for x in s.legal_actions()),
            at="after",
        ),
        Detector(
            "removal-played",
            "a removal",
            ({},),
            lambda b, a, s: a is not None and a.startswith("-"),
        ),
        Detector(
            "overcrowded-group",
            "a group with a stone of 3 own neighbours is no chain: it scores nothing",
            ({},),
            lambda b, a, s: b.current_player() is not None and _crowded(s, b.current_player()),
        ),
        Detector(
            "forced-pass",
            "neither add nor remove is possible: pass is the only legal action",
            ({},),
            lambda b, a, s: s.legal_actions() == ["pass"],
        ),
        Detector(
            "ludii-pass-any-time",
            "ludii_rules: pass is legal beside other actions",
            (ludii,),
            lambda b, a, s: "pass" in s.legal_actions() and len(s.legal_actions()) > 1,
        ),
        Detector(
            "ludii-no-second-removal",
            "ludii_rules: a player who removed last turn may not remove again, though a stone "
            "has 3 own neighbours",
            (ludii,),
            lambda b, a, s: (
                s.current_player() is not None
                and _pos(s)["removed_last_turn"][s.current_player()]
                and _crowded(s, s.current_player())
                and not any(x.startswith("-") for x in s.legal_actions())
            ),
        ),
        Detector(
            "end-both-passed",
            "both passed in succession; the higher score wins",
            ({},),
            _ends("both_passed"),
        ),
        Detector(
            "end-tie-last-pass",
            "both passed with equal scores: the player who passed last wins",
            ({}, ludii),
            _ends("tie_last_pass"),
        ),
        Detector(
            "end-max-turns",
            "the turn limit on a 13x13 board",
            ({"size": 13, "max_turns": 40},),
            _ends("max_turns"),
        ),
        Detector(
            "board-19",
            "a 19x19 board",
            ({"size": 19, "max_turns": 30},),
            lambda b, a, s: s.turn_number() == 12,
            at="after",
        ),
    ]


def _stripes() -> list[Detector]:
    return [
        Detector(
            "second-first-stripe",
            "the second player's first stripe: 1x2 at a corner of the origin, not on red's",
            ({},),
            lambda b, a, s: s.turn_number() == 2,
            at="after",
        ),
        Detector(
            "single-cell",
            "a stripe of one cell (reachable through rule e: one longer or shorter)",
            ({},),
            lambda b, a, s: a is not None and "-" not in a,
        ),
        Detector(
            "loser-stuck-winner-plays-on",
            "the first player unable to colour a stripe has lost; the winner plays on",
            ({},),
            lambda b, a, s: not s.is_terminal() and _pos(s)["loser"] is not None,
            at="after",
        ),
        Detector("end-stuck", "the winner is stuck too: the game ends", ({},), _ends("stuck")),
        Detector(
            "end-max-turns",
            "the turn limit before anyone is stuck: more cells wins",
            ({"max_turns": 10},),
            _ends("max_turns"),
        ),
        Detector(
            "size-15",
            "a 15x15 board (origin h8)",
            ({"size": 15},),
            lambda b, a, s: s.turn_number() == 9,
            at="after",
        ),
    ]


def _phages(max_turns: int) -> list[Detector]:
    return [
        Detector(
            "part-a",
            "part (a): each own stone moves the number the opponent announced",
            ({},),
            lambda b, a, s: _pos(s)["phase"] == "a" and s.turn_number() > 3,
            at="after",
        ),
        Detector(
            "part-b",
            "part (b): announce a number (mid-turn; only numbers that let a stone move)",
            ({},),
            lambda b, a, s: _pos(s)["phase"] == "b" and s.turn_number() > 3,
            at="after",
        ),
        Detector(
            "part-c",
            "part (c): each own stone moves the number just announced",
            ({},),
            lambda b, a, s: _pos(s)["phase"] == "c" and s.turn_number() > 3,
            at="after",
        ),
        Detector(
            "number-restricted",
            "part (b) when some numbers let no stone move: those are illegal",
            ({},),
            lambda b, a, s: (
                _pos(s)["phase"] == "b" and len(s.legal_actions()) < _pos(s)["max_number"]
            ),
            at="after",
        ),
        Detector(
            "stuck-stone",
            "a stone with no legal landing: `----` is its only action",
            ({},),
            lambda b, a, s: s.legal_actions() == ["----"],
            at="after",
        ),
        Detector(
            "end-blocked",
            "four failed move attempts covering all four stones",
            ({},),
            _ends("blocked"),
        ),
        Detector(
            "end-max-turns",
            "the turn limit: more marked cells wins",
            ({"max_turns": max_turns},),
            _ends("max_turns"),
        ),
    ]


DETECTORS: dict[str, Callable[[], list[Detector]]] = {
    "papagra": _papagra,
    "wrigglers": _wrigglers,
    "stripes": _stripes,
    "quadraphages": lambda: _phages(20),
    "hexaphage": lambda: _phages(12),
}

#: the option sets sampled by plain seeded playouts (a few positions each)
SAMPLES: dict[str, tuple[Mapping[str, Any], ...]] = {
    # the default board at a shorter limit: a position of turn 400 carries 25 KB of history
    "papagra": (
        {"max_turns": 120},
        {"board": "hex 3", "max_turns": 40},
        {"board": "square 5", "max_turns": 40},
    ),
    "wrigglers": ({}, {"ludii_rules": True}),
    "stripes": ({}, {"size": 15}),
    "quadraphages": ({},),
    "hexaphage": ({},),
}
#: seeded sample playouts per option set, and positions kept from each
SAMPLE_PLAYOUTS = 2
SAMPLE_POINTS = 4


# --- playouts ----------------------------------------------------------------------------------
def _steps(
    game: str, options: Mapping[str, Any], seed: str, biased: bool = False
) -> Iterator[tuple[Progress, tuple[list[list[str]], list[str], State], str | None]]:
    """A seeded random playout, step by step: (progress after the step, snapshot before it,
    the action or None for an early end of the turn)."""
    rng = random.Random(seed)
    lean = (rng.random(), rng.random()) if biased else None
    progress = Progress(make_game(game, options).new_initial_state())
    for _ in range(MAX_PLAYOUT_ACTIONS):
        state = progress.state
        if state.is_terminal():
            return
        before = progress.snapshot()
        if state.can_end_turn() and rng.random() < 0.5:
            progress.end_turn()
            yield progress, before, None
            continue
        legal = state.legal_actions()
        if lean is not None:
            seat = state.current_player()
            assert seat is not None
            removals = [a for a in legal if a.startswith("-")]
            adds = [a for a in legal if not a.startswith("-")]
            if removals and adds:
                legal = adds if rng.random() < lean[seat] else removals
        action = rng.choice(legal)
        progress.apply(action)
        yield progress, before, action


def _key(options: Mapping[str, Any]) -> str:
    return json.dumps(dict(options), sort_keys=True, separators=(",", ":"))


def find(game: str, detector: Detector) -> dict[str, Any]:
    """The first step of the seeded playouts that meets the detector, as a vector."""
    for options in detector.options:
        for n in range(SEARCH_PLAYOUTS):
            seed = f"{game}/{detector.name}/{_key(options)}/{n}"
            for progress, before, action in _steps(game, options, seed, detector.biased):
                turns, current, prior = before
                if detector.test(prior, action, progress.state):
                    if detector.at == "before":
                        return vector(detector.name, detector.about, game, turns, current, prior)
                    turns, current, after = progress.snapshot()
                    return vector(detector.name, detector.about, game, turns, current, after)
    raise RuntimeError(
        f"{game}: no seeded playout meets {detector.name!r} ({detector.about}); "
        "the engine changed or the search is too short"
    )


def samples(game: str) -> list[dict[str, Any]]:
    """Plain seeded playouts, a few positions each, evenly spaced, ending with the last."""
    out = []
    for options in SAMPLES[game]:
        for n in range(SAMPLE_PLAYOUTS):
            seed = f"{game}/sample/{_key(options)}/{n}"
            snaps = [progress.snapshot() for progress, _, _ in _steps(game, options, seed)]
            picks = sorted(
                {(len(snaps) - 1) * (i + 1) // SAMPLE_POINTS for i in range(SAMPLE_POINTS)}
            )
            for i in picks:
                turns, current, state = snaps[i]
                about = f"seeded random playout {seed!r} after {i + 1} actions" + (
                    " (its end)" if state.is_terminal() else ""
                )
                vid = f"random-{len(out) + 1}"
                out.append(vector(vid, about, game, turns, current, state))
    return out


def build(game: str) -> dict[str, Any]:
    """Every vector of one game, as the file holds it."""
    state = make_game(game).new_initial_state()
    start = vector("start", "the starting position, default options", game, [], [], state)
    found = [find(game, d) for d in DETECTORS[game]()]
    return {
        "format": FORMAT,
        "game": game,
        "generator": GENERATOR,
        "vectors": [start, *found, *samples(game)],
    }


def render(data: dict[str, Any]) -> str:
    """The file's text: the header fields, then one vector per line (stable and diffable)."""
    head = {k: v for k, v in data.items() if k != "vectors"}
    lines = [json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in data["vectors"]]
    top = json.dumps(head, ensure_ascii=False, separators=(", ", ": "))[:-1]
    return top + ', "vectors": [\n' + ",\n".join(lines) + "\n]}\n"


def build_all() -> dict[str, str]:
    """File name -> text, for every game."""
    return {f"{game}.json": render(build(game)) for game in GAME_NAMES}


__all__ = ["FORMAT", "GENERATOR", "MAX_FILE_BYTES", "build", "build_all", "render", "replay"]
