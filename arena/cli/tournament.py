"""`arena tournament run|status|report|record`: tournaments from a TOML config (round robin
or gauntlet, stopped by an SPRT if it says so, played here or by a league's workers)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.errors import ArenaError

if TYPE_CHECKING:
    from arena.tournaments.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tournament",
        help="round-robin tournaments: run (or resume), status, report",
        description="Round-robin tournaments of bots across the games, recorded in SQLite. "
        "See docs/tournament.md for the config format.",
    )
    tsub = p.add_subparsers(dest="tournament_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    r = tsub.add_parser(
        "run",
        help="play the tournament; resumes if its results file already holds games",
        description="Play every game of the config's schedule that its results file does not "
        "hold yet. Ctrl-C stops cleanly; running the same command again resumes.",
    )
    r.add_argument("config", metavar="CONFIG", help="tournament config (.toml)")
    r.add_argument(
        "-j",
        "--concurrency",
        type=_concurrency,
        metavar="N",
        help="games at once, 0 = one per core (overrides the config's concurrency)",
    )
    r.add_argument(
        "--force",
        action="store_true",
        help="run a concurrency above the CPUs available all the same (the config's "
        "oversubscribe = true); bots waiting for a CPU may then lose on time",
    )
    r.add_argument(
        "--drop-broken",
        action="store_true",
        help="play without the bots that cannot start (their games stay missing) instead of "
        "stopping with an error before the first game",
    )
    r.add_argument(
        "--database",
        metavar="URL",
        help="a league's PostgreSQL URL: its 'arena league worker's play the games "
        "(overrides the config's database)",
    )
    r.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default=None,
        help="what a reply is charged (overrides the config's clock; docs/tournament.md)",
    )
    show = r.add_mutually_exclusive_group()
    show.add_argument("--quiet", action="store_true", help="no progress output, no final report")
    show.add_argument(
        "--plain", action="store_true", help="one line per game instead of the live display"
    )
    r.set_defaults(func=cmd_run)

    s = tsub.add_parser("status", help="how far a tournament is: games played, missing, voided")
    s.add_argument("target", metavar="CONFIG|RESULTS", help="config (.toml) or results (.sqlite)")
    s.set_defaults(func=cmd_status)

    rep = tsub.add_parser("report", help="standings, crosstable, Elo ratings, pentanomial counts")
    rep.add_argument("target", metavar="CONFIG|RESULTS", help="config (.toml) or results (.sqlite)")
    rep.add_argument(
        "--format",
        choices=("text", "json", "csv", "html"),
        default="text",
        help="html: one self-contained page with charts and every game's replay",
    )
    rep.add_argument(
        "--games",
        action="store_true",
        help="list every recorded game (id, bots, result, reason) instead of the standings",
    )
    rep.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    rep.set_defaults(func=cmd_report)

    rec = tsub.add_parser(
        "record", help="print one recorded game's full record as JSON (for `arena replay`)"
    )
    rec.add_argument("target", metavar="CONFIG|RESULTS", help="config (.toml) or results (.sqlite)")
    rec.add_argument("game_id", metavar="GAME_ID", help="e.g. r1-papagra-p0-a (see report --games)")
    rec.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    rec.add_argument(
        "--command",
        action="store_true",
        help="print the `arena match` command that replays the game's position (same game, "
        "options, opening, seed, time control and seats) instead of the record",
    )
    rec.add_argument(
        "--turn",
        metavar="N[.A]",
        help="with --command: restart the game at turn N (before its action A), the record's "
        "actions before that moment as the opening",
    )
    rec.set_defaults(func=cmd_record)


def _concurrency(text: str) -> int:
    """-j N: as the config's `concurrency`, 0 means one game per core."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expected 0 (one per core) or more, got {text!r}")
    return n


#: how a results file names itself: the SQLite header
SQLITE_MAGIC = b"SQLite format 3\x00"
#: file names taken for results files, not configs, whatever their content
RESULTS_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def results_path(target: str) -> Path:
    """A results file given directly, or the one a config points at.

    A file that is neither says which of the two it was taken for, so that a damaged or
    mistaken results file is not reported as a TOML syntax error.
    """
    from arena.tournaments.config import ConfigError, load_config

    p = Path(target)
    if not p.exists():
        raise ArenaError(f"no such file: {target}")
    head = b""
    if p.is_file():
        with p.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
        if head == SQLITE_MAGIC:
            return p
    if p.suffix.lower() in RESULTS_SUFFIXES:
        raise ArenaError(f"{p}: not a results file (not an SQLite database: {_looks_like(head)})")
    try:
        return load_config(p).results
    except ConfigError as e:
        if "not valid TOML" not in str(e) and "not a UTF-8 text file" not in str(e):
            raise
        raise ArenaError(
            f"{p}: neither a tournament config ({str(e).removeprefix(f'{p}: ')}) nor a "
            f"results file (SQLite: {_looks_like(head)})"
        ) from None


