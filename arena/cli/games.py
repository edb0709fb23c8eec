"""`arena games` and `arena rules GAME`: what can be played and how."""

from __future__ import annotations

import argparse

from arena.errors import ArenaError
from arena.games import GAME_NAMES, game_class
from arena.resources import RULES_DIR

DOCS = RULES_DIR


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("games", help="list the playable game variants and their options")
    p.set_defaults(func=cmd_games)
    p = sub.add_parser("rules", help="print a game's rules page")
    p.add_argument("game", metavar="GAME", help=f"one of: {', '.join(GAME_NAMES)}")
    p.set_defaults(func=cmd_rules)


def cmd_games(args: argparse.Namespace) -> int:
    for name in GAME_NAMES:
        cls = game_class(name)
        print(f"{name:<14} {cls.title}  ({cls.colours[0]} moves first, {cls.colours[1]} second)")
        for spec in cls.option_specs:
            setting = f"{spec.name} = {spec.default}"
            print(f"    {setting:<24} {spec.help}")
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    game_class(args.game)  # validates the name with the standard error
    page = DOCS / f"{args.game}.md"
    if not page.is_file():
        raise ArenaError(f"no rules page for {args.game} at {page}")
    print(page.read_text(encoding="utf-8"), end="")
    return 0
