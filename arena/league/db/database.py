"""The league's database connection: an Engine with the league's transaction discipline.

Every query function of this package takes a SQLAlchemy `Connection` inside a transaction its
caller opened here (`Database.read` or `Database.write`), so a service call composes several
of them atomically; blocking, they run in a worker thread (`trio.to_thread.run_sync`). The
same code runs on SQLite and PostgreSQL; only the connection's set-up differs (below).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

#: what a failed statement raises (SQLAlchemy's base error): the name callers outside db/
#: catch, so that only this package, the migrations and the queue import SQLAlchemy
QueryError = sa.exc.SQLAlchemyError


class DatabaseError(Exception):
    """A database the league cannot use; raised as LeagueError by the callers that face users."""


class Database:
    """An Engine with the league's transaction discipline.

    SQLite: WAL so readers never block the writer; writes start with BEGIN IMMEDIATE so two
    writers never deadlock upgrading a read lock; a 30 s busy timeout. PostgreSQL: READ
    COMMITTED with explicit row locks (`FOR UPDATE`) where a read feeds a write (ratings).
    """

    def __init__(self, url: str, *, pool_size: int = 8) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            self.engine: Engine = sa.create_engine(
                url, connect_args={"check_same_thread": False, "timeout": 30.0}
            )
            event.listen(self.engine, "connect", _sqlite_connect)
            event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self.engine = sa.create_engine(
                url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True
            )

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            conn = conn.execution_options(arena_write=True)
            with conn.begin():
                yield conn

    def dispose(self) -> None:
        self.engine.dispose()


def _sqlite_connect(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # SQLAlchemy's begin event emits BEGIN itself
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_begin(conn: Connection) -> None:
    immediate = conn.get_execution_options().get("arena_write")
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
