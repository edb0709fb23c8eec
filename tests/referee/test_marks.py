"""Debug marks and per-turn stderr, from real bot processes: marks a bot attaches to its
moves and logs are recorded with their turn and seat; marks that break a rule are dropped with
a note among the bot's logs and never cost the game; whatever value a bot sends, the record
stays within the caps (docs/protocol.md, "Debug marks"). Each stderr line is recorded with the
turn in progress when it was read (docs/record.md, `stderr_turns`)."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.referee import GameRecord, MatchConfig, TimeControl, load_bot, play_match
from arena.referee.marks import MARK_NOTES, MarkBook
from arena.sandbox.process import StderrRing
from protocol.marks import (
    COLOURS,
    MARK_TEXT_CHARS,
    MARKS_BYTES,
    MARKS_PER_MESSAGE,
    MARKS_PER_TURN,
    mark_size,
)

from .conftest import bundled

MARKBOT = Path(__file__).resolve().parent / "bots" / "markbot.py"
TC = TimeControl(startup=10.0, base=30.0, increment=0.5)


def markbot(tmp_path: Path, plan: list, name: str = "plan.json"):
    path = tmp_path / name
    path.write_text(json.dumps(plan), encoding="utf-8")
    return load_bot(f"json:{sys.executable} {MARKBOT} {path}")


async def play(a, b, game: str = "stripes", **options) -> GameRecord:
    return await play_match(MatchConfig(game, dict(options), (a, b), TC, seed=5))


def stderr_by_turn(record: GameRecord, seat: int) -> list[tuple[object, str]]:
    text, cuts = record.stderr[seat], record.stderr_turns[seat]
    ends = [at for _, at in cuts[1:]] + [len(text)]
    return [(turn, text[at:end]) for (turn, at), end in zip(cuts, ends, strict=True)]


async def test_marks_of_moves_and_logs_are_recorded_with_their_turn(tmp_path):
    good = [
        [{"cell": "a1"}, {"cell": "b2", "text": "12", "colour": "green"}],
        [{"arrow": ["a1", "c3"], "colour": "blue"}, {"cell": "g7", "colour": "red", "new": 1}],
    ]
    record = await play(markbot(tmp_path, good), bundled("random-py"))
    assert not record.result["forfeit"], record.result
    assert record.marks_dropped == [0, 0]
    assert not [log for log in record.logs if log.get("arena")]
    own = [t["turn"] for t in record.turns if t["seat"] == 0]
    entries = [m for m in record.marks if m["seat"] == 0]
    # a log's marks, then the move's, for every turn the bot played
    assert [m["turn"] for m in entries] == [t for t in own for _ in (0, 1)]
    assert entries[0]["marks"] == [
        {"cell": "a1", "colour": "yellow"},
        {"cell": "b2", "text": "12", "colour": "green"},
    ]
    # normal form: the colour always named, unknown fields left out
    assert entries[1]["marks"] == [
        {"arrow": ["a1", "c3"], "colour": "blue"},
        {"cell": "g7", "colour": "red"},
    ]
    again = GameRecord.from_dict(json.loads(record.to_json()))
    assert again.marks == record.marks


async def test_marks_that_break_a_rule_are_dropped_with_a_note_and_the_game_goes_on(tmp_path):
    bad = [
        "not a list",
        [{"cell": "z99"}, {"cell": "a1", "colour": "#ff0000"}, {"cell": "a1"}],
        [{"cell": "a1", "text": "x" * (MARK_TEXT_CHARS + 1)}, 7, {"arrow": ["a1"]}],
        [{"cell": "a1", "text": "tab\there"}, {"arrow": ["a1", "a1"]}, {"cell": ["a1"]}],
        [{"cell": "a1"}] * (MARKS_PER_MESSAGE + 10),
        {"cell": "a1"},
    ]
    record = await play(markbot(tmp_path, bad), bundled("random-py"))
    # played to its end by the rules: nothing about marks is a failure
    assert not record.result["forfeit"], record.result
    assert record.result["reason"] not in ("protocol_error", "crash")
    notes = [log for log in record.logs if log.get("arena")]
    assert notes and all(n["seat"] == 0 and "turn" in n for n in notes)
    assert len(notes) <= MARK_NOTES
    text = "\n".join(n["message"] for n in notes)
    for why in (
        "marks must be a list of maps",
        "'z99' is not a cell of this board",
        "colour '#ff0000' is not one of",
        f"text must be a string of 1 to {MARK_TEXT_CHARS} characters",
        "a mark is a map",
        "arrow must be a list of two cell names",
        "control or invisible character",
        "an arrow joins two different cells",
        "mark(s) past the cap left out",
    ):
        assert why in text, why
    assert record.marks_dropped[0] > 0
    # the good mark beside the bad ones is kept; a message never keeps more than its cap
    kept = [m for m in record.marks if m["seat"] == 0]
    assert any(m["marks"] == [{"cell": "a1", "colour": "yellow"}] for m in kept)
    assert all(len(m["marks"]) <= MARKS_PER_MESSAGE for m in kept)


async def test_stderr_lines_are_recorded_with_the_turn_they_were_written_in(tmp_path):
    plan = [[{"cell": "a1"}]]
    record = await play(markbot(tmp_path, plan), markbot(tmp_path, plan, "b.json"))
    assert not record.result["forfeit"], record.result
    for seat in (0, 1):
        parts = stderr_by_turn(record, seat)
        assert "".join(text for _, text in parts) == record.stderr[seat]
        assert parts[0] == (None, "stderr before the first turn\n")
        own = [t["turn"] for t in record.turns if t["seat"] == seat]
        # every "stderr of turn T" line is in the part recorded for turn T
        assert [(turn, f"stderr of turn {turn}\n") for turn in own] == parts[1:], parts


@settings(max_examples=300, deadline=None)
@given(
    messages=st.lists(
        st.tuples(
            st.integers(0, 1),
            st.integers(1, 4),
            st.recursive(
                st.none()
                | st.booleans()
                | st.integers()
                | st.sampled_from(["a1", "b2", "z9", "red", "#fff", "<script>", "e5"])
                | st.text(max_size=20),
                lambda inner: (
                    st.lists(inner, max_size=80)
                    | st.dictionaries(
                        st.sampled_from(["cell", "arrow", "text", "colour", "color", "x"]),
                        inner,
                        max_size=4,
                    )
                ),
                max_leaves=300,
            ),
        ),
        max_size=40,
    )
)
def test_any_marks_value_is_taken_without_error_and_within_the_caps(messages) -> None:
    record = GameRecord()
    book = MarkBook(record, frozenset({"a1", "b2", "e5"}))
    for seat, turn, value in messages:
        note = book.take(seat, turn, 0.0, value)
        assert note is None or isinstance(note, str)
    per_turn: dict[tuple[int, int], int] = {}
    size = [0, 0]
    for entry in record.marks:
        assert 1 <= len(entry["marks"]) <= MARKS_PER_MESSAGE
        key = (entry["seat"], entry["turn"])
        per_turn[key] = per_turn.get(key, 0) + len(entry["marks"])
        for mark in entry["marks"]:
            size[entry["seat"]] += mark_size(mark)
            assert mark["colour"] in COLOURS
            cells = mark["arrow"] if "arrow" in mark else [mark["cell"]]
            assert set(cells) <= {"a1", "b2", "e5"}
            if "text" in mark:
                assert 1 <= len(mark["text"]) <= MARK_TEXT_CHARS and mark["text"].isprintable()
    assert all(n <= MARKS_PER_TURN for n in per_turn.values())
    assert max(size) <= MARKS_BYTES
    json.dumps(record.marks)  # plain data


def test_a_flood_of_marks_stops_at_the_bytes_a_game_allows() -> None:
    record = GameRecord()
    book = MarkBook(record, frozenset({"a1"}))
    mark = {"cell": "a1", "text": "\u00e9" * MARK_TEXT_CHARS, "colour": "purple"}
    for turn in range(1, 2000):
        book.take(0, turn, 0.0, [mark] * MARKS_PER_MESSAGE)
    kept = sum(mark_size(m) for e in record.marks for m in e["marks"])
    assert MARKS_BYTES - mark_size(mark) < kept <= MARKS_BYTES
    assert record.marks_dropped[0] > 0
    assert sum(1 for log in record.logs) == 0  # notes are the referee's to log, see above


@settings(max_examples=200, deadline=None)
@given(
    capacity=st.integers(0, 64),
    events=st.lists(
        st.one_of(
            st.text(alphabet="ab\n", max_size=40).map(str.encode),
            st.integers(0, 5).map(lambda t: ("tag", t)),
        ),
        max_size=60,
    ),
)
def test_the_stderr_ring_keeps_its_tail_and_each_parts_tag(capacity, events) -> None:
    ring = StderrRing(capacity)
    written = bytearray()
    tags: list[object] = []  # the tag of every byte written
    for event in events:
        if isinstance(event, tuple):
            ring.retag(event[1])
        else:
            ring.feed(event)
            written += event
            tags += [ring.tag] * len(event)
    start = max(0, len(written) - capacity)
    parts = ring.segments()
    assert "".join(text for _, text in parts) == written[start:].decode() == ring.text()
    # every part has the tag its bytes were read under, and no two parts in a row share one
    at = start
    for part_tag, text in parts:
        assert text and set(tags[at : at + len(text)]) == {part_tag}
        at += len(text)
    assert all(a[0] != b[0] for a, b in itertools.pairwise(parts))


def test_the_sdk_sends_marks_with_the_reply(tmp_path) -> None:
    bot = tmp_path / "sdkbot"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "sdkbot"\ncommand = ["python3", "bot.py"]\n')
    (bot / "bot.py").write_text(
        "from protocol.sdk import mark_of, run_bot\n\n"
        "def choose(turn, bot):\n"
        "    bot.log('why', marks=[mark_of('a1', colour='teal')])\n"
        "    bot.mark('b2', text='+1', colour='green')\n"
        "    bot.mark(arrow=('a1', 'c3'))\n"
        "    return turn['legal'][0]\n\n"
        "raise SystemExit(run_bot(choose))\n"
    )
    record = trio.run(play, load_bot(bot), bundled("random-py"))
    mine = [m["marks"] for m in record.marks if m["seat"] == 0]
    assert mine[:2] == [
        [{"cell": "a1", "colour": "teal"}],
        [
            {"cell": "b2", "text": "+1", "colour": "green"},
            {"arrow": ["a1", "c3"], "colour": "yellow"},
        ],
    ]
    assert record.marks_dropped == [0, 0]
