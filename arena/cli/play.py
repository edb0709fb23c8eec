"""`arena play GAME BOT`: a person against a bot, in the terminal.

The person is a `HumanPlayer` seat (arena/referee/human.py) that the referee plays exactly like a
bot: same clock, same rules, same record; the terminal side of it is `TerminalIO` (terminal.py).
"""

from __future__ import annotations

import argparse
import secrets
import sys
from typing import TYPE_CHECKING, Any

from arena.cli.match import heading, print_turn, result_line, run_match
from arena.cli.options import (
    check_outputs,
    game_option,
    parse_options,
    picture_options,
    time_control_from,
    time_options,
    write_outputs,
)
from arena.errors import ArenaError
from arena.games import GAME_NAMES, game_class, make_game

if TYPE_CHECKING:
    from arena.referee import TimeControl, TurnEvent

# the referee and trio are imported when a game is played (tests/referee/test_cli_imports.py)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play a game against a bot in the terminal",
        description="Play a game against a bot in the terminal. Type actions in the game's "
        "notation (several on one line for a multi-action turn); ? lists the legal actions, "
        "resign gives up. An illegal action is explained and asked again.",
    )
    p.add_argument("game", metavar="GAME", help=f"one of: {', '.join(GAME_NAMES)}")
    p.add_argument("bot", metavar="BOT", help="a bot.toml, a directory holding one, or a command")
    p.add_argument(
        "--seat",
        type=int,
        choices=(0, 1),
        default=0,
        help="your seat: 0 moves first (default), 1 second",
    )
    p.add_argument("--name", default="human", help="your name in the record (default: human)")
    time_options(p)
    p.add_argument("--seed", type=int, default=None, help="seed given to the bot (default: random)")
    game_option(p)
    p.add_argument("--record", metavar="FILE", help="write the game record (JSON) to FILE")
    picture_options(p)
    p.set_defaults(func=cmd_play)


def _play_time_control(args: argparse.Namespace) -> TimeControl:
    """No clock unless one is asked for: a person should not lose on time by surprise."""
    from arena.referee import TimeControl

    asked = (args.tc, args.move_time, args.bank, args.first_move)
    if all(a is None for a in asked):
        return TimeControl(
            startup=args.startup, **({} if args.margin is None else {"margin": args.margin})
        )
    return time_control_from(args)


def cmd_play(args: argparse.Namespace) -> int:
    cls = game_class(args.game)
    options = parse_options(args.option)
    make_game(args.game, options)
    if not args.name.strip():
        raise ArenaError("--name must not be empty")
    check_outputs(args)

    from arena.cli.terminal import TerminalIO
    from arena.referee import MatchConfig, RefereeFault, load_bot
    from arena.referee.human import HumanPlayer

    bot = load_bot(args.bot)
    out = sys.stdout
    human = HumanPlayer(TerminalIO(out), args.name)
    bots: tuple[Any, Any] = (human, bot) if args.seat == 0 else (bot, human)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    config = MatchConfig(
        game=args.game,
        options=options,
        bots=bots,
        time_control=_play_time_control(args),
        seed=seed,
    )
    colours = cls.colours
    names = [b.name for b in bots]

    def observer(ev: TurnEvent) -> None:
        print_turn(ev, colours, names, out)

    print(heading(config, colours, names), file=out)
    print(make_game(args.game, options).new_initial_state().render_text(), file=out, flush=True)
    try:
        record = run_match(config, observer)
    except RefereeFault as e:  # the terminal failed under the seat (a closed output...)
        raise ArenaError(f"the game stopped: {e.__cause__ or e}") from None
    print(result_line(record), file=out)
    return write_outputs(record, args)
