"""The SQLite store: atomic game rows with records, no duplicates, run lock, config binding."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

import pytest

from arena.tournaments.store import Store, StoreError

from .tournament_helpers import fake_record


def _record(store: Store, gid: str, winner: int | None = 0, run_id: int = 1, **kw) -> None:
    store.record_game(
        game_id=gid,
        seq=0,
        round_=1,
        game="wrigglers",
        pair=0,
        seat_order=0,
        attempt=1,
        run_id=run_id,
        record=fake_record(gid, ("a", "b"), winner, **kw),
    )


def test_wal_and_roundtrip(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "r.sqlite"
    with Store(path, create=True) as store:
        bind(store, {"name": "t"}, ["a", "b"])
        run = store.start_run(4, 4)
        _record(store, "g1", 0, run)
        _record(store, "g2", None, run, reason="max_turns")
        mode = store.db.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    with Store(path) as store:
        rows = store.games()
        assert [r.game_id for r in rows] == ["g1", "g2"]
        assert rows[0].bots == ("a", "b") and rows[0].points(0) == 1.0
        assert rows[1].winner is None and rows[1].points(1) == 0.5
        assert rows[0].duration == pytest.approx(1.5)
        assert store.record("g1")["match_id"] == "g1"
        assert store.recorded_ids() == {"g1", "g2"}
        assert store.runs()[0]["played"] == 2
        assert store.meta()["bots"] == ["a", "b"]


def test_a_game_is_recorded_once(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite", create=True) as store:
        _record(store, "g1")
        with pytest.raises(sqlite3.IntegrityError):
            _record(store, "g1", 1)
        assert store.count_games() == 1
        assert store.games()[0].winner == 0  # the failed insert rolled back


def test_voids(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite", create=True) as store:
        run = store.start_run(1, 1)
        store.record_void("g1", 1, "SandboxFault: docker down", run)
        store.record_void("g1", 2, "SandboxFault: docker down", run)
        assert store.void_counts() == {"g1": 2}
        assert store.voids()[1]["attempt"] == 2
        assert store.runs()[0]["voided"] == 2
        assert store.count_games() == 0


def identity(bots: list[str], **changes: object) -> dict:
    base = {
        "bots": {b: {"args": []} for b in bots},
        "games": {"papagra": {"name": "papagra", "options": {}}},
        "time_control": {"base": 1.0},
        "seed": 1,
        "opening_turns": 2,
    }
    return {**base, **changes}


def bind(store: Store, config: dict, bots: list[str], pairs=None, **changes: object):
    pairs = pairs if pairs is not None else list(itertools.combinations(bots, 2))
    return store.bind(identity(bots, **changes), config, bots, pairs, "fp")


def test_binding_refuses_another_tournament(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with Store(path, create=True) as store:
        bind(store, {"rounds": 1}, ["a", "b"])
        bind(store, {"rounds": 2}, ["a", "b"])  # same tournament, more rounds: fine
        assert store.meta()["config"] == {"rounds": 2}
        with pytest.raises(StoreError, match="another 'results' path") as e:
            bind(store, {}, ["a", "b"], seed=2)
        assert "seed changed from 1 to 2" in str(e.value)
        with pytest.raises(StoreError, match="bot 'b' removed"):
            bind(store, {}, ["a", "c"])
        with pytest.raises(StoreError, match=r"bot 'a': args changed from \[\] to \[\"-x\"\]"):
            store.bind(
                {**identity(["a", "b"]), "bots": {"a": {"args": ["-x"]}, "b": {"args": []}}},
                {},
                ["a", "b"],
                [("a", "b")],
                "fp",
            )
        with pytest.raises(StoreError, match="pairing 'a' vs 'b' no longer played"):
            bind(store, {}, ["a", "b", "c"], pairs=[("a", "c"), ("b", "c")])


def test_a_growing_pool_keeps_its_pair_numbers(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite", create=True) as store:
        assert bind(store, {}, ["a", "b", "c"]) == [("a", "b"), ("a", "c"), ("b", "c")]
        # a bot added in the middle of the list: the old pairings keep numbers 0-2
        table = bind(store, {}, ["a", "d", "b", "c"])
        assert table[:3] == [("a", "b"), ("a", "c"), ("b", "c")]
        assert table[3:] == [("a", "d"), ("d", "b"), ("d", "c")]
        # a game added is an extension too
        games = {**identity([])["games"], "stripes": {"name": "stripes", "options": {}}}
        bots = ["a", "d", "b", "c"]
        assert bind(store, {}, bots, games=games) == table
        assert store.meta()["pairs"] == [list(p) for p in table]


def test_a_legacy_results_file_is_resumed_by_its_fingerprint(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite", create=True) as store:
        with store._transaction() as db:  # a file as written before pairings were stored
            for k, v in {"schema": 1, "fingerprint": "fp", "bots": ["a", "b", "c"]}.items():
                db.execute("INSERT INTO meta VALUES (?, ?)", (k, json.dumps(v)))
        assert bind(store, {}, ["a", "b", "c"]) == [("a", "b"), ("a", "c"), ("b", "c")]
        assert "identity" in store.meta()
    with Store(tmp_path / "s.sqlite", create=True) as store:
        with store._transaction() as db:
            for k, v in {"schema": 1, "fingerprint": "other", "bots": ["a", "b"]}.items():
                db.execute("INSERT INTO meta VALUES (?, ?)", (k, json.dumps(v)))
        with pytest.raises(StoreError, match="another 'results' path"):
            bind(store, {}, ["a", "b"])


def test_run_lock(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with Store(path, create=True) as one:
        one.lock_for_writing()
        with Store(path) as two, pytest.raises(StoreError, match="in use"):
            two.lock_for_writing()
    with Store(path) as three:  # released with the first store
        three.lock_for_writing()


def test_killed_run_is_marked(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with Store(path, create=True) as store:
        store.start_run(10, 10)  # never finished: as if killed
    with Store(path) as store:
        run = store.start_run(10, 8)
        store.finish_run(run, "complete")
        assert [r["status"] for r in store.runs()] == ["killed", "complete"]


def test_not_a_results_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results file"):
        Store(tmp_path / "absent.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"hello" * 100)
    with pytest.raises(StoreError, match="not a tournament results file"):
        Store(junk)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE x (y)").connection.close()
    with pytest.raises(StoreError, match="not a tournament results file"):
        Store(other)


def test_record_json_is_complete(tmp_path: Path) -> None:
    with Store(tmp_path / "r.sqlite", create=True) as store:
        _record(store, "g1")
        raw = store.db.execute("SELECT record FROM games").fetchone()[0]
    assert json.loads(raw) == fake_record("g1", ("a", "b"), 0)


def test_results_file_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError, match="cannot create the results file"):
        Store(blocker / "sub" / "r.sqlite", create=True)
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(StoreError, match="cannot open the results file"):
        Store(tmp_path / "dir.sqlite", create=True)


def test_a_legacy_results_file_names_what_a_config_changes(tmp_path: Path) -> None:
    """A file written before pools could grow stores a fingerprint and its config summary:
    a config that differs is refused with each difference named, additions included."""
    summary = {
        "games": [{"label": "papagra", "name": "papagra", "options": {}}],
        "time_control": {"base": 1.0},
        "seed": 1,
        "opening_turns": 2,
    }
    with Store(tmp_path / "r.sqlite", create=True) as store:
        with store._transaction() as db:
            meta = {"schema": 1, "fingerprint": "old", "bots": ["a", "b"], "config": summary}
            for k, v in meta.items():
                db.execute("INSERT INTO meta VALUES (?, ?)", (k, json.dumps(v)))
        games = {"papagra": {"name": "papagra", "options": {"size": 5}}}
        with pytest.raises(StoreError) as e:
            bind(store, {}, ["b", "a", "c"], games=games, time_control={"base": 2.0})
    text = str(e.value)
    assert "written before tournaments could grow" in text
    for change in (
        "time_control.base changed from 1.0 to 2.0",
        """game 'papagra': options changed from {} to {"size":5}""",
        "bot 'c' added",
        "bots in another order",
        "another 'results' path",
    ):
        assert change in text, text
