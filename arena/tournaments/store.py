"""Durable tournament results: one SQLite file per tournament, one transaction per game.

The runner may be killed at any instant, so the database is the only truth: a game counts as
played exactly when its row is committed, and the row carries the complete game record in the
same transaction, so there is never a result without its record or the other way round. WAL
mode keeps readers (`arena tournament status` while a run is going) from blocking the writer.
`synchronous=NORMAL` survives the process being killed; after a power loss the last commits
may be missing, and those games are simply played again on resume (never twice).

The game id is the primary key, so a second insert of the same game fails loudly instead of
double-counting it. Games voided by an arena-side failure go to `voids`, not `games`.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from arena.errors import ArenaError
from arena.referee.outcome import now_iso, result_fields
from arena.tournaments.identity import changes, legacy_changes, legacy_pairs, pair_table

SCHEMA_VERSION = 1
#: quick retries when taking the run lock (see `Store.run_alive`)
LOCK_RETRIES = 5

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    game_id     TEXT PRIMARY KEY,
    seq         INTEGER NOT NULL,
    round       INTEGER NOT NULL,
    game        TEXT NOT NULL,      -- the config's game label
    game_name   TEXT NOT NULL,      -- the variant (papagra, ...)
    pair        INTEGER NOT NULL,
    seat_order  INTEGER NOT NULL,
    bot0        TEXT NOT NULL,      -- bot name in seat 0 (moved first)
    bot1        TEXT NOT NULL,
    winner      INTEGER,            -- seat, NULL for a draw
    result      TEXT NOT NULL,      -- 1-0, 0-1, 1/2-1/2
    reason      TEXT NOT NULL,
    detail      TEXT NOT NULL,
    forfeit     INTEGER NOT NULL,   -- 1 when the loser forfeited (time, illegal, crash, ...)
    loser_seat  INTEGER,
    score0      INTEGER,
    score1      INTEGER,
    turns       INTEGER,
    started_at  TEXT,
    finished_at TEXT,
    duration    REAL,               -- wall seconds the game took, start to end
    attempt     INTEGER NOT NULL,   -- 1 + voided attempts before this one
    run_id      INTEGER NOT NULL,
    record      TEXT NOT NULL       -- the full GameRecord as JSON
);
CREATE TABLE IF NOT EXISTS voids (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id   TEXT NOT NULL,
    attempt   INTEGER NOT NULL,
    reason    TEXT NOT NULL,
    at        TEXT NOT NULL,
    run_id    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id       INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at   TEXT NOT NULL,
    finished_at  TEXT,              -- NULL: still running, or killed
    status       TEXT NOT NULL,     -- running, complete, stopped, incomplete
    scheduled    INTEGER NOT NULL,  -- games in the schedule
    pending      INTEGER NOT NULL,  -- games still missing when this run started
    played       INTEGER NOT NULL DEFAULT 0,
    voided       INTEGER NOT NULL DEFAULT 0
);
"""


class StoreError(ArenaError):
    """A results file that cannot be used (wrong config, locked, not a results file)."""


@dataclass(frozen=True)
class GameRow:
    """One finished game as the reports see it (the record JSON is loaded on demand)."""

    game_id: str
    seq: int
    round: int
    game: str
    game_name: str
    pair: int
    seat_order: int
    bots: tuple[str, str]
    winner: int | None
    result: str
    reason: str
    detail: str
    forfeit: bool
    loser_seat: int | None
    scores: tuple[int | None, int | None]
    turns: int | None
    duration: float | None
    attempt: int

    @property
    def pair_key(self) -> tuple[int, str, int]:
        """The game pair (both seat orders of one opening) this game belongs to."""
        return (self.round, self.game, self.pair)

    def points(self, seat: int) -> float:
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == seat else 0.0


_ROW_COLUMNS = (
    "game_id, seq, round, game, game_name, pair, seat_order, bot0, bot1, winner, result, "
    "reason, detail, forfeit, loser_seat, score0, score1, turns, duration, attempt"
)


def _row(r: tuple) -> GameRow:
    return GameRow(
        game_id=r[0],
        seq=r[1],
        round=r[2],
        game=r[3],
        game_name=r[4],
        pair=r[5],
        seat_order=r[6],
        bots=(r[7], r[8]),
        winner=r[9],
        result=r[10],
        reason=r[11],
        detail=r[12],
        forfeit=bool(r[13]),
        loser_seat=r[14],
        scores=(r[15], r[16]),
        turns=r[17],
        duration=r[18],
        attempt=r[19],
    )


@dataclass(frozen=True)
class FinishedGame:
    """A finished game for `Store.record_games`: where it sits in the schedule and its record
    (`record_json`: the record's compact JSON text as the referee worker sent it, stored as
    is instead of being encoded again; `record` may then hold only the record's small fields,
    its head: arena/workers/wire.py `encode_reply`)."""

    game_id: str
    seq: int
    round: int
    game: str
    pair: int
    seat_order: int
    attempt: int
    record: Mapping[str, Any]
    record_json: str | None = None


