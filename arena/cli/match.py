"""`arena match`, `arena replay` and `arena check`: one game, one record, one bot's conformance.

These are thin shells around `arena.referee`: the CLI parses and prints, the referee decides.
The options they share with `arena play` and `arena sprt` (game options, clocks, limits, the
--record/--html/--svg outputs) are arena/cli/options.py; `arena play` plays its game through
this module's `run_match`, `heading`, `print_turn` and `result_line`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from arena.cli.options import (
    check_outputs,
    check_picture_paths,
    game_option,
    limit_option,
    operator_limits,
    parse_options,
    picture_options,
    positive_int,
    seed_arg,
    time_control_from,
    time_options,
    write_outputs,
    write_pictures,
)
from arena.errors import ArenaError
from arena.games import GAME_NAMES, game_class, make_game
from arena.referee.check import CHECK_MAX_TURNS, CHECK_OPPONENT, check_problem, handshake_failed
from arena.referee.preflight import BotCannotStart, check_startable
from arena.sandbox import ISOLATION_MODES, SandboxFault

if TYPE_CHECKING:
    from arena.referee import GameRecord, MatchConfig, TurnEvent
    from arena.referee.bots import BotSpec

# trio, the game-playing part of the referee and the openings (arena.tournaments) are imported
# where a command runs them, so that `arena --help` and argument errors pay for none of them
# (tests/referee/test_cli_imports.py)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "match",
        help="play one game between two bots",
        description="Play one game between two bots. A bot is a bot.toml manifest, a directory "
        "holding one, or a command line (prefix json: for the JSON Lines encoding).",
    )
    p.add_argument("game", metavar="GAME", help=f"one of: {', '.join(GAME_NAMES)}")
    p.add_argument("bot_a", metavar="BOT_A", help="the bot that moves first (seat 0)")
    p.add_argument("bot_b", metavar="BOT_B", help="the bot that moves second (seat 1)")
    time_options(p)
    p.add_argument(
        "--seed",
        type=seed_arg,
        default=None,
        help="seed given to both bots, 0 .. 2^63-1 (default: random)",
    )
    game_option(p)
    p.add_argument(
        "--opening",
        metavar="TURNS",
        default="",
        help='turns played before the bots move: turns separated by ";", actions of a turn '
        'by spaces or commas, e.g. "e5 ; -e5 c3" (as `arena tournament record --command` '
        'prints it); the last turn may be partial ("e5 ; -e5": the bots start in it), and '
        'ends with "..." to go on where it could end (optional actions)',
    )
    p.add_argument("--record", metavar="FILE", help="write the game record (JSON) to FILE")
    picture_options(p)
    show = p.add_mutually_exclusive_group()
    show.add_argument(
        "--json",
        action="store_true",
        help="print only one JSON object with the outcome (game, winner, result, reason, "
        "scores, turns, ...)",
    )
    show.add_argument("--quiet", "-q", action="store_true", help="print only the result")
    p.add_argument("--isolation", choices=ISOLATION_MODES, help="override the bots' isolation mode")
    limit_option(p)
    p.set_defaults(func=cmd_match)

    p = sub.add_parser(
        "replay",
        help="show a game record turn by turn",
        description="Show a game record turn by turn, re-checking every action with the rules "
        "engine.",
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="a record written by arena match --record, or a tournament's config or results "
        "file together with GAME_ID",
    )
    p.add_argument(
        "game_id",
        metavar="GAME_ID",
        nargs="?",
        help="a game of a tournament (ids as in `arena tournament status/report`)",
    )
    p.add_argument("--turn", type=int, metavar="N", help="show only the position after turn N")
    p.add_argument("--no-board", action="store_true", help="list the turns without boards")
    picture_options(p)
    at = p.add_argument_group("one moment of the game (docs/cli.md, `arena replay --at`)")
    at.add_argument(
        "--at",
        metavar="TURN[.ACTION]",
        help="show the position before that action of that turn (20: before turn 20's first "
        "action, 20.2: before its second), who is to move, the clocks the bot had and what "
        "the record says it played",
    )
    at.add_argument(
        "--bot",
        metavar="BOT",
        help="with --at: send this bot (a bot.toml, a directory holding one, or a command) "
        "the game's hello for that seat and the turn request of that moment, and show its "
        "answer, whether it is legal and its time",
    )
    at.add_argument(
        "--messages",
        action="store_true",
        help="with --at: print only the hello and the turn request of that moment, encoded "
        "as on the wire (to pipe into a bot or a test)",
    )
    at.add_argument(
        "--encoding",
        choices=("msgpack", "json"),
        help="with --messages: the encoding (default: the --bot's manifest's, else msgpack)",
    )
    at.add_argument(
        "--legal",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="with --messages: list the legal actions in the request or not (default: as "
        "the recorded bot asked in its ready)",
    )
    at.add_argument(
        "--isolation", choices=ISOLATION_MODES, help="with --bot: override its isolation mode"
    )
    limit_option(at)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser(
        "check",
        help="conformance run for a bot: handshake and a short game of every game",
        description="Start the bot, check its handshake, and play a short game of every game "
        "in both seats against the bundled random-py bot; say precisely what is wrong.",
    )
    p.add_argument("bot", metavar="BOT", help="a bot.toml, a directory holding one, or a command")
    p.add_argument(
        "--game",
        action="append",
        choices=GAME_NAMES,
        help="check only this game (repeatable; default: every game)",
    )
    p.add_argument(
        "--opponent", default=str(CHECK_OPPONENT), help="the sparring bot (default: random-py)"
    )
    p.add_argument(
        "--turns",
        type=positive_int,
        default=CHECK_MAX_TURNS,
        help=f"turn limit per game (default {CHECK_MAX_TURNS})",
    )
    time_options(p, default_tc="20+1", default_startup=10.0)
    limit_option(p)
    p.set_defaults(func=cmd_check)


def heading(config: MatchConfig, colours: Sequence[str], names: Sequence[str]) -> str:
    """The line above a game shown as it is played: who plays which colour, clock, seed."""
    return (
        f"{config.game}: {colours[0]} {names[0]} vs {colours[1]} {names[1]}, "
        f"{config.time_control.describe()}, seed {config.seed}"
    )


def accounting_text(entry: dict[str, Any]) -> str:
    """A turn's accounting figures (docs/record.md) for `arena replay`: what the bot used,
    what the host took, what it was charged; nothing for records without them."""
    source = entry.get("accounting")
    if source is None:
        return ""
    if source == "none":
        return "; not measured"
    parts = [f"CPU {duration(entry.get('cpu', 0.0))}", f"wait {duration(entry.get('wait', 0.0))}"]
    if entry.get("late"):
        parts.append(f"referee late {duration(entry['late'])}")
    if entry.get("host"):
        parts.append(f"host {duration(entry['host'])}")
    parts.append(f"charged {duration(entry.get('charged', 0.0))}")
    return "; " + ", ".join(parts)


# --- arena match --------------------------------------------------------------------------------
def cmd_match(args: argparse.Namespace) -> int:
    game_class(args.game)
    options = parse_options(args.option)
    make_game(args.game, options)  # option errors before anything is started
    _start_sandbox(args.isolation)

    from arena.referee import LogEvent, MatchConfig, load_bot
    from arena.tournaments.openings import (
        OpeningError,
        check_opening,
        format_opening,
        parse_opening,
    )

    opening = parse_opening(args.opening)
    try:
        check_opening(args.game, options, opening)
    except OpeningError as e:
        raise ArenaError(f"--opening: {e}") from None
    check_outputs(args)
    limits = operator_limits(args.limit)
    bots = (load_bot(args.bot_a), load_bot(args.bot_b))
    for bot in bots:  # a bot that cannot start is an error, not a lost game
        _preflight(bot, args.isolation)
    if "process" in {args.isolation or bot.isolation for bot in bots}:
        _prepare_sandbox()
    seed = (
        args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big") >> 1
    )  # 0 .. 2^31-1
    config = MatchConfig(
        game=args.game,
        options=options,
        bots=bots,
        time_control=time_control_from(args),
        seed=seed,
        isolation=args.isolation,
        limits=limits,
        opening=opening,
    )
    show = not (args.quiet or args.json)
    colours = game_class(args.game).colours
    names = [b.name for b in bots]
    out = sys.stdout

    def observer(ev: TurnEvent) -> None:
        print_turn(ev, colours, names, out)

    def on_log(ev: LogEvent) -> None:
        print(f"  [{colours[ev.seat]} {names[ev.seat]} log] {ev.message}", file=out, flush=True)

    if show:
        print(heading(config, colours, names), file=out)
        if opening:
            print(f"opening: {format_opening(opening)}", file=out)
    record = run_match(config, observer if show else None, on_log if show else None)
    if args.json:
        import json  # only for --json: not on every start

        print(json.dumps(record.summary(), ensure_ascii=False))
    else:
        print(result_line(record))
    return write_outputs(record, args)


def print_turn(ev: TurnEvent, colours: Sequence[str], names: Sequence[str], out: TextIO) -> None:
    """A completed turn as `arena match` and `arena play` show it: actions, time, clocks, board."""
    clocks = " | ".join("-" if c is None else f"{c:.2f}" for c in ev.clocks)
    print(
        f"turn {ev.turn}: {colours[ev.seat]} ({names[ev.seat]}) {' '.join(ev.actions)}"
        f"   [{duration(ev.elapsed)}; clocks {clocks}{bank_text(ev.entry)}]",
        file=out,
    )
    print(ev.state.render_text(), file=out, flush=True)


def _preflight(bot: BotSpec, isolation: str | None) -> None:
    try:
        check_startable(bot, isolation=isolation)
    except SandboxFault as e:
        raise ArenaError(f"cannot check bot {bot.name}: the sandbox failed: {e}") from None


def _start_sandbox(isolation: str | None) -> None:
    """The process sandbox's start, first thing, before trio and the referee are imported:
    the probes of what the machine allows run on another core during those imports
    (`_prepare_sandbox` has their result). Unless the command line asks for another
    isolation mode: with none, the bots' manifests decide, and probes started for bots that
    turn out to run in docker end with the command, unused. No bot spawner: one game's two
    bots are forked by this process itself (`run_match`, arena/sandbox/spawner.py
    `forking_here`)."""
    if isolation not in (None, "process"):
        return
    from arena.sandbox.machine import start_probes

    start_probes()


def _prepare_sandbox() -> None:
    """What the machine allows, probed once here before trio runs (the probes started by
    `_start_sandbox`), not by both bots' first starts at once, each forking the same
    probes."""
    from arena.sandbox.process import capabilities

    try:
        capabilities()
    except OSError as e:
        raise ArenaError(f"the sandbox failed (not the bots' fault): {e}") from None


def run_match(config: MatchConfig, observer: Any = None, on_log: Any = None) -> GameRecord:
    """One game in its own trio run; its bots are forked by this process (no spawner: it
    would serve two bots, and its start competes with the game's for the cores)."""
    import trio

    from arena.sandbox.spawner import forking_here

    try:
        with forking_here():
            return trio.run(_play_until_signal, config, observer, on_log)
    except SandboxFault as e:
        raise ArenaError(f"the sandbox failed (not the bots' fault): {e}") from None
    except BaseExceptionGroup as group:
        # Ctrl-C arrives inside the referee's nursery, wrapped in a group
        if group.subgroup(KeyboardInterrupt) is not None:
            raise KeyboardInterrupt from None
        raise


def duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


async def _play_until_signal(config: MatchConfig, observer: Any, on_log: Any) -> GameRecord:
    """play_match, stopped cleanly by SIGTERM as by Ctrl-C: the referee kills the bots on its
    way out, so no bot outlives an interrupted `arena match`."""
    import trio

    from arena.referee import play_match

    record: GameRecord | None = None
    error: Exception | None = None
    with trio.open_signal_receiver(signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(watch)
            try:
                record = await play_match(config, observer, on_log)
            except Exception as e:
                # raised again outside the nursery: the caller sees the ArenaError or
                # SandboxFault itself, not an ExceptionGroup around it
                error = e
            nursery.cancel_scope.cancel()
    if error is not None:
        raise error
    if record is None:
        raise KeyboardInterrupt
    return record


def result_line(record: GameRecord) -> str:
    res = record.result
    colours = [b["colour"] for b in record.bots]
    names = [b["name"] for b in record.bots]
    winner = res["winner"]
    who = "draw" if winner is None else f"{colours[winner]} ({names[winner]}) wins"
    scores = "-".join(str(s) for s in res["scores"])
    line = f"{res['result']}  {who} by {res['reason']}; scores {scores}; {record.turn_count} turns"
    if res.get("detail"):
        line += f"\n  {res['detail']}"
    return line


# --- arena replay -------------------------------------------------------------------------------
def bank_text(entry: dict) -> str:
    """A turn's time banks (docs/record.md): what each seat has left after it, and what the
    turn drew; nothing for a game without banks."""
    banks = entry.get("banks_after")
    if not banks:
        return ""
    text = "; banks " + " | ".join("-" if b is None else f"{b:.2f}" for b in banks)
    drawn = entry.get("bank_drawn")
    return text + (f" (drew {duration(drawn)})" if drawn else "")


def cmd_replay(args: argparse.Namespace) -> int:
    from arena.referee import GameRecord, TimeControl

    _check_at_options(args)
    if args.game_id is None:
        record = GameRecord.load(args.file)
    else:
        from arena.cli.tournament import open_store

        with open_store(args.file) as store:
            record = GameRecord.from_dict(store.record(args.game_id))
    if args.at is not None:
        return _replay_at(record, args)
    if args.html or args.svg:
        check_picture_paths(args)
        try:
            written = write_pictures(record, args)
        except OSError as e:
            raise ArenaError(f"cannot write {e.filename}: {e.strerror or e}") from None
        if args.html:
            print(f"wrote {written[0]}")
        if args.svg:
            print(f"wrote {len(written) - bool(args.html)} SVG files to {args.svg}")
        return 0
    colours = [b["colour"] for b in record.bots]
    names = [b["name"] for b in record.bots]
    tc = TimeControl.from_dict(record.time_control).describe() if record.time_control else "?"
    if args.turn is None:
        print(f"{record.game} {record.options}  seed {record.seed}  time control {tc}")
        for b in record.bots:
            print(
                f"  seat {b['seat']} {b['colour']}: {b['name']} {b.get('version', '')} "
                f"[{' '.join(b['command'])}] {b.get('hash', '')}"
            )
        print(f"  started {record.started_at}, finished {record.finished_at}")
    logs = sorted(record.logs, key=lambda x: x["t"])
    li = 0
    for entry, state in record.replay_states():
        if entry is None:
            if args.turn is None and not args.no_board:
                label = (
                    f"after the opening ({len(record.opening)} turns)"
                    if record.opening
                    else "start"
                )
                print(f"--- {label}")
                print(state.render_text())
            continue
        if args.turn is not None:
            if entry["turn"] == args.turn:
                print(state.render_text())
                return 0
            continue
        t_end = entry.get("t", float("inf"))
        while li < len(logs) and logs[li]["t"] <= t_end:
            log = logs[li]
            print(f"  [{log['t']:.3f} s {colours[log['seat']]} log] {log['message']}")
            li += 1
        seat = entry["seat"]
        acts = []
        for a in entry["actions"]:
            acts.append(a["action"] + (" (ILLEGAL)" if a.get("illegal") else ""))
        if entry.get("resigned"):
            acts.append("resigns")
        clocks = entry.get("clocks_after") or [None, None]
        ctext = " | ".join("-" if c is None else f"{c:.2f}" for c in clocks)
        print(
            f"turn {entry['turn']}: {colours[seat]} ({names[seat]}) {' '.join(acts) or '-'}"
            f"   [{duration(entry['elapsed'])}{accounting_text(entry)}; clocks {ctext}"
            f"{bank_text(entry)}]"
        )
        if not args.no_board:
            print(state.render_text())
    if args.turn is not None:
        raise ArenaError(f"the record has no turn {args.turn}")
    for log in logs[li:]:
        print(f"  [{log['t']:.3f} s {colours[log['seat']]} log] {log['message']}")
    print(result_line(record))
    return 0


def _check_at_options(args: argparse.Namespace) -> None:
    """--bot, --messages and their options only with --at; --at alone, not with the turn
    list's options; one-line errors naming the option."""
    used = [
        name
        for name, value in (
            ("--bot", args.bot),
            ("--messages", args.messages),
            ("--encoding", args.encoding),
            ("--legal/--no-legal", args.legal is not None),
            ("--isolation", args.isolation),
            ("--limit", args.limit),
        )
        if value
    ]
    if args.at is None:
        if used:
            raise ArenaError(f"{used[0]} needs --at TURN[.ACTION]")
        return
    for name, value in (("--turn", args.turn is not None), ("--html", args.html)):
        if value:
            raise ArenaError(f"--at and {name} do not go together")
    if args.svg:
        raise ArenaError("--at and --svg do not go together")
    if args.messages and (args.isolation or args.limit):
        raise ArenaError("--messages runs no bot: --isolation and --limit do not apply")
    if args.encoding and not args.messages:
        raise ArenaError("--encoding goes with --messages (a --bot's manifest names its own)")
    if args.legal is not None and not args.messages:
        raise ArenaError("--legal goes with --messages (a --bot says in its ready)")


def _replay_at(record: GameRecord, args: argparse.Namespace) -> int:
    """`arena replay FILE --at T.A`: the moment, and with --bot the bot's answer to it, or
    with --messages the messages of that moment as bytes."""
    from arena.referee.moments import find_moment, parse_moment

    turn, action = parse_moment(args.at)
    moment = find_moment(record, turn, action)
    if args.messages:
        return _print_messages(moment, args)
    print_moment(moment)
    if args.bot is None:
        return 0
    return _probe_bot(moment, args)


def print_moment(moment: Any, out: TextIO | None = None) -> None:
    """A moment as `arena replay --at` shows it (docs/cli.md)."""
    from arena.referee import TimeControl

    out = out or sys.stdout
    record = moment.record
    state = moment.state
    colours = [b["colour"] for b in record.bots]
    names = [b["name"] for b in record.bots]
    seat = moment.seat
    tc = TimeControl.from_dict(record.time_control).describe() if record.time_control else "?"
    print(f"{record.game} {record.options}  seed {record.seed}  time control {tc}", file=out)
    where = f"turn {moment.turn}" + (
        f", before action {moment.action}" if moment.action > 1 else ""
    )
    print(
        f"{where}: {colours[seat]} ({names[seat]}, seat {seat}) to move"
        + (" (in the opening)" if moment.in_opening else ""),
        file=out,
    )
    done = state.turn_actions()
    more = "may end the turn" if state.can_end_turn() else "the turn needs more"
    print(
        f"  played this turn: {' '.join(done) or '-'}; actions remaining "
        f"{state.actions_remaining()} ({more})",
        file=out,
    )
    if moment.last_turn is not None:
        lt = moment.last_turn
        print(f"  last turn: {colours[lt['seat']]} {' '.join(lt['actions'])}", file=out)
    scores = "-".join(str(s) for s in state.scores())
    clocks = " | ".join(
        f"{colours[i]} {'-' if c is None else f'{c:.3f}'}" for i, c in enumerate(moment.clocks)
    )
    deadline = "none" if moment.deadline is None else f"{moment.deadline:.3f} s"
    margin = moment.time_control().margin
    print(
        f"  scores {scores}; clocks {clocks}; deadline {deadline} (+ {margin:g} s margin)",
        file=out,
    )
    print(state.render_text(), file=out)
    print(f"the record: {_played_text(moment, colours[seat])}", file=out)


def _played_text(moment: Any, colour: str) -> str:
    if moment.in_opening:
        return f"the opening played {' '.join(moment.played)} (no bot was asked)"
    if moment.ending and not moment.played:
        return f"{colour} was asked and gave no playable answer: {moment.ending}"
    acts = " ".join(moment.played)
    if moment.illegal is not None:
        action, message = moment.illegal
        acts = acts.replace(action, f"{action} (ILLEGAL{': ' + message if message else ''})", 1)
    if not moment.asked:
        return (
            f"{colour} played {acts} in the same move as the action(s) before it: this "
            "request was not sent in the game"
        )
    took = f" in {duration(moment.elapsed)}" if moment.elapsed is not None else ""
    return f"{colour} was asked and played {acts}{took}"


def _print_messages(moment: Any, args: argparse.Namespace) -> int:
    from protocol.framing import Encoder

    encoding = args.encoding
    if encoding is None and args.bot is not None:
        from arena.referee import load_bot

        encoding = load_bot(args.bot).encoding
    encoder = Encoder(encoding or "msgpack")
    data = encoder.encode(moment.hello()) + encoder.encode(moment.request(args.legal))
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


def _probe_bot(moment: Any, args: argparse.Namespace) -> int:
    import trio

    from arena.referee import load_bot
    from arena.referee.probe import probe

    limits = operator_limits(args.limit)
    bot = load_bot(args.bot)
    _preflight(bot, args.isolation)
    print(f"asking {bot.name} ({bot.source}), encoding {bot.encoding}:")
    try:
        res = trio.run(lambda: probe(bot, moment, isolation=args.isolation, limits=limits))
    except SandboxFault as e:
        raise ArenaError(f"the sandbox failed (not the bot's fault): {e}") from None
    if res.ready is not None:
        legal = "requested" if res.ready.get("legal") else "not requested"
        print(f"  ready as {res.ready['name']!r} {res.ready.get('version', '')}, legal {legal}")
    for line in res.logs:
        print(f"  log: {line}")
    if res.failure:
        print(f"  FAIL {res.failure}")
        for line in res.stderr.splitlines():
            print(f"     stderr: {line}")
        return 1
    reply = res.reply or {}
    if reply.get("type") == "resign":
        why = reply.get("reason", "")
        print(f"  answer: resign{': ' + why if why else ''} in {duration(res.elapsed or 0.0)}")
        return 0
    more = " (more: true)" if reply.get("more") else ""
    print(f"  answer: {' '.join(reply.get('actions', []))}{more} in {duration(res.elapsed or 0.0)}")
    if res.illegal:
        print(f"  ILLEGAL there: {res.illegal}")
        return 1
    print("  legal there")
    return 0


# --- arena check --------------------------------------------------------------------------------
def cmd_check(args: argparse.Namespace) -> int:
    from arena.referee import MatchConfig, load_bot
    from arena.referee.bots import BuildError
    from arena.referee.channel import STDERR_SEPARATOR

    limits = operator_limits(args.limit)
    bot = load_bot(args.bot)
    opponent = load_bot(args.opponent)
    tc = time_control_from(args)
    print(
        f"checking {bot.name} ({bot.source}): encoding {bot.encoding}, command "
        f"{' '.join(bot.command)}"
    )
    _preflight(opponent, None)
    try:
        _preflight(bot, None)
    except BuildError as e:
        print(f"FAIL build: {e}")
        return 1
    except BotCannotStart as e:
        print(f"FAIL start: {e}")
        return 1
    games = args.game or list(GAME_NAMES)
    problems = 0
    handshake_shown = False
    for game in games:
        colours = game_class(game).colours
        for seat in (0, 1):
            bots = (bot, opponent) if seat == 0 else (opponent, bot)
            config = MatchConfig(
                game=game,
                options={"max_turns": str(args.turns)},
                bots=bots,
                time_control=tc,
                seed=seat,
                limits=limits,
            )
            record = run_match(config)
            ready = record.ready[seat]
            if ready is not None and not handshake_shown:
                handshake_shown = True
                print(
                    f"ok   handshake: ready as {ready['name']!r} {ready['version']} in "
                    f"{duration(ready['startup'])}, legal actions "
                    f"{'requested' if ready['legal'] else 'not requested'}"
                )
            problem = check_problem(record, seat, bot, tc)
            label = f"{game} as {colours[seat]}"
            if problem is not None and handshake_failed(record, seat):
                label = f"handshake ({label})"
            if problem is None:
                res = record.result
                print(
                    f"ok   {label}: {record.turn_count} turns, {res['result']} by {res['reason']}"
                )
            else:
                problems += 1
                # the detail's stderr lines are printed once, below, as the bot's stderr
                print(f"FAIL {label}: {problem.partition(STDERR_SEPARATOR)[0]}")
                _print_stderr(record, seat)
                if handshake_failed(record, seat):
                    # the handshake itself is broken: every other game would say the same
                    print(f"{bot.name}: the handshake failed; fix it first")
                    return 1
    if problems:
        print(f"{bot.name}: {problems} problem(s)")
        return 1
    print(f"{bot.name}: all checks passed")
    return 0


def _print_stderr(record: GameRecord, seat: int) -> None:
    """The bot's stderr as a failure's detail shows it (the line naming the error kept)."""
    from arena.referee.channel import stderr_lines

    for line in stderr_lines(record.stderr[seat]).splitlines():
        print(f"     stderr: {line}")
