"""`arena sprt GAME NEW OLD`: is the new version better? Game pairs until the SPRT decides.

A shortcut for the most common tournament: a two-bot match with an `[sprt]` stopping rule,
built from the command line instead of a config file and run by the same runner, so it
records every game, survives Ctrl-C (resume with the same `--results`) and reports like any
tournament (`arena tournament report RESULTS`).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.cli.options import game_option, parse_options, time_control_from, time_options
from arena.errors import ArenaError
from arena.games import GAME_NAMES

if TYPE_CHECKING:
    from arena.tournaments.progress import Progress

# the tournament code is imported when the command runs: `arena --help` must not import it
# (tests/referee/test_cli_imports.py)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sprt",
        help="test whether NEW is stronger than OLD: game pairs until the SPRT decides",
        description="Play game pairs of NEW against OLD (each opening from both seats) until "
        "the sequential probability ratio test accepts H0 (NEW is at most ELO0 stronger) or H1 "
        "(NEW is at least ELO1 stronger), or --max-games is reached. A bot is a bot.toml, a "
        "directory holding one, or a command line. Exit status: 0 H1 accepted, 1 H0 accepted, "
        "3 no decision within --max-games, 130 interrupted (resume with the same --results).",
    )
    p.add_argument("game", metavar="GAME", help=f"one of {', '.join(GAME_NAMES)}, or a comma list")
    p.add_argument("new", metavar="NEW", help="the bot under test")
    p.add_argument("old", metavar="OLD", help="the bot to beat")
    time_options(p, default_tc="10+0.1")
    p.add_argument("--elo0", type=float, default=0.0, help="H0: NEW is this much stronger (0)")
    p.add_argument("--elo1", type=float, default=5.0, help="H1: NEW is this much stronger (5)")
    p.add_argument("--alpha", type=float, default=0.05, help="false H1 rate (0.05)")
    p.add_argument("--beta", type=float, default=0.05, help="false H0 rate (0.05)")
    p.add_argument(
        "--model",
        choices=("logistic", "normalized"),
        default="logistic",
        help="Elo model of the hypotheses (logistic)",
    )
    p.add_argument(
        "--max-games", type=int, default=2000, help="stop undecided after this many (2000)"
    )
    p.add_argument("-j", "--concurrency", type=int, default=0, help="games at once (all cores)")
    p.add_argument(
        "--force",
        action="store_true",
        help="run a concurrency above the CPUs available all the same; bots waiting for a CPU "
        "may then lose on time",
    )
    p.add_argument("--seed", type=int, default=None, help="tournament seed (default: random)")
    p.add_argument("--opening-turns", type=int, default=2, help="random opening turns per pair (2)")
    p.add_argument("--openings", metavar="FILE", help="openings file (one opening per line)")
    game_option(p)
    p.add_argument(
        "--results",
        metavar="FILE",
        help="results file; an existing one is resumed (default: a new file in ./results/)",
    )
    p.add_argument("--plain", action="store_true", help="one line per game pair, no live display")
    p.add_argument("--quiet", action="store_true", help="print only the final result")
    p.set_defaults(func=cmd_sprt)


def _bot_entry(text: str, name: str | None) -> dict[str, Any]:
    path = Path(text).expanduser()
    entry: dict[str, Any] = {"path": str(path.resolve())} if path.exists() else {"command": text}
    if name:
        entry["name"] = name
    return entry


def build_config(args: argparse.Namespace) -> tuple[Any, list[str]]:
    """The tournament config the command line describes (validated like a config file), and
    the two bots' names."""
    from arena.referee import load_bot
    from arena.tournaments.config import config_from_dict
    from arena.tournaments.sprt import SprtError, SprtParams

    games = [g.strip() for g in args.game.split(",") if g.strip()]
    try:
        SprtParams(args.elo0, args.elo1, args.alpha, args.beta, args.model)
    except SprtError as e:  # named by its flags rather than the config key
        raise ArenaError(f"--elo0/--elo1/--alpha/--beta: {e}") from None
    if args.max_games < 2:
        raise ArenaError(f"--max-games must be at least 2, got {args.max_games}")
    # rounds of one game pair per game: enough to reach --max-games
    rounds = max(1, math.ceil(args.max_games / (2 * max(1, len(games)))))
    names = [load_bot(args.new).name, load_bot(args.old).name]
    aliases: list[str | None] = [None, None]
    if names[0] == names[1]:  # two builds of one bot: tell them apart in the report
        names = aliases = [f"{names[0]}-new", f"{names[1]}-old"]  # type: ignore[assignment]
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4))
    options = parse_options(args.option)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    results = args.results or f"results/sprt-{stamp}.sqlite"
    tc = time_control_from(args)
    data: dict[str, Any] = {
        "name": f"sprt-{stamp}" if not args.results else Path(args.results).stem,
        "seed": seed,
        "rounds": rounds,
        "concurrency": args.concurrency,
        "oversubscribe": args.force,
        "results": results,
        "bots": [_bot_entry(args.new, aliases[0]), _bot_entry(args.old, aliases[1])],
        "games": [{"name": g, "options": options} if options else g for g in games],
        # without a Fischer clock (a time bank) its increment is no key of the table
        "time_control": {
            k: v
            for k, v in tc.to_dict().items()
            if v is not None and not (k == "increment" and tc.base is None)
        },
        "openings": {"turns": args.opening_turns},
        "sprt": {
            "elo0": args.elo0,
            "elo1": args.elo1,
            "alpha": args.alpha,
            "beta": args.beta,
            "model": args.model,
        },
    }
    if args.openings:
        data["openings"]["file"] = str(Path(args.openings).resolve())
    config = config_from_dict(data, base_dir=Path.cwd(), where="arena sprt", stem="sprt")
    return config, names


def pair_lines() -> Progress:
    """Progress for pipes and logs: the SPRT after each game pair, one line."""
    from arena.tournaments.progress import Progress
    from arena.tournaments.sprt import SprtState

    class PairLines(Progress):
        last = ""  # the last line printed, so the final summary is not printed twice

        def sprt(self, state: SprtState) -> None:
            self.last = state.summary()
            print(self.last, flush=True)

        def message(self, text: str) -> None:
            print(text, flush=True)

    return PairLines()


def cmd_sprt(args: argparse.Namespace) -> int:
    import trio

    from arena.tournaments.progress import LiveProgress, Progress
    from arena.tournaments.runner import run_tournament

    config, bots = build_config(args)
    if args.quiet:
        progress: Progress = Progress()
    elif args.plain or not sys.stdout.isatty():
        progress = pair_lines()
    else:
        progress = LiveProgress(f"{args.new} vs {args.old}")
    outcome = trio.run(lambda: run_tournament(config, progress=progress, handle_signals=True))
    state = outcome.sprt
    assert state is not None
    verdict = {
        "H1": f"H1 accepted: {bots[0]} is stronger than {bots[1]} ({state.params.elo1:+g} "
        f"Elo is more likely than {state.params.elo0:+g}, at the test's error rates)",
        "H0": f"H0 accepted: {bots[0]} is not better than {bots[1]} by "
        f"{state.params.elo1:g} Elo ({state.params.elo0:+g} is more likely)",
    }.get(state.decision or "", "no decision yet")
    if getattr(progress, "last", None) != state.summary():
        print(state.summary())  # unless the last progress line said it already
    print(verdict)
    print(f"results in {outcome.results}; arena tournament report {outcome.results}")
    if outcome.status == "stopped":
        print(f"interrupted: resume with --results {outcome.results}", file=sys.stderr)
        return 130
    return {"H1": 0, "H0": 1}.get(state.decision or "", 3)
