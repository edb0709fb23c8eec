"""The league's database: its schema, its connection, and the queries as typed functions.

One module per idea, each importing only those above it:

- `schema`: one MetaData, every Table, and the words their state and kind columns hold;
- `database`: `Database`, an Engine with the league's transaction discipline (SQLite or
  PostgreSQL);
- `verdicts`: the candidate tests of new versions, counted in the ledger's recording
  transactions (arena/league/candidates.py has their policy);
- `ledger`: games as jobs (create, claim, record exactly once, void, rate) and the
  matchmaking reads; its docstring states the exactly-once rule;
- `roster`: users, tokens and login sessions; bots, their versions and their states;
- `views`: the read models the pages and the API share;
- `seasons`: open and close seasons, the ratings kept at a close, which season a game counts
  in; `finals`: a season's final among its best, its state derived from its recorded games;
- `fleet`: the workers, their heartbeats, attempts and host stalls, and the facts the server
  publishes to them (`meta`);
- `mailbox`: a local tournament's archives and outcomes, between its runner and the workers.

Every query function takes a SQLAlchemy `Connection` inside a transaction its caller opened
(`Database.read` / `Database.write`), so one service call composes several atomically. Only
this package, the migrations (arena/league/migrations) and the job queue (arena/league/queue.py)
import SQLAlchemy: the rest of the league calls these functions, and the web layer reads
`views` through `League.read` and writes only through the service (arena/league/service.py).
"""
