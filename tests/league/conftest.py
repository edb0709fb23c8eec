"""The league's database fixtures, shared by the tests of the store, the scheduler and the API:
`url`, a migrated database on each backend (one a module: migrating is the slow part), and
`db`, that database emptied for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from support import BACKENDS, database_url, empty_tables

from arena.league import migrations, store


@pytest.fixture(scope="module", params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with database_url(request.param, tmp_path_factory.mktemp("db")) as url:
        engine = sa.create_engine(url)
        migrations.upgrade(engine)
        engine.dispose()
        yield url


@pytest.fixture
def db(url: str) -> Iterator[store.Database]:
    db = store.Database(url)
    empty_tables(db)
    yield db
    db.dispose()
