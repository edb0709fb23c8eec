"""Alembic's entry point: runs the revisions on the engine `arena.league.migrations` passes."""

from __future__ import annotations

from alembic import context

from arena.league.db.schema import metadata

engine = context.config.attributes["engine"]
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=engine.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
