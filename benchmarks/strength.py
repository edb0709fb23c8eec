"""Win rate of the bundled strong bot's policies against a uniformly random player.

Engine-only (no processes): for each game, N games with the strong policy as seat 0 and N as
seat 1 against a player that picks a uniformly random legal action for every action. The
baseline is random-vs-random in the same run (seat 0's share of points), so a real edge is
visible as the difference. Target (issue #3): the strong bot wins >= 90% of games per game.

    python benchmarks/strength.py [--games 50] [--game stripes] [--option max_turns=120]
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import time
from pathlib import Path

from arena.games import GAME_NAMES, make_game

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bots" / "strong"))


def play(game, policies, rng: random.Random, timing: list[float] | None = None):
    state = game.new_initial_state()
    while not state.is_terminal():
        seat = state.current_player()
        policy = policies[seat]
        if policy is None:
            state.apply(rng.choice(state.legal_actions()))
            continue
        turn = state.turn_number()
        t0 = time.perf_counter()
        actions = policy(state.clone(), rng)
        if timing is not None:
            timing.append(time.perf_counter() - t0)
        for action in actions:
            state.apply(action)
        if (
            not state.is_terminal()
            and state.current_player() == seat
            and state.turn_number() == turn
            and state.can_end_turn()
        ):
            state.end_turn()
    return state.result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50, help="games per seat (default 50)")
    parser.add_argument("--game", choices=GAME_NAMES, action="append")
    parser.add_argument("--option", action="append", default=[], help="game option key=value")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    options = dict(o.split("=", 1) for o in args.option)
    print(
        f"{'game':<14}{'strong wins':>12}{'draws':>7}{'losses':>7}{'win rate':>10}"
        f"{'rand-vs-rand seat0':>20}{'ms/turn':>9}"
    )
    for name in args.game or GAME_NAMES:
        try:
            policy = importlib.import_module(f"policies.{name}").choose_turn
        except ModuleNotFoundError:
            print(f"{name:<14} no policy yet")
            continue
        game = make_game(name, {k: v for k, v in options.items()})
        rng = random.Random(args.seed)
        wins = draws = losses = 0
        timing: list[float] = []
        for i in range(2 * args.games):
            seat = i % 2
            policies = [None, None]
            policies[seat] = policy
            r = play(game, policies, rng, timing)
            if r.winner is None:
                draws += 1
            elif r.winner == seat:
                wins += 1
            else:
                losses += 1
        base = 0.0
        for _ in range(args.games):
            r = play(game, [None, None], rng)
            base += 1.0 if r.winner == 0 else 0.5 if r.winner is None else 0.0
        n = 2 * args.games
        print(
            f"{name:<14}{wins:>12}{draws:>7}{losses:>7}{wins / n:>10.1%}"
            f"{base / args.games:>20.1%}{1000 * sum(timing) / max(1, len(timing)):>9.2f}"
        )


if __name__ == "__main__":
    main()
