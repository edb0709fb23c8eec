"""Rules-engine speed: random playouts per second and the time to validate+apply one turn.

Per game on its default board:
- playouts/s: complete random games (legal_actions + apply for every action);
- turn median / p99: the time spent in `apply` (which validates) for all actions of one
  complete turn, with the random choice and `legal_actions` excluded;
- as a same-run baseline, the cost of `clone()` of the same positions, so the apply figure can be
  read as a ratio against copying the position.
Target (issue #2): turn median <= 250 us for every game.

    python benchmarks/engines.py [--seconds 3] [--game papagra]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from arena.games import GAME_NAMES, make_game


def playouts(name: str, seconds: float, seed: int) -> tuple[float, list[float], list[float]]:
    """Play random games for `seconds`; return playouts/s, per-turn apply times, clone times."""
    game = make_game(name)
    rng = random.Random(seed)
    games = 0
    turn_times: list[float] = []
    clone_times: list[float] = []
    clock = time.perf_counter
    start = clock()
    while clock() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            player, turn = state.current_player(), state.turn_number()
            spent = 0.0
            t0 = clock()
            state.clone()
            clone_times.append(clock() - t0)
            while not state.is_terminal() and (state.current_player(), state.turn_number()) == (
                player,
                turn,
            ):
                action = rng.choice(state.legal_actions())
                t0 = clock()
                state.apply(action)
                spent += clock() - t0
            turn_times.append(spent)
        games += 1
    return games / (clock() - start), turn_times, clone_times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per game (default 3)")
    parser.add_argument("--game", choices=GAME_NAMES, action="append")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(
        f"{'game':<14}{'playouts/s':>11}{'turns':>8}{'median us':>11}{'p99 us':>9}"
        f"{'clone us':>10}{'apply/clone':>12}  target median <= 250 us"
    )
    for name in args.game or GAME_NAMES:
        rate, turns, clones = playouts(name, args.seconds, args.seed)
        med, p99 = statistics.median(turns) * 1e6, pct(turns, 0.99) * 1e6
        cl = statistics.median(clones) * 1e6
        verdict = "ok" if med <= 250 else "OVER"
        print(
            f"{name:<14}{rate:>11.1f}{len(turns):>8}{med:>11.1f}{p99:>9.1f}{cl:>10.1f}"
            f"{med / cl if cl else float('nan'):>12.2f}  {verdict}"
        )


if __name__ == "__main__":
    main()
