"""The league: a server where people submit bots that then play rated games around the clock.

Imports run one way: web -> service -> db (schema, database, roster, ledger, views, fleet,
mailbox) and the scheduler, executors and worker slots -> db, referee, sandbox. The web layer
reads `db.views` through `League.read` (and the words of `db.schema`'s enums), and writes only
through `service.League`; only `db/`, the migrations and `queue.py` import SQLAlchemy.
"""
