"""The SQLite store: atomic game rows with records, no duplicates, run lock, config binding."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tournament_helpers import fake_record

from arena.tournaments.store import Store, StoreError


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
        store.bind("fp", {"name": "t"}, ["a", "b"])
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


def test_binding_refuses_another_tournament(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with Store(path, create=True) as store:
        store.bind("fp1", {"rounds": 1}, ["a", "b"])
        store.bind("fp1", {"rounds": 2}, ["a", "b"])  # same tournament, more rounds: fine
        assert store.meta()["config"] == {"rounds": 2}
        with pytest.raises(StoreError, match="another 'results' path"):
            store.bind("fp2", {}, ["a", "b"])


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