def _looks_like(head: bytes) -> str:
    if not head:
        return "the file is empty"
    return f"it starts with {head[:16]!r}"


def open_store(target: str):
    from arena.tournaments.store import Store, StoreError

    path = results_path(target)
    if not path.is_file():
        raise StoreError(f"no results yet at {path} (run the tournament first)")
    return Store(path)


def cmd_run(args: argparse.Namespace) -> int:
    from arena.tournaments.config import load_config

    config = load_config(args.config, concurrency=args.concurrency)
    # The slots' worker processes start now, before trio runs: forked once this process has
    # imported what they run, their sandbox probes then run beside the rest of this process's
    # start-up (arena/workers/prelaunch.py)
    prelaunched = _prelaunch(args, config)
    try:
        return _run(args, config, prelaunched)
    finally:
        for pre in prelaunched:
            if not pre.adopted:  # the run failed before it took them
                pre.abandon()


def _prelaunch(args: argparse.Namespace, config: Any) -> list[Any]:
    """The worker processes of a run played here, if its concurrency is allowed (if not, the
    run says why, as before)."""
    from arena.oversubscription import available_cpus
    from arena.workers.prelaunch import prelaunch, slot_cores

    if args.database is not None or config.database is not None:
        return []
    insist = config.oversubscribe or args.force
    if config.concurrency > available_cpus() and not insist:
        return []
    return prelaunch(slot_cores(config.concurrency, config.pin_cores))


def _run(args: argparse.Namespace, config: Any, prelaunched: list[Any]) -> int:
    import trio

    from arena.tournaments.progress import LineProgress, LiveProgress, Progress
    from arena.tournaments.runner import run_tournament
    from arena.tournaments.store import Store

    if args.database is not None:
        if not args.database.startswith("postgresql"):
            raise ArenaError(
                f"--database: expected a PostgreSQL URL (postgresql+psycopg://...), "
                f"got {args.database!r}"
            )
        config = dataclasses.replace(config, database=args.database)
    if args.force:
        config = dataclasses.replace(config, oversubscribe=True)
    if args.clock is not None:
        config = config.with_clock(args.clock)
    play_elsewhere = None
    if config.database is not None:
        # the league's queue plays the games (imported only then: SQLAlchemy, procrastinate)
        from arena.league.tourjobs import check_sendable, queue_player

        check_sendable(config.bots)
        play_elsewhere = queue_player
    if args.quiet:
        progress: Progress = Progress()
    elif args.plain or not sys.stdout.isatty():
        progress = LineProgress()
    else:
        progress = LiveProgress(config.name)
    outcome = trio.run(
        lambda: run_tournament(
            config,
            progress=progress,
            handle_signals=True,
            drop_broken=args.drop_broken,
            play_elsewhere=play_elsewhere,
            prelaunched=prelaunched,
        )
    )
    if not args.quiet:
        # imported once the games are played: not part of the start-up before the first
        from arena.tournaments.report import build_report, render_text

        with Store(config.results) as store:
            print(render_text(build_report(store)), end="")
    missing = outcome.pending_at_start - outcome.played + outcome.skipped
    for name, why in outcome.dropped.items():
        print(f"dropped {name}: {why}", file=sys.stderr)
    if outcome.sprt is not None and outcome.sprt.decision:
        missing_text = f"SPRT decided ({outcome.sprt.decision} accepted)"
    else:
        missing_text = f"{missing} missing"
    msg = (
        f"{outcome.status}: {outcome.played} games played this run, {missing_text}, "
        f"{outcome.voided} voided attempts; results in {outcome.results}"
    )
    print(msg, file=sys.stderr)
    if outcome.status == "stopped":
        print("run the same command again to resume", file=sys.stderr)
        return 130
    if outcome.unplayable:
        print(f"unplayable (voided repeatedly): {', '.join(outcome.unplayable)}", file=sys.stderr)
        return 1
    return 1 if outcome.dropped else 0


