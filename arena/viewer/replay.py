"""A game record turned into replay data: what the viewer shows at every step of the game.

One step per action, replayed through the rules engine (`GameRecord.replay_states` checks the
record as it goes), so stepping "by action" and "by turn" are the same list read two ways. The
board is sent once as the engine's SVG; each step carries only the cells whose drawing changed,
as the inner markup of their `data-cell` group, which keeps a 1,000-action game to a few hundred
kilobytes and lets any page that has the SVG apply a step. Everything is JSON-safe.

Beside the steps, what the bots said and drew is keyed by the turn it belongs to (`turn_extras`):
log lines, debug marks and stderr lines (the record's `stderr_turns`), so the viewer shows at
each step those of the turn it shows (step 0: those from before the first turn). They are kept
apart from the steps so that a page can show the same replay with or without them: the league
draws a finished game's replay once for everyone and adds its owner's part per request.

Text that came from a bot (names, logs, marks, stderr, illegal actions, failure details) is
passed through as data, never as markup: the viewer writes it with `textContent`. Only the
SVG markup is markup, and the engine makes it from its own state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from arena.games import State, game_class
from arena.referee.clock import TimeControl
from arena.referee.outcome import reason_text
from arena.referee.record import GameRecord

REPLAY_FORMAT = "arena-replay/1"

_CELL_GROUP = re.compile(r'<g class="cell" data-cell="([a-z]+[0-9]+)">(.*?)</g>', re.S)
_CELL_NAME = re.compile(r"[a-z]+[0-9]+")
#: the outline of the last action's cells (viewer.css has the same colour)
MARK = "#00b050"


def cell_markup(svg: str) -> dict[str, str]:
    """Cell name -> the inner markup of its group in an engine SVG."""
    return dict(_CELL_GROUP.findall(svg))


def action_cells(action: str) -> list[str]:
    """The cell names an action mentions (`e5`, `-e5`, `c3-d4`); none for `pass` or a number."""
    return _CELL_NAME.findall(action)


def mark_cells(svg: str, cells: Sequence[str], changed: Sequence[str] = ()) -> str:
    """The SVG with the action's `cells` outlined, and other `changed` cells outlined dashed,
    for standalone files: a `<style>` rule, and the marked groups moved to the end of the
    drawing so that no neighbour covers their outline."""
    solid = [c for c in dict.fromkeys(cells) if _CELL_NAME.fullmatch(c)]
    dashed = [c for c in dict.fromkeys(changed) if _CELL_NAME.fullmatch(c) and c not in solid]
    if not solid and not dashed:
        return svg
    rules = []
    for names, extra in ((dashed, " stroke-width: 2.5px; stroke-dasharray: 4 3;"), (solid, "")):
        if names:
            selector = ", ".join(f'g[data-cell="{c}"] > :first-child' for c in names)
            rules.append(f"{selector} {{ stroke: {MARK}; stroke-width: 4px;{extra} }}")
    groups = cell_markup(svg)
    moved = ""
    for name in dashed + solid:
        if name in groups:
            group = f'<g class="cell" data-cell="{name}">{groups[name]}</g>'
            svg = svg.replace(group, "", 1)
            moved += group
    head, sep, rest = svg.partition(">")
    body, end, tail = rest.rpartition("</svg>")
    return f"{head}{sep}<style>{' '.join(rules)}</style>{body}{moved}{end}{tail}"


def _status(state: State) -> str:
    colours = state.game.colours
    result = state.result()
    if result is not None:
        return result.detail or reason_text(result.reason)
    seat = state.current_player()
    todo = state.actions_remaining()
    return f"turn {state.turn_number()}: {colours[seat or 0]} to move ({todo} action(s) left)"


class ReplayBuilder:
    """The steps of a replay, made one recorded turn at a time.

    `replay_data` feeds it a whole record; the league feeds it each turn of a game in flight
    (arena/league/live.py), so a live game and its final replay are drawn by the same code.
    `state` is the position after the opening; `add_turn` takes a turn entry and the position
    after it.
    """

    def __init__(self, record: GameRecord, state: State) -> None:
        self.record = record
        self.cls = game_class(record.game)
        self.board = state.render_svg()
        self.shown = cell_markup(self.board)
        tc = TimeControl.from_dict(record.time_control) if record.time_control else None
        self.tc = tc
        #: each seat's clock: its own where the game gave it one (time odds, a person's seat)
        self.tcs = [
            TimeControl.from_dict(bot["time_control"]) if bot.get("time_control") else tc
            for bot in record.bots
        ] or [tc, tc]
        start_clocks = [t.base if t is not None else None for t in self.tcs]
        self.steps: list[dict[str, Any]] = [
            {
                "turn": None,
                "seat": None,
                "action": None,
                "scores": list(state.scores()),
                "clocks": start_clocks,
                "status": _status(state),
                "logs": [0, 0],
                "first_of_turn": True,
            }
        ]
        #: the time banks (docs/record.md): every step carries what was left of each seat's
        #: (null: the seat has none), the last step of a turn what the turn drew
        start_banks = [t.bank if t is not None and t.bank else None for t in self.tcs]
        self.banked = any(b is not None for b in start_banks)
        if self.banked:
            self.steps[0]["banks"] = start_banks
        # the replay goes turn by turn; within a turn, re-apply the actions one at a time to a
        # clone of the position before the turn, so that every action gets its own picture
        self.before = state.clone()

    def add_turn(self, entry: dict[str, Any], after: State, logs: list[int]) -> list[dict]:
        """The steps of one turn (appended to `steps` and returned)."""
        pos = self.before
        shown = self.shown
        common = {
            "turn": entry["turn"],
            "seat": entry["seat"],
            "clocks": entry.get("clocks_after") or [None, None],
            "logs": logs,
        }
        if self.banked:
            common["banks"] = entry.get("banks_after") or self.steps[-1].get("banks")
        turn_steps: list[dict[str, Any]] = []
        for item in entry["actions"]:
            step = {**common, "action": item["action"], "elapsed": item.get("elapsed", 0.0)}
            if item.get("illegal"):
                step["illegal"] = True
                step["cells"] = {}
            elif not pos.is_terminal():
                pos.apply(item["action"])
                step["cells"] = _changed(shown, cell_markup(pos.render_svg()))
            step["scores"] = list(pos.scores())
            step["status"] = _status(pos)
            turn_steps.append(step)
        if entry.get("resigned") or not turn_steps:
            # a turn without an action: a resignation, or a forfeit before any action
            reason = self.record.result.get("reason")
            note = "resigns" if entry.get("resigned") else reason_text(reason)
            turn_steps.append({**common, "action": None, "note": note, "cells": {}, "elapsed": 0.0})
        # the end of the turn (an early end, a finished game) is the engine's word on it
        last = turn_steps[-1]
        if pos.key() != after.key():  # else the picture is the last action's (most turns)
            last["cells"] = {**last["cells"], **_changed(shown, cell_markup(after.render_svg()))}
        last["scores"] = list(after.scores())
        last["status"] = _status(after)
        last["elapsed_turn"] = entry.get("elapsed", 0.0)
        if entry.get("bank_drawn"):
            last["bank_drawn"] = float(entry["bank_drawn"])
        if entry.get("accounting") not in (None, "none"):
            # the turn's accounting (docs/record.md): numbers only, the page formats them
            last["account"] = {
                k: float(entry.get(k, 0.0)) for k in ("cpu", "wait", "late", "host", "charged")
            }
        turn_steps[0]["first_of_turn"] = True
        self.steps.extend(turn_steps)
        self.before = after.clone()
        return turn_steps

    def _describe_clocks(self) -> str:
        """The time control, or each seat's when they differ ("pink 300+5, black 5+0.05")."""
        if all(t == self.tc for t in self.tcs):
            return self.tc.describe() if self.tc is not None else ""
        bots = self.record.bots
        colours = [str(b.get("colour", self.cls.colours[s])) for s, b in enumerate(bots)]
        return ", ".join(
            f"{colour} {t.describe() if t is not None else '?'}"
            for colour, t in zip(colours, self.tcs, strict=False)
        )

    def data(self) -> dict[str, Any]:
        """The replay as made so far (the record's result and logs as they stand)."""
        record, cls = self.record, self.cls
        result = dict(record.result)
        return {
            "format": REPLAY_FORMAT,
            "match_id": record.match_id,
            "game": record.game,
            "title": cls.title,
            "options": record.options,
            "seed": record.seed,
            "time_control": self._describe_clocks(),
            "started_at": record.started_at,
            "players": [
                {
                    "seat": seat,
                    "name": str(bot.get("name", "")),
                    "colour": str(bot.get("colour", cls.colours[seat])),
                    "version": str(bot.get("version", "")),
                }
                for seat, bot in enumerate(record.bots)
            ],
            "opening_turns": len(record.opening),
            "board": self.board,
            "steps": self.steps,
            **turn_extras(record),
            "result": {
                "result": result.get("result"),
                "winner": result.get("winner"),
                "reason": result.get("reason"),
                # the code in words (REASON_WORDS), what the viewer shows
                "reason_text": reason_text(result.get("reason")),
                "detail": result.get("detail", ""),
                "scores": result.get("scores"),
            },
        }