def _game_row(g: FinishedGame, run_id: int) -> tuple[Any, ...]:
    """The `games` row of a finished game, in the column order of `record_games`."""
    record = g.record
    res = result_fields(record)
    bots = sorted(record["bots"], key=lambda b: b["seat"])
    text = g.record_json
    if text is None:
        text = json.dumps(record, separators=(",", ":"))
    return (
        g.game_id,
        g.seq,
        g.round,
        g.game,
        record["game"],
        g.pair,
        g.seat_order,
        bots[0]["name"],
        bots[1]["name"],
        res.winner,
        res.result,
        res.reason,
        res.detail,
        int(res.forfeit),
        res.loser_seat,
        res.scores[0],
        res.scores[1],
        res.turns,
        res.duration,
        g.attempt,
        run_id,
        record.get("started_at"),
        record.get("finished_at"),
        text,
    )


class Store:
    """A tournament results file. Blocking: call from `trio.to_thread` (see `AsyncStore`)."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = False) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"no results file at {self.path}")
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30.0
            )
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            if create:
                self.db.executescript(_SCHEMA)
            tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.OperationalError as e:
            raise StoreError(f"{self.path}: cannot open the results file ({e})") from None
        except OSError as e:
            raise StoreError(f"{self.path}: cannot create the results file: {e.strerror}") from None
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{self.path}: not a tournament results file ({e})") from None
        if not {"meta", "games", "voids", "runs"} <= tables:
            raise StoreError(f"{self.path}: not a tournament results file")
        self._lock_fd: int | None = None

    # --- life cycle ------------------------------------------------------------------------

    def close(self) -> None:
        self.db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lock_for_writing(self) -> None:
        """Take the per-file run lock, so two runners never play the same tournament at once.

        A `flock` on a side file: the kernel releases it when the process dies, even by
        SIGKILL, so a killed run never leaves a stale lock behind.
        """
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        # `run_alive` probes the lock for an instant (a shared lock taken and dropped): a few
        # quick retries keep such a probe from passing for a running tournament
        for retry in range(LOCK_RETRIES + 1):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if retry == LOCK_RETRIES:
                    os.close(fd)
                    raise StoreError(
                        f"{self.path} is in use by another 'arena tournament run'; "
                        "wait for it or stop it"
                    ) from None
                time.sleep(0.01)
        self._lock_fd = fd

    @property
    def _lock_path(self) -> str:
        return f"{self.path}.lock"

    def run_alive(self) -> bool:
        """Whether a process holds the run lock now, i.e. a run of this file is going.

        The kernel drops the lock with its holder however that dies, so a run marked `running`
        whose lock is free was killed. Our own lock (this process running) counts as alive.
        """
        try:
            fd = os.open(self._lock_path, os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # drops the shared lock, if taken
        return False

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # --- meta ------------------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    def bind(
        self,
        identity: Mapping[str, Any],
        config: Mapping[str, Any],
        bot_names: list[str],
        wanted_pairs: list[tuple[str, str]],
        legacy_fingerprint: str,
        extra: Mapping[str, Any] | None = None,
    ) -> list[tuple[str, str]]:
        """Tie the file to one tournament, which later configs may extend but not change.

        Returns the pairings by number (see arena/tournaments/identity.py): the ones already
        in the file keep theirs. A config that changes what recorded games were played under
        is refused with the list of changes. `extra` is stored in the meta table as is.
        """
        meta = self.meta()
        old_pairs: list[tuple[str, str]] = []
        if meta:
            if meta.get("schema") != SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: results schema {meta.get('schema')} is not supported"
                )
            if "identity" not in meta:  # written before pools could grow
                if meta.get("fingerprint") != legacy_fingerprint:
                    what = legacy_changes(meta, identity, bot_names) or [
                        "other bots, games, time control, seed or openings"
                    ]
                    raise StoreError(
                        f"{self.path} holds a tournament (written before tournaments could "
                        f"grow) that this config changes: {'; '.join(what)}. Use another "
                        "'results' path to start afresh"
                    )
                old_pairs = legacy_pairs(meta.get("bots", []))
            else:
                old_pairs = [(a, b) for a, b in meta.get("pairs", [])]
        table, dropped = pair_table(old_pairs, wanted_pairs)
        problems = changes(meta["identity"], identity) if "identity" in meta else []
        removed = {n for n in meta.get("identity", {}).get("bots", {}) if n not in bot_names}
        problems += [
            f"pairing {a!r} vs {b!r} no longer played (format or challengers changed)"
            for a, b in dropped
            if a not in removed and b not in removed
        ]
        if problems:
            raise StoreError(
                f"{self.path} holds games this config no longer matches: {'; '.join(problems)}. "
                "Adding bots, games or rounds extends a tournament; anything else needs another "
                "'results' path"
            )
        with self._transaction() as db:
            values = {
                "schema": SCHEMA_VERSION,
                "fingerprint": legacy_fingerprint,
                "identity": dict(identity),
                "pairs": [list(p) for p in table],
                "config": dict(config),  # latest config: rounds may have been raised
                "bots": bot_names,
                **(extra or {}),
            }
            if not meta:
                values["created_at"] = now_iso()
            for k, v in values.items():
                db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    (k, json.dumps(v, sort_keys=True)),
                )
        return table

    # --- runs ------------------------------------------------------------------------------

    def start_run(self, scheduled: int, pending: int) -> int:
        with self._transaction() as db:
            # a run still marked "running" was killed: say so
            db.execute("UPDATE runs SET status = 'killed' WHERE status = 'running'")
            cur = db.execute(
                "INSERT INTO runs (started_at, status, scheduled, pending) "
                "VALUES (?, 'running', ?, ?)",
                (now_iso(), scheduled, pending),
            )
            return int(cur.lastrowid or 0)

    def finish_run(self, run_id: int, status: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET finished_at = ?, status = ? WHERE run_id = ?",
                (now_iso(), status, run_id),
            )

    def runs(self) -> list[dict[str, Any]]:
        """Every run, oldest first; a run marked `running` whose process is gone is `killed`."""
        cur = self.db.execute("SELECT * FROM runs ORDER BY run_id")
        names = [d[0] for d in cur.description]
        runs = [dict(zip(names, r, strict=True)) for r in cur]
        stale = [r for r in runs if r["status"] == "running"]
        if stale and not self.run_alive():
            for r in stale:
                r["status"] = "killed"
        return runs

    # --- games -----------------------------------------------------------------------------

    def record_game(
        self,
        *,
        game_id: str,
        seq: int,
        round_: int,
        game: str,
        pair: int,
        seat_order: int,
        attempt: int,
        run_id: int,
        record: Mapping[str, Any],
        record_json: str | None = None,
    ) -> None:
        """Commit one finished game with its full record, atomically (`record_games`)."""
        self.record_games(
            [
                FinishedGame(
                    game_id, seq, round_, game, pair, seat_order, attempt, record, record_json
                )
            ],
            run_id,
        )

    def record_games(self, games: list[FinishedGame], run_id: int) -> None:
        """Commit finished games with their full records, all in one transaction (a group
        commit: the runner gathers the games that finished while its previous commit ran).

        Raises sqlite3.IntegrityError if a game is already recorded (and commits none): that
        would be a scheduling bug, and failing is better than counting a game twice.
        """
        rows = [_game_row(g, run_id) for g in games]
        with self._transaction() as db:
            db.executemany(
                f"INSERT INTO games ({_ROW_COLUMNS}, run_id, started_at, finished_at, record) "
                "VALUES (" + ", ".join("?" * 24) + ")",
                rows,
            )
            db.execute("UPDATE runs SET played = played + ? WHERE run_id = ?", (len(rows), run_id))

    def record_void(self, game_id: str, attempt: int, reason: str, run_id: int) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO voids (game_id, attempt, reason, at, run_id) VALUES (?, ?, ?, ?, ?)",
                (game_id, attempt, reason, now_iso(), run_id),
            )
            db.execute("UPDATE runs SET voided = voided + 1 WHERE run_id = ?", (run_id,))

    def recorded_ids(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT game_id FROM games")}

    def count_games(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def games(self) -> list[GameRow]:
        return [_row(r) for r in self.db.execute(f"SELECT {_ROW_COLUMNS} FROM games ORDER BY seq")]

    def record(self, game_id: str) -> dict[str, Any]:
        row = self.db.execute("SELECT record FROM games WHERE game_id = ?", (game_id,)).fetchone()
        if row is None:
            raise StoreError(f"{self.path}: no recorded game {game_id!r}")
        return json.loads(row[0])

    def voids(self) -> list[dict[str, Any]]:
        cur = self.db.execute("SELECT game_id, attempt, reason, at, run_id FROM voids ORDER BY id")
        return [
            {"game_id": g, "attempt": a, "reason": r, "at": t, "run_id": run}
            for g, a, r, t, run in cur
        ]

    def void_counts(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT game_id, COUNT(*) FROM voids GROUP BY game_id"))


class AsyncStore:
    """The store used from trio: each call runs in a worker thread, one at a time.

    SQLite calls block, so they leave the trio thread; the lock serialises them because the
    single connection is shared. Calls are not abandoned on cancellation (trio's default), so
    a commit that has started always completes, even when the run is being stopped.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = trio.Lock()

    async def call(self, fn_name: str, *args: Any, **kwargs: Any) -> Any:
        fn = getattr(self.store, fn_name)
        async with self._lock:
            try:
                return await trio.to_thread.run_sync(lambda: fn(*args, **kwargs))
            except sqlite3.Error as e:
                # the file became unwritable (made read-only, disk full): the operator's
                # problem, said in one line; the caller decides what happens to its game
                raise StoreError(f"{self.store.path}: cannot use the results file: {e}") from None
