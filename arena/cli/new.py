"""`arena new BOT_DIR --lang L`: start a bot from a starter kit (arena/kits.py)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from arena.kits import KITS, new_bot


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "new",
        help="start a bot from a starter kit: a small complete bot in your language",
        description="Copy a starter kit into BOT_DIR (new, or an empty directory) and name the "
        "bot after it. Every kit plays all games with random legal actions, offers sessions "
        "and builds through its bot.toml; then run `arena check BOT_DIR`.",
    )
    p.add_argument("bot_dir", metavar="BOT_DIR", type=Path, help="the directory to create")
    p.add_argument("--lang", "-l", required=True, metavar="LANG", help=f"one of: {', '.join(KITS)}")
    p.set_defaults(func=cmd_new)


def cmd_new(args: argparse.Namespace) -> int:
    kit = new_bot(args.bot_dir, args.lang)
    where = shlex.quote(str(args.bot_dir))
    print(f"created {where}: the {kit.language} starter kit ({kit.encoding} encoding)")
    print(f"needs: {kit.toolchain} (Debian packages)")
    print(f"next:  arena check {where}")
    return 0
