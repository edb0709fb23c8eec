"""`arena league season open|close|list` and `arena league final start|status|stop`: an
operator's seasons and finals, run on the league's database directly (like `user` and `bot`;
the server needs no restart: it reads both from the database). See docs/league.md, "Seasons"
and "Finals"."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(lsub: argparse._SubParsersAction, league_dir: Any, opener: Any) -> None:
    """Add the `season` and `final` commands; `league_dir` adds the -C/--league option, and
    `opener` opens a league directory (arena/cli/league.py's, passed in rather than imported
    back, so that the two modules do not import each other)."""
    s = lsub.add_parser("season", help="operator: open, close and list seasons")
    ssub = s.add_subparsers(dest="season_command", metavar="ACTION")
    s.set_defaults(func=lambda args: (s.print_help(), 2)[1], open_league=opener)
    so = ssub.add_parser(
        "open", help="open season NAME: fresh ratings for every active version (none may be open)"
    )
    so.add_argument("name", metavar="NAME")
    league_dir(so)
    so.set_defaults(func=cmd_season_open)
    sc = ssub.add_parser(
        "close", help="close the open season: its leaderboards are kept; rated games stop"
    )
    league_dir(sc)
    sc.set_defaults(func=cmd_season_close)
    sl = ssub.add_parser("list", help="every season, newest first")
    league_dir(sl)
    sl.set_defaults(func=cmd_season_list)

    f = lsub.add_parser("final", help="operator: a final among a season's best (start, status)")
    fsub = f.add_subparsers(dest="final_command", metavar="ACTION")
    f.set_defaults(func=lambda args: (f.print_help(), 2)[1], open_league=opener)
    fs = fsub.add_parser(
        "start", help="start a final among the season's top N of each variant (or one variant)"
    )
    fs.add_argument("--season", required=True, metavar="NAME")
    fs.add_argument("--top", required=True, type=int, metavar="N", help="finalists per variant")
    fs.add_argument("--format", choices=("knockout", "round-robin"), default="knockout")
    fs.add_argument(
        "--pairs", type=int, default=1, metavar="K", help="game pairs per match or pairing (1)"
    )
    fs.add_argument(
        "--extra-pairs",
        type=int,
        default=1,
        metavar="E",
        help="knockout: tie-break pairs at most before the higher seed goes through (1)",
    )
    fs.add_argument("--variant", metavar="LABEL", help="one variant (default: every variant)")
    league_dir(fs)
    fs.set_defaults(func=cmd_final_start)
    ft = fsub.add_parser("status", help="the finals, or one final's bracket or standings")
    ft.add_argument("final_id", nargs="?", type=int, metavar="ID")
    ft.add_argument("--json", action="store_true", help="print as JSON")
    league_dir(ft)
    ft.set_defaults(func=cmd_final_status)
    fp = fsub.add_parser("stop", help="stop a running final (its queued games are dropped)")
    fp.add_argument("final_id", type=int, metavar="ID")
    league_dir(fp)
    fp.set_defaults(func=cmd_final_stop)


def cmd_season_open(args: argparse.Namespace) -> int:
    league = args.open_league(args.league)
    try:
        s = league.open_season_sync(args.name)
    finally:
        league.db.dispose()
    print(f"opened season {s.name!r}: every active version starts afresh (placement games)")
    return 0


def cmd_season_close(args: argparse.Namespace) -> int:
    league = args.open_league(args.league)
    try:
        s = league.close_season_sync()
    finally:
        league.db.dispose()
    print(f"closed season {s.name!r}: its leaderboards are kept; no rated games until one opens")
    return 0


def cmd_season_list(args: argparse.Namespace) -> int:
    from arena.league.db import seasons

    league = args.open_league(args.league)
    try:
        found = league.read_sync(seasons.all_seasons)
    finally:
        league.db.dispose()
    for s in found:
        closed = f"  closed {s.closed_at}" if s.closed_at else ""
        print(f"{s.name:<20} {s.state:<7} opened {s.opened_at}{closed}")
    return 0


def cmd_final_start(args: argparse.Namespace) -> int:
    league = args.open_league(args.league)
    try:
        variants = [args.variant] if args.variant else league.variants
        started = [
            league.start_final_sync(
                season=args.season,
                variant=v,
                top=args.top,
                fmt=args.format,
                pairs=args.pairs,
                extra_pairs=args.extra_pairs,
            )
            for v in variants
        ]
    finally:
        league.db.dispose()
    for f in started:
        names = ", ".join(f"{e['bot']} v{e['version']}" for e in f["entrants"])
        print(f"final {f['id']}: {f['variant']}, {f['format']} of {names}")
    return 0


def cmd_final_status(args: argparse.Namespace) -> int:
    league = args.open_league(args.league)
    try:
        if args.final_id is None:
            import trio

            data: Any = trio.run(league.finals, None)
        else:
            data = league.final_sync(args.final_id)
    finally:
        league.db.dispose()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    if args.final_id is None:
        for f in data:
            champ = f["champion"]
            won = f", won by {champ['bot']} v{champ['version']}" if champ else ""
            print(
                f"final {f['id']:<4} season {f['season']} {f['variant']} {f['format']} "
                f"top {len(f['entrants'])}: {f['state']}{won}"
            )
        return 0
    print("\n".join(final_lines(data)))
    return 0


def final_lines(f: dict[str, Any]) -> list[str]:
    """A final as text: its bracket match by match, or its standings; its champion."""

    def name(e: dict[str, Any] | None) -> str:
        return "?" if e is None else f"{e['bot']} v{e['version']} (#{e['seed']})"

    lines = [
        f"final {f['id']}: season {f['season']}, {f['variant']}, {f['format']}, "
        f"{f['pairs']} pair(s), {f['state']}"
    ]
    for rnd in f.get("rounds", []):
        for m in rnd:
            where = f"round {m['round']} match {m['match'] + 1}: "
            if m["bye"]:
                lines.append(where + f"{name(m['winner'])} (bye)")
                continue
            a, b = (name(s) for s in m["sides"])
            score = f"{m['points'][0]:g}-{m['points'][1]:g}"
            if m["winner"] is None:
                lines.append(where + f"{a} vs {b}  {score} after {m['pairs']} pair(s)")
            else:
                how = " on seed" if m["decided_by"] == "seed" else ""
                lines.append(where + f"{a} vs {b}  {score}: {m['winner']['bot']} goes through{how}")
    for r in f.get("standings", []):
        lines.append(f"{r['place']:>3}. {r['bot']} v{r['version']}  {r['points']:g} / {r['games']}")
    champ = f["champion"]
    lines.append(
        f"champion: {champ['bot']} v{champ['version']}" if champ else "champion: not decided yet"
    )
    return lines


def cmd_final_stop(args: argparse.Namespace) -> int:
    league = args.open_league(args.league)
    try:
        league.stop_final_sync(args.final_id)
    finally:
        league.db.dispose()
    print(f"stopped final {args.final_id}")
    return 0
