"""The `arena` command line: one module per group of subcommands, each with `register()`.

Every module adds its subcommands to the shared parser and sets `func` on them; `main` runs the
chosen one and turns any `ArenaError` (bad input) into a one-line error with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from arena import __version__
from arena.errors import ArenaError

# modules under arena.cli that contribute subcommands, in help order
_COMMAND_MODULES = ("games", "new", "match", "play", "tournament", "sprt", "league")

# the module of each subcommand (tests/referee/test_cli_imports.py checks it against what the
# modules register): a command line naming one imports that module only, not every command's
# (the others' imports were a measured part of `arena match`'s and `arena tournament run`'s
# start-up, benchmarks/versus.py); `arena --help` and anything else build the whole parser
COMMAND_MODULE = {
    "games": "games",
    "rules": "games",
    "new": "new",
    "match": "match",
    "replay": "match",
    "check": "match",
    "play": "play",
    "tournament": "tournament",
    "sprt": "sprt",
    "league": "league",
}


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the arena's error form: one line `arena: error: ...`, exit 2, no usage
    block (the usage is one `--help` away; a block of it before the error hides the error)."""

    def error(self, message: str) -> NoReturn:
        sub = self.prog.removeprefix("arena").strip()
        where = f"{sub}: " if sub else ""
        hint = f" (see `{self.prog} --help`)"
        self.exit(2, f"arena: error: {where}{message}{hint}\n")


def build_parser(modules: Sequence[str] = _COMMAND_MODULES) -> argparse.ArgumentParser:
    """The `arena` parser with the subcommands of `modules` (default: all of them)."""
    parser = ArgumentParser(
        prog="arena",
        description="Bot arena and tournament runner for Papagra, Wrigglers Squared, "
        "Stripes! and Quadraphages/Hexaphage.",
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        try:
            module = importlib.import_module(f"arena.cli.{name}")
        except ModuleNotFoundError as e:  # a command group not built yet
            if e.name and e.name.startswith("arena."):
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    module = COMMAND_MODULE.get(argv[0]) if argv else None
    parser = build_parser(_COMMAND_MODULES if module is None else (module,))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ArenaError as e:
        print(f"arena: error: {e}", file=sys.stderr)
        return 2
    except BaseExceptionGroup as group:
        # an ArenaError raised inside a nursery (a tournament's game slot) arrives wrapped
        errors = _user_errors(group)
        if errors is None:
            raise
        for e in errors:
            print(f"arena: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def _user_errors(group: BaseExceptionGroup) -> list[ArenaError] | None:
    """The ArenaErrors of a group made of nothing else (distinct messages), else None."""
    matched, rest = group.split(ArenaError)
    if matched is None or rest is not None:
        return None
    out: list[ArenaError] = []
    stack: list[BaseException] = [matched]
    while stack:
        e = stack.pop(0)
        if isinstance(e, BaseExceptionGroup):
            stack[:0] = list(e.exceptions)
        elif isinstance(e, ArenaError) and str(e) not in {str(o) for o in out}:
            out.append(e)
    return out
