"""The in-process executor stores a record as the referee worker encoded it: the text it takes
from the worker's reply line is exactly the record's compact JSON, or nothing."""

from __future__ import annotations

import json

from arena.league.db import ledger
from arena.workers.wire import encode, record_text

RECORD = {
    "format": "arena-record/1",
    "result": {"winner": 1, "reason": "score", "scores": [3, 4]},
    "turns": [{"actions": ["a1", "b2"], "t": [0.001, 1e-05]}],
    "stderr": ['caf\u00e9 \u2603 "quoted"\n', ""],
    "duration": 0.25,
}


def test_the_records_text_is_cut_exactly_from_the_workers_line():
    line = encode({"type": "record", "game_id": 42, "record": RECORD})
    reply = json.loads(line)
    text = record_text(reply, line)
    assert text is not None and json.loads(text) == RECORD
    assert ledger.decompress_record(ledger.compress_record(RECORD)) == json.loads(text)
    assert text == encode(RECORD).rstrip(b"\n")  # the record's own compact JSON, unchanged


def test_any_other_shape_gives_nothing():
    line = encode({"type": "record", "game_id": 42, "record": RECORD, "extra": 1})
    assert record_text(json.loads(line), line) is None
    line = encode({"game_id": 42, "type": "record", "record": RECORD})
    assert record_text(json.loads(line), line) is None
    line = encode({"type": "record", "game_id": 42, "record": RECORD})
    assert record_text({"type": "record", "game_id": 43, "record": RECORD}, line) is None
