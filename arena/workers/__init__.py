"""One home for "play a game in another process": the pipe, the child, its handle, the players.

- `wire.py`: the JSON Lines protocol both sides speak (encoding, lines, a game process's end of
  the pipe, a record kept as it came, the fault a void names);
- `child.py`: the referee worker process itself (`python -m arena.workers.child`), which plays
  the games it is sent one at a time, and `play_one`, which a league worker's slot uses too;
- `process.py`: `WorkerProcess`, the handle that starts and drives a child, and `WorkerDied`;
- `players.py`: the `Player` interface a runner plays its games through (in a process of the
  slot's own, or inline; the league's queue implements it in arena/league/tourjobs.py).

The package sits above the referee and below both tournaments and the league, which each plug
a player into it; "worker" here always means a referee worker process (the league's
`arena league worker` is arena/league/worker.py, its game slots arena/league/slot.py).
"""
