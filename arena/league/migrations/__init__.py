"""Versioned schema migrations of the league database (Alembic), shipped with the package.

`upgrade` brings a database to the newest revision (`arena league init` and `arena league
migrate` call it); `check_current` lets `arena league serve` refuse a database an older or newer
arena left, instead of failing on the first query. The revisions in versions/ are written out
by hand from arena/league/db/schema.py's tables (autogenerate as a starting point), never edited
once released; tests check that the migrated schema equals the tables.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

from arena.league.errors import LeagueError

_HERE = Path(__file__).resolve().parent


def _config(engine: Engine) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(_HERE))
    cfg.attributes["engine"] = engine
    return cfg


def head_revision() -> str:
    cfg = Config()
    cfg.set_main_option("script_location", str(_HERE))
    rev = ScriptDirectory.from_config(cfg).get_current_head()
    assert rev is not None
    return rev


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    command.upgrade(_config(engine), revision)


def check_current(engine: Engine) -> None:
    """Raise LeagueError unless the database is at this arena's newest revision."""
    current, newest = current_revision(engine), head_revision()
    if current != newest:
        raise LeagueError(
            f"the league database is at schema revision {current or 'none'}, this arena needs "
            f"{newest}; run 'arena league migrate DIR'"
        )
