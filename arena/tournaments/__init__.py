"""Round-robin tournaments: config, schedule, SQLite store, runner, ratings and reports.

See docs/tournament.md. The modules are layered so that everything except the runner works
without the referee: config -> schedule -> store -> ratings/report, and runner on top.
"""