def cmd_status(args: argparse.Namespace) -> int:
    from arena.tournaments.report import bracket_lines, knockout_of, scheduled_total, sprt_of

    with open_store(args.target) as store:
        meta = store.meta()
        rows = store.games()
        sprt = sprt_of(meta, rows)
        bracket = knockout_of(meta, rows)
        config = meta.get("config", {})
        bots = meta.get("bots", [])
        played = store.count_games()
        total = scheduled_total(meta)
        voids = store.voids()
        runs = store.runs()
        counts = store.void_counts()
        recorded = store.recorded_ids()
    unplayable = sorted(
        g
        for g, n in counts.items()
        if g not in recorded and n >= int(config.get("max_attempts", 3))
    )
    print(f"tournament  {config.get('name')}")
    print(f"results     {store.path}")
    print(f"bots        {', '.join(bots)}")
    print(f"games       {', '.join(g['label'] for g in config.get('games', []))}")
    print(f"format      {config.get('format', 'round-robin')}")
    print(f"rounds      {config.get('rounds')}   seed {config.get('seed')}")
    if sprt:
        print(f"sprt        {sprt['bot']}: {sprt['summary']}")
    if bracket is not None:  # a knockout's total grows with its tie-breaks
        total = played + bracket["least_left"]
    if (bracket["champion"] if bracket is not None else played >= total) or (
        sprt and sprt["decision"]
    ):
        state = "complete"
    else:
        state = f"{total - played} missing"
    print(f"played      {played}/{total} ({state})")
    print(
        f"voided      {len(voids)} attempts"
        + (f", unplayable: {', '.join(unplayable)}" if unplayable else "")
    )
    if bracket is not None:
        for line in bracket_lines(bracket):
            print(f"bracket     {line}")
    for run in runs:
        print(
            f"run {run['run_id']:<3}     {run['started_at']}  {run['status']:<10} "
            f"played {run['played']}/{run['pending']}  voided {run['voided']}"
        )
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from arena.tournaments.report import (
        build_report,
        games_json,
        render_csv,
        render_games_csv,
        render_games_text,
        render_text,
    )

    with open_store(args.target) as store:
        if args.games:
            rows = store.games()
            if args.format == "csv":
                text = render_games_csv(rows)
            elif args.format == "json":
                text = json.dumps(games_json(rows), indent=2) + "\n"
            else:
                text = render_games_text(rows)
        elif args.format == "html":
            text = _html_report(store)
        else:
            report = build_report(store)
            if args.format == "json":
                text = json.dumps(report, indent=2) + "\n"
            elif args.format == "csv":
                text = render_csv(report)
            else:
                text = render_text(report)
    _emit(text, args.output)
    return 0


def _html_report(store: Store) -> str:
    """The report page with every recorded game's replay embedded (a game whose record does
    not replay is listed without one)."""
    from arena.referee import GameRecord, RecordError
    from arena.tournaments.report import build_report, game_fields, sprt_history
    from arena.viewer import replay_data
    from arena.viewer.report import report_page

    rows = store.games()
    replays = {}
    for row in rows:
        try:
            replays[row.game_id] = replay_data(GameRecord.from_dict(store.record(row.game_id)))
        except RecordError:
            continue
    return report_page(
        build_report(store),
        [game_fields(r) for r in rows],
        replays,
        sprt_history(store.meta(), rows),
    )


def cmd_record(args: argparse.Namespace) -> int:
    if args.turn is not None and not args.command:
        raise ArenaError("--turn goes with --command")
    with open_store(args.target) as store:
        record = store.record(args.game_id)
    if args.command:
        _emit(match_command(record, args.turn), args.output)
    else:
        _emit(json.dumps(record, indent=1) + "\n", args.output)
    return 0


def match_command(record: dict, turn: str | None = None) -> str:
    """The `arena match` command line that plays this record's game again from its opening,
    or with `turn` ("N" or "N.A") from that moment of it (its actions before as the opening:
    arena/referee/moments.py). The clocks start afresh there: an opening is nobody's time.

    Bots are named by their source (manifest or command); replace one with a new build to
    see how it does in the same position. Per-bot tournament settings (time odds, extra
    arguments, environment, bot options) have no `arena match` flags: they are listed in a
    comment so nothing is silently dropped.
    """
    import shlex

    from arena.tournaments.openings import format_opening

    bots = sorted(record["bots"], key=lambda b: b["seat"])
    argv = ["arena", "match", record["game"], *(b.get("source") or b["name"] for b in bots)]
    opening = record.get("opening")
    if turn is not None:
        from arena.referee import GameRecord
        from arena.referee.moments import find_moment, opening_before, parse_moment

        n, a = parse_moment(turn, "--turn")
        opening = opening_before(find_moment(GameRecord.from_dict(record), n, a, "--turn"))
    if opening:
        argv += ["--opening", format_opening(opening)]
    argv += ["--seed", str(record.get("seed", 0))]
    tc = record.get("time_control") or {}
    if tc.get("base") is not None:
        argv += ["--tc", f"{tc['base']:g}+{tc.get('increment', 0):g}"]
    if tc.get("move_time") is not None:
        argv += ["--move-time", f"{tc['move_time']:g}"]
    for key in ("startup", "margin", "bank", "first_move"):
        if tc.get(key) is not None:
            argv += [f"--{key.replace('_', '-')}", f"{tc[key]:g}"]
    if tc.get("clock", "wall") != "wall":
        argv += ["--clock", tc["clock"], "--wall-cap", f"{tc.get('wall_cap', 3.0):g}"]
    for k, v in (record.get("options") or {}).items():
        value = str(v).lower() if isinstance(v, bool) else str(v)
        argv += ["-o", f"{k}={value}"]
    lines = [shlex.join(argv)]
    for b in bots:
        extra = {k: b[k] for k in ("time_control", "bot_options") if b.get(k)}
        if extra:
            lines.append(f"# seat {b['seat']} ({b['name']}) also had {json.dumps(extra)}")
    return "\n".join(lines) + "\n"


def _emit(text: str, output: str | None) -> None:
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