def replay_data(record: GameRecord) -> dict[str, Any]:
    """The replay of a record, step by step; RecordError if the record does not replay."""
    states = record.replay_states()
    _, state = next(states)
    builder = ReplayBuilder(record, state)
    logs = sorted(record.logs, key=lambda x: x["t"])
    log_i = 0
    for entry, after in states:
        assert entry is not None
        t_end = entry.get("t", float("inf"))
        log_from = log_i
        while log_i < len(logs) and logs[log_i]["t"] <= t_end:
            log_i += 1
        builder.add_turn(entry, after, [log_from, log_i])
    steps = builder.steps
    if log_i < len(logs):
        steps[-1]["logs"] = [steps[-1]["logs"][0], len(logs)]
    return builder.data()


def turn_extras(record: GameRecord, seats: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    """The logs, debug marks and stderr of `seats` in a record, each with the turn it belongs
    to (None: before the first turn), as the viewer shows them beside each step. A log line
    of an older record, which names no turn, is given the turn that was being played when it
    came (the first turn that ended after it); stderr of a record without `stderr_turns` is
    all shown at the last turn."""
    ends = [(t.get("t", float("inf")), t.get("turn")) for t in record.turns]
    last_turn = ends[-1][1] if ends else None

    def turn_of(log: dict[str, Any]) -> Any:
        if "turn" in log:
            return log["turn"]
        t = log.get("t", 0.0)
        return next((turn for end, turn in ends if t <= end), last_turn)

    logs = []
    for log in sorted(record.logs, key=lambda x: x.get("t", 0.0)):
        if log.get("seat") not in seats:
            continue
        item = {
            "seat": log["seat"],
            "t": log.get("t", 0.0),
            "message": str(log.get("message", "")),
            "turn": turn_of(log),
        }
        if log.get("arena"):
            item["arena"] = True
        logs.append(item)
    marks = [
        {"seat": m["seat"], "turn": m.get("turn"), "marks": list(m.get("marks") or ())}
        for m in record.marks
        if isinstance(m, dict) and m.get("seat") in seats
    ]
    stderr = []
    for seat in seats:
        text = record.stderr[seat] if seat < len(record.stderr) else ""
        if not text:
            continue
        cuts = record.stderr_turns[seat] if seat < len(record.stderr_turns) else []
        if not cuts:
            cuts = [[last_turn, 0]]
        for i, (turn, at) in enumerate(cuts):
            end = cuts[i + 1][1] if i + 1 < len(cuts) else len(text)
            if text[at:end]:
                stderr.append({"seat": seat, "turn": turn, "text": text[at:end]})
    return {
        "logs": logs,
        "logs_dropped": list(record.logs_dropped),
        "marks": marks,
        "marks_dropped": list(record.marks_dropped),
        "stderr": stderr,
    }


def _changed(shown: dict[str, str], now: dict[str, str]) -> dict[str, str]:
    """The cells whose markup differs from what is shown; updates `shown` to `now`."""
    diff = {name: markup for name, markup in now.items() if shown.get(name) != markup}
    shown.update(diff)
    return diff
