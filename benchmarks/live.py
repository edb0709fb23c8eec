"""What watching games live costs: the referee worker's turn reports, and the server's frames.

    python benchmarks/live.py [--games N] [--bot bots/random-c] [--game papagra]

Prints, with baselines from the same run:

- the time per game in a referee worker process (arena/workers/child.py) with the turn
  reports the league asks for (`"progress": true`) against the same games without them,
  alternating (each first in every other repetition): medians and their ratio (target: <= 1.05,
  the reports are one JSON line per turn written by a task of their own);
- the time to make a finished game's replay frames turn by turn as a live game does
  (arena/league/live.py `LiveGame.frames` after every turn) against `replay_data` of the whole
  record once: the ratio is the server's total cost of a watched game over a replay page view
  (target: <= 1.3; nothing is made while nobody watches).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.league.live import LiveGames  # noqa: E402
from arena.referee import load_bot  # noqa: E402
from arena.referee.record import GameRecord  # noqa: E402
from arena.viewer import replay_data  # noqa: E402
from arena.workers.process import WorkerProcess  # noqa: E402


def request(game: str, seed: int, bot: str, progress: bool) -> dict:
    bots = [{"source": bot, "build": False}, {"source": bot, "build": False}]
    match = {
        "game": game,
        "options": {},
        "bots": [0, 1],
        "time_control": {"base": 60.0, "increment": 0.0},
        "seed": seed,
        "match_id": f"live-bench/{seed}",
        "opening": [],
        "cpu_affinity": [None, None],
        "isolation": None,
        "limits": {},
    }
    msg = {"type": "play", "game_id": seed, "match": match, "bots": bots}
    if progress:
        msg["progress"] = True
    return msg


async def worker_times(args: argparse.Namespace) -> tuple[list[float], list[float], dict]:
    worker = await WorkerProcess.start([], None)
    quiet: list[float] = []
    loud: list[float] = []
    record: dict = {}
    turns = [0]
    try:
        for i in range(args.games):
            order = (False, True) if i % 2 == 0 else (True, False)
            for progress in order:
                t0 = time.perf_counter()
                reply = await worker.request(
                    request(args.game, 1000 + i, args.bot, progress),
                    lambda msg: turns.__setitem__(0, turns[0] + 1),
                )
                dt = time.perf_counter() - t0
                assert reply["type"] == "record", reply
                (loud if progress else quiet).append(dt)
                record = reply["record"]
    finally:
        await worker.close()
    print(f"  {turns[0]} turn reports received over {args.games} reporting games")
    return quiet, loud, record


def frames_cost(record_dict: dict, reps: int = 3) -> tuple[float, float]:
    record = GameRecord.from_dict(record_dict)
    whole, live = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        replay_data(record)
        whole.append(time.perf_counter() - t0)
        games = LiveGames()
        match = {
            "game": record.game,
            "options": record.options,
            "seed": record.seed,
            "opening": record.opening,
            "time_control": record.time_control,
        }
        t0 = time.perf_counter()
        games.start(1, record.game, match, ["a", "b"])
        game = games.get(1)
        assert game is not None
        for entry in record.turns:
            games.turn(1, entry)
            assert game.frames() is not None
        live.append(time.perf_counter() - t0)
    return statistics.median(whole), statistics.median(live)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--bot", default=str(ROOT / "bots" / "random-c"))
    parser.add_argument("--game", default="papagra")
    args = parser.parse_args()
    load_bot(args.bot).ensure_built()
    print(f"live games: {args.game}, {args.bot}, {args.games} games per mode")
    quiet, loud, record = trio.run(worker_times, args)
    q, lo = statistics.median(quiet), statistics.median(loud)
    print(f"  per game without reports {q * 1000:8.1f} ms (median)")
    print(f"  per game with reports    {lo * 1000:8.1f} ms (median)   ratio {lo / q:.3f}")
    whole, live = frames_cost(record)
    n = len(record["turns"])
    print(f"  replay of the last game ({n} turns) at once {whole * 1000:8.1f} ms")
    ratio = live / whole
    print(f"  the same made turn by turn, as watched      {live * 1000:8.1f} ms  ratio {ratio:.3f}")


if __name__ == "__main__":
    main()
