"""The options that `arena match`, `arena play`, `arena check` and `arena sprt` share, and
the checks and writes that go with them.

A bad value is an `argparse` error or an `ArenaError`, reported in one line before anything
starts; an output path (--record, --html, --svg) is tried for real before the game is played,
so a path that cannot be written costs no game (`check_outputs`), and once the game is played
its result is printed before its files are written (`write_outputs`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from arena.errors import ArenaError
from arena.sandbox import Limits, LimitsError

if TYPE_CHECKING:
    from arena.referee import GameRecord, TimeControl

# the referee and the viewer are imported where an option needs them, so that `arena --help`
# and argument errors pay for neither (tests/referee/test_cli_imports.py)


def game_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="game option (repeatable), e.g. --option max_turns=100",
    )


def parse_options(items: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ArenaError(f"--option {item!r}: expected KEY=VALUE")
        options[key.strip()] = value.strip()
    return options


def time_options(
    p: argparse.ArgumentParser, default_tc: str | None = None, default_startup: float = 10.0
) -> None:
    p.add_argument(
        "--tc",
        default=None,
        metavar="BASE+INC",
        help=f"Fischer clock in seconds, e.g. 5+0.05 (default: {default_tc or '60+1'} unless "
        "--move-time; none with --bank or --first-move)",
    )
    # the command's own default Fischer clock, left out where a bank asks for none
    p.set_defaults(default_tc=default_tc)
    p.add_argument("--move-time", metavar="SECONDS", help="fixed time per turn in seconds")
    p.add_argument(
        "--startup",
        type=float,
        default=default_startup,
        metavar="SECONDS",
        help=f"time from start to ready (default {default_startup:g})",
    )
    p.add_argument(
        "--margin",
        type=float,
        default=None,
        metavar="SECONDS",
        help="latency forgiveness added before flagging (default 0.05)",
    )
    p.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default=None,
        help="what a reply is charged: wall (its wall time less the host's share, the default) "
        "or cpu (the CPU time the bot used, the wall time capped at --wall-cap deadlines)",
    )
    p.add_argument(
        "--wall-cap",
        type=float,
        default=None,
        metavar="N",
        help="the cpu clock's wall-clock cap, in deadlines (default 3)",
    )
    p.add_argument(
        "--bank",
        metavar="SECONDS",
        help="a time bank per bot and game with --move-time: a reply past its move time draws "
        "the excess from it, and loses on time only when the bank cannot cover it",
    )
    p.add_argument(
        "--first-move",
        metavar="SECONDS",
        help="with --move-time: each bot's first turn gets this much time instead",
    )


def time_control_from(args: argparse.Namespace) -> TimeControl:
    """The time control of the time options; a bad one is an ArenaError naming its option."""
    from arena.referee import TimeControl, TimeControlError

    tc = args.tc
    if tc is None and args.bank is None and args.first_move is None:
        tc = getattr(args, "default_tc", None)
    try:
        return TimeControl.parse(
            tc,
            args.move_time,
            startup=args.startup,
            margin=args.margin,
            clock=args.clock,
            wall_cap=args.wall_cap,
            bank=args.bank,
            first_move=args.first_move,
        )
    except TimeControlError as e:
        flag = "--tc" if e.key in (None, "base", "increment") else "--" + e.key.replace("_", "-")
        raise ArenaError(f"{flag}: {str(e).removeprefix('time control: ')}") from None


def seed_arg(text: str) -> int:
    """argparse type for seeds: the protocol's range, checked before anything starts."""
    from arena.referee import check_seed

    try:
        return check_seed(int(text))
    except (ValueError, ArenaError):
        raise argparse.ArgumentTypeError(
            f"expected an integer from 0 to 2^63-1, got {text!r}"
        ) from None


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return n


def limit_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="the most any bot may have (repeatable): memory_mb, cpu_seconds, processes, "
        "file_size_mb, open_files, network, stderr_bytes, tmpfs_mb, cpus; a manifest can only "
        "ask for less (default: the built-in limits, 1 CPU, no network)",
    )


def operator_limits(items: list[str]) -> Limits:
    """The ceiling from the --limit flags, over the built-in defaults."""
    table: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ArenaError(f"--limit {item!r}: expected KEY=VALUE")
        table[key.strip()] = value.strip()
    try:
        return Limits().with_values(table, "--limit", text=True)
    except LimitsError as e:
        raise ArenaError(str(e)) from None


def picture_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--html",
        metavar="FILE",
        help="write the game as one self-contained HTML page: the board at every action and "
        "turn, clocks, scores, logs and the result",
    )
    p.add_argument("--svg", metavar="DIR", help="write one SVG picture per turn into DIR")


def check_picture_paths(args: argparse.Namespace) -> None:
    if args.html:
        check_writable(args.html, "--html")
    if args.svg and Path(args.svg).exists() and not Path(args.svg).is_dir():
        raise ArenaError(f"--svg {args.svg}: not a directory")


def check_outputs(args: argparse.Namespace) -> None:
    """--record, --html and --svg of a game to be played: checked before it is, so that a path
    that cannot be written costs no game."""
    if args.record:
        check_writable(args.record, "--record")
    check_picture_paths(args)


def write_outputs(record: GameRecord, args: argparse.Namespace) -> int:
    """--record, --html and --svg of a played game, once its result is printed; the exit status:
    1 when one could not be written (said on stderr), else 0."""
    status = write_record(record, args.record) if args.record else 0
    try:
        write_pictures(record, args)
    except OSError as e:
        print(f"arena: error: cannot write {e.filename}: {e.strerror or e}", file=sys.stderr)
        return 1
    return status


def write_pictures(record: GameRecord, args: argparse.Namespace) -> list[Path]:
    """The --html page and --svg pictures of a game; OSError when a file cannot be written."""
    written: list[Path] = []
    if not (args.html or args.svg):
        return written  # the viewer (jinja2: tens of milliseconds) only for a picture
    from arena.viewer import write_replay_html, write_turn_svgs

    if args.html:
        written.append(write_replay_html(record, args.html))
    if args.svg:
        written.extend(write_turn_svgs(record, args.svg))
    return written


def write_record(record: GameRecord, path: str) -> int:
    """Write the record; if that fails after all, keep the finished game in a temporary file
    and say where both went (exit 1: the result was printed, the record is not where asked)."""
    try:
        record.write(path)
        return 0
    except OSError as e:
        problem = f"cannot write the record to {path}: {e.strerror or e}"
    try:
        fd, spare = tempfile.mkstemp(prefix="arena-record-", suffix=".json")
        os.close(fd)
        record.write(spare)
        problem += f"; it was written to {spare} instead"
    except OSError as e:
        problem += f"; nor to a temporary file: {e.strerror or e}"
    print(f"arena: error: {problem}", file=sys.stderr)
    return 1


def check_writable(path: str, what: str) -> None:
    """Fail before a game, not after it: can `path` be (re)written as a file? Tried for
    real (a scratch file beside it, the file itself opened without truncating), since
    permissions alone do not tell (read-only mounts, immutable files, root)."""
    p = Path(path)
    if p.is_dir():
        raise ArenaError(f"{what} {path}: is a directory")
    parent = p.parent
    if not parent.is_dir():
        raise ArenaError(f"{what} {path}: no such directory {parent}")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".arena-write-test-"):
            pass
        if p.exists():
            with p.open("r+b"):
                pass
    except OSError as e:
        raise ArenaError(f"{what} {path}: cannot write: {e.strerror or e}") from None
