"""Standings, crosstable, ratings and pentanomial counts from a results file.

Everything is computed from the recorded games alone (plus the config summary stored with
them), so a report can be made while a run is going, after a kill, or on another machine. The
JSON form is the complete report; text and CSV are views of it.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena.referee.outcome import KIND_ORDER, Reason, forfeit_seats
from arena.tournaments.knockout import Rules
from arena.tournaments.ratings import fit_ratings
from arena.tournaments.schedule import knockout_key, knockout_state
from arena.tournaments.sprt import SprtParams
from arena.tournaments.stopping import SprtRule
from arena.tournaments.store import GameRow, Store

PENTANOMIAL_LABELS = ("0", "0.5", "1", "1.5", "2")


def forfeits_of(row: GameRow) -> list[int]:
    """Seats that forfeited this game (both, when both failed to start)."""
    return list(forfeit_seats(row.reason, row.winner))


def standings(
    bots: Sequence[str], rows: Iterable[GameRow], ratings: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Per bot: games, points, W/D/L, forfeits by kind, Elo; sorted by points, then Elo, then
    name. Never by fewer games: a bot with a game in hand has not earned a better place.

    `ratings` is `ratings_of(bots, rows)` when the caller has it already.
    """
    rows = list(rows)
    if ratings is None:
        ratings = ratings_of(bots, rows)
    rated = {p["bot"]: p for p in ratings["players"]}
    table = {
        b: {
            "bot": b,
            "games": 0,
            "points": 0.0,
            "wins": 0,
            "draws": 0,
            "losses": 0,
            "forfeits": dict.fromkeys(KIND_ORDER, 0),
        }
        for b in bots
    }
    for row in rows:
        for seat in (0, 1):
            s = table.setdefault(
                row.bots[seat],
                {
                    "bot": row.bots[seat],
                    "games": 0,
                    "points": 0.0,
                    "wins": 0,
                    "draws": 0,
                    "losses": 0,
                    "forfeits": dict.fromkeys(KIND_ORDER, 0),
                },
            )
            s["games"] += 1
            p = row.points(seat)
            s["points"] += p
            s["wins" if p == 1 else "draws" if p == 0.5 else "losses"] += 1
        for seat in forfeits_of(row):
            table[row.bots[seat]]["forfeits"][Reason(row.reason).kind] += 1
    for s in table.values():
        player = rated.get(s["bot"], {})
        s["elo"], s["ci95"] = player.get("elo"), player.get("ci95")

    def order(s: Mapping[str, Any]) -> tuple[float, float, str]:
        rating = s["elo"] if s["elo"] is not None else -math.inf
        return (-s["points"], -rating, s["bot"])

    out = sorted(table.values(), key=order)
    for rank, s in enumerate(out, 1):
        s["rank"] = rank
        s["score"] = round(s["points"] / s["games"], 4) if s["games"] else None
    return out


def ratings_of(bots: Sequence[str], rows: Iterable[GameRow]) -> dict[str, Any]:
    index = {b: i for i, b in enumerate(bots)}
    games = [(index[r.bots[0]], index[r.bots[1]], r.points(0)) for r in rows]
    fit = fit_ratings(list(bots), games)
    return {
        "method": "Bradley-Terry maximum likelihood over all games, draws = half points",
        "anchor": "mean of all rated bots = 0",
        "prior_draws_per_pair": fit.prior_draws,
        "players": [
            {
                "bot": r.name,
                "elo": None if r.elo is None else round(r.elo, 1),
                "ci95": None if r.ci95 is None else round(r.ci95, 1),
                "games": r.games,
                "points": r.points,
            }
            for r in sorted(fit.ratings, key=lambda r: -(r.elo if r.elo is not None else -1e9))
        ],
    }


def crosstable(bots: Sequence[str], rows: Iterable[GameRow]) -> dict[str, dict[str, dict]]:
    """cells[a][b] = points of a against b and games played between them."""
    cells: dict[str, dict[str, dict]] = {
        a: {b: {"points": 0.0, "games": 0} for b in bots if b != a} for a in bots
    }
    for r in rows:
        for seat in (0, 1):
            a, b = r.bots[seat], r.bots[1 - seat]
            c = cells.setdefault(a, {}).setdefault(b, {"points": 0.0, "games": 0})
            c["points"] += r.points(seat)
            c["games"] += 1
    return cells


def pentanomial(bots: Sequence[str], rows: Iterable[GameRow]) -> list[dict[str, Any]]:
    """For each pair of bots, how many complete game pairs it scored 0, 0.5, 1, 1.5 or 2.

    A game pair is the same game and opening played from both seats; the counts are from the
    point of view of the pair's first bot (config order). Unfinished pairs are left out.
    """
    by_pair: dict[tuple, dict[int, GameRow]] = defaultdict(dict)
    for r in rows:
        by_pair[(r.round, r.game, r.pair)][r.seat_order] = r
    order = {b: i for i, b in enumerate(bots)}
    counts: dict[tuple[str, str], list[int]] = {}
    for games in by_pair.values():
        if len(games) != 2:
            continue
        first = games[0].bots[0]  # seat order 0: the pair's first bot sits in seat 0
        second = games[0].bots[1]
        if order.get(first, 0) > order.get(second, 0):
            first, second = second, first
        score = sum(g.points(g.bots.index(first)) for g in games.values())
        counts.setdefault((first, second), [0] * 5)[round(score * 2)] += 1
    return [
        {"bots": [a, b], "counts": c, "game_pairs": sum(c)}
        for (a, b), c in sorted(
            counts.items(), key=lambda kv: (order.get(kv[0][0], 0), order.get(kv[0][1], 0))
        )
    ]


def knockout_of(meta: Mapping[str, Any], rows: Iterable[GameRow]) -> dict[str, Any] | None:
    """A knockout's bracket as the recorded games leave it (None for other formats): every
    match by round with its sides, points, winner and how it was decided, the champion, and
    the games played and still needed at the least (more if a match goes to tie-breaks)."""
    spec = meta.get("identity", {}).get("knockout")
    if meta.get("config", {}).get("format") != "knockout" or not spec:
        return None
    rows = list(rows)
    seeds = list(spec["seeds"])
    state = knockout_state(seeds, Rules(spec["pairs"], spec["extra_pairs"]), rows)
    played = sum(1 for r in rows if knockout_key(r.game_id) is not None)

    def name(i: int | None) -> str | None:
        return None if i is None else seeds[i]

    return {
        "pairs": spec["pairs"],
        "extra_pairs": spec["extra_pairs"],
        "seeds": seeds,
        "champion": name(state.champion),
        "played": played,
        "least_left": state.least_games_left(),
        "rounds": [
            [
                {
                    "round": m.round,
                    "match": m.index,
                    "sides": [name(m.sides[0]), name(m.sides[1])],
                    "seeds": [None if x is None else x + 1 for x in m.sides],
                    "bye": m.bye,
                    "points": list(m.points),
                    "pairs": m.pairs_played,
                    "winner": name(m.winner),
                    "decided_by": m.decided_by,
                }
                for m in rnd
            ]
            for rnd in state.rounds
        ],
    }


def bracket_lines(bracket: Mapping[str, Any]) -> list[str]:
    """The bracket as text lines, one per match, round by round (report and status)."""
    lines = []
    for rnd in bracket["rounds"]:
        for m in rnd:
            a, b = (
                f"{s or '?'}" + (f" (#{seed})" if seed else "")
                for s, seed in zip(m["sides"], m["seeds"], strict=True)
            )
            if m["bye"]:
                text = f"{m['winner']} (bye)"
            elif m["winner"] is None:
                text = f"{a} vs {b}" + (
                    f"  {m['points'][0]:g}-{m['points'][1]:g} after {m['pairs']} pair(s)"
                    if m["pairs"]
                    else ""
                )
            else:
                how = " on seed" if m["decided_by"] == "seed" else ""
                text = (
                    f"{a} vs {b}  {m['points'][0]:g}-{m['points'][1]:g} "
                    f"({m['pairs']} pair(s)): {m['winner']} goes through{how}"
                )
            lines.append(f"round {m['round']} match {m['match'] + 1}: {text}")
    champion = bracket["champion"]
    lines.append(f"champion: {champion}" if champion else "champion: not decided yet")
    return lines


def scheduled_total(meta: Mapping[str, Any]) -> int:
    """Games in the schedule: every pairing plays every game from both seats, every round."""
    config = meta.get("config", {})
    pairs = meta.get("pairs")
    if pairs is None:  # a results file written before pairings were stored: a round robin
        n = len(meta.get("bots", []))
        pairs = [None] * (n * (n - 1) // 2)
    return len(config.get("games", [])) * len(pairs) * 2 * int(config.get("rounds", 1))


def sprt_of(meta: Mapping[str, Any], rows: Iterable[GameRow]) -> dict[str, Any] | None:
    """The SPRT of a run with an [sprt] stopping rule, recomputed from the recorded games."""
    spec = meta.get("sprt")
    if not spec:
        return None
    params = SprtParams(**{k: spec[k] for k in ("elo0", "elo1", "alpha", "beta", "model")})
    state = SprtRule.from_rows(params, spec["bot"], rows).state()
    return {"bot": spec["bot"], **state.to_dict(), "summary": state.summary()}


def sprt_history(meta: Mapping[str, Any], rows: Iterable[GameRow]) -> list[dict[str, Any]]:
    """The SPRT's LLR after every completed game pair, in schedule order (the HTML chart)."""
    spec = meta.get("sprt")
    if not spec:
        return []
    params = SprtParams(**{k: spec[k] for k in ("elo0", "elo1", "alpha", "beta", "model")})
    rule = SprtRule(params, spec["bot"])
    history = []
    for row in rows:
        state = rule.add(row)
        if state is not None:
            history.append({"pairs": state.pairs, "llr": round(state.llr, 4)})
    return history


def build_report(store: Store) -> dict[str, Any]:
    """The complete report of a results file as a JSON-safe dict."""
    meta = store.meta()
    config = meta.get("config", {})
    bots: list[str] = list(meta.get("bots", []))
    rows = store.games()
    voids = store.voids()
    total = scheduled_total(meta) if config and bots else len(rows)
    knockout = knockout_of(meta, rows)
    if knockout is not None:  # known as the bracket goes: played plus the least still needed
        total = len(rows) + knockout["least_left"]
    sprt = sprt_of(meta, rows)
    recorded = {r.game_id for r in rows}
    void_counts = Counter(v["game_id"] for v in voids)
    max_attempts = int(config.get("max_attempts", 3))
    unplayable = sorted(
        g for g, n in void_counts.items() if g not in recorded and n >= max_attempts
    )
    games = [g["label"] for g in config.get("games", [])] or sorted({r.game for r in rows})
    reasons = Counter(r.reason for r in rows)
    per_game = {}
    for label in games:
        sub = [r for r in rows if r.game == label]
        sub_ratings = ratings_of(bots, sub)
        per_game[label] = {
            "games": len(sub),
            "standings": standings(bots, sub, sub_ratings),
            "ratings": sub_ratings,
        }
    ratings = ratings_of(bots, rows)
    runs = store.runs()
    return {
        "format": "arena-tournament-report/1",
        "tournament": config.get("name"),
        "results": str(store.path),
        "created_at": meta.get("created_at"),
        "seed": config.get("seed"),
        "rounds": config.get("rounds"),
        "time_control": config.get("time_control"),
        "opening_turns": config.get("opening_turns"),
        "bots": bots,
        "games": games,
        "tournament_format": config.get("format", "round-robin"),
        "sprt": sprt,
        "bracket": knockout,
        "progress": {
            "scheduled": total,
            "played": len(rows),
            "missing": max(0, total - len(rows)),
            "complete": (
                bool(knockout["champion"])
                if knockout is not None
                else len(rows) >= total or bool(sprt and sprt["decision"])
            ),
            "voided_attempts": len(voids),
            "unplayable": unplayable,
            "runs": len(runs),
        },
        "standings": standings(bots, rows, ratings),
        "ratings": ratings,
        "per_game": per_game,
        "crosstable": crosstable(bots, rows),
        "pentanomial": pentanomial(bots, rows),
        "reasons": dict(reasons.most_common()),
        "voids": voids,
        "host_stalls": host_stalls(voids),
        "runs": runs,
    }


_HOST_STALL = re.compile(r"HostStall: host_stall: seat \d+ \((.*?)\) turn")


def host_stalls(voids: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Voided attempts the machine caused (arena/referee/blame.py), by the bot it held up:
    a bot that is often the one stalled may need more CPU than its share of the machine."""
    found: Counter[str] = Counter()
    for v in voids:
        m = _HOST_STALL.match(str(v.get("reason", "")))
        if m is not None:
            found[m.group(1)] += 1
    return dict(found.most_common())


# --- views --------------------------------------------------------------------------------


def _fmt_elo(p: Mapping[str, Any] | None) -> tuple[str, str]:
    if not p or p.get("elo") is None:
        return "-", ""
    ci = p.get("ci95")
    return f"{p['elo']:+.0f}", f"±{ci:.0f}" if ci is not None else ""


def _forfeit_text(f: Mapping[str, int]) -> str:
    letters = {
        "time": "T",
        "illegal": "I",
        "protocol": "P",
        "crash": "C",
        "start": "S",
        "memory": "M",
    }
    return " ".join(f"{letters[k]}{f[k]}" for k in KIND_ORDER if f.get(k)) or "-"


#: the width of a report written to a pipe or file (a terminal gets its own width)
DEFAULT_WIDTH = 110


def output_width() -> int:
    """The terminal's width, or DEFAULT_WIDTH when stdout is not a terminal."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def _text_console(width: int | None) -> tuple[Any, io.StringIO]:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(
        file=buf, width=width or output_width(), force_terminal=False, color_system=None
    )
    return console, buf


def _table(**kw: Any) -> Any:
    from rich import box
    from rich.table import Table as RichTable

    return RichTable(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, **kw)


def _text(buf: io.StringIO) -> str:
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())


def render_text(report: Mapping[str, Any], width: int | None = None) -> str:
    """The report as text tables (rich), the way engine testers read a tournament.

    `width` defaults to the terminal's. Tables never wrap a bot's name: when the crosstable
    is too wide for the width, its columns are numbered by rank instead of named.
    """
    console, buf = _text_console(width)
    prog = report["progress"]
    tc = report.get("time_control") or {}
    tc_text = []
    if tc.get("base") is not None:
        tc_text.append(f"{tc['base']:g}+{tc.get('increment', 0):g}")
    if tc.get("move_time") is not None:
        tc_text.append(f"{tc['move_time']:g}s/turn")
    if tc.get("first_move") is not None:
        tc_text.append(f"first move {tc['first_move']:g}s")
    if tc.get("bank"):
        tc_text.append(f"bank {tc['bank']:g}s")
    if tc.get("clock", "wall") != "wall":
        tc_text.append(f"{tc['clock']} clock")
    console.print(
        f"Tournament {report.get('tournament')}: {prog['played']}/{prog['scheduled']} games"
        + ("" if prog["complete"] else f" ({prog['missing']} missing)")
        + (f" ({report['tournament_format']})" if report.get("tournament_format") else "")
        + f", {len(report['bots'])} bots, games: {', '.join(report['games'])}, "
        f"rounds {report.get('rounds')}, tc {', '.join(tc_text) or '-'}, seed {report.get('seed')}"
    )
    if report.get("sprt"):
        console.print(f"{report['sprt']['bot']}: {report['sprt']['summary']}")
    if prog["voided_attempts"]:
        console.print(f"Voided attempts (arena-side failures, replayed): {prog['voided_attempts']}")
    if report.get("host_stalls"):
        console.print(
            "  of which host stalls (the machine held a bot up past the bound), by bot: "
            + ", ".join(f"{k} {v}" for k, v in report["host_stalls"].items())
        )
    if prog["unplayable"]:
        console.print(f"Unplayable after repeated voids: {', '.join(prog['unplayable'])}")
    if report.get("bracket"):
        b = report["bracket"]
        console.print()
        console.print(
            f"Bracket: matches of {b['pairs']} game pair(s), "
            f"up to {b['extra_pairs']} tie-break pair(s), then the higher seed"
        )
        for line in bracket_lines(b):
            console.print("  " + line, highlight=False)

    console.print()
    console.print(_heading("Standings, all games", report["ratings"]))
    console.print(standings_table(console, report["standings"]))
    console.print(
        "Elo: Bradley-Terry maximum likelihood over all games, mean 0, ±95% interval.\n"
        "Forfeits: T time, I illegal action, P protocol error, C crash, S failed start, M memory."
    )
    for label, sub in report["per_game"].items():
        if sub["games"]:
            console.print()
            console.print(_heading(f"{label}, {sub['games']} games", sub["ratings"]))
            console.print(standings_table(console, sub["standings"]))

    console.print()
    console.print(crosstable_table(console, report["bots"], report["crosstable"]))

    if report["pentanomial"]:
        console.print()
        console.print("Pentanomial: game pairs (both seats) by the first bot's score in the pair")
        pt = _table()
        pt.add_column("pair")
        for lab in PENTANOMIAL_LABELS:
            pt.add_column(lab, justify="right")
        pt.add_column("pairs", justify="right")
        for p in report["pentanomial"]:
            pt.add_row(
                f"{p['bots'][0]} vs {p['bots'][1]}", *map(str, p["counts"]), str(p["game_pairs"])
            )
        console.print(pt)
    if report["reasons"]:
        console.print()
        console.print(
            "Result reasons: " + ", ".join(f"{k} {v}" for k, v in report["reasons"].items())
        )
    return _text(buf)


def _too_wide(console: Any, table: Any) -> bool:
    """Whether `table` needs more columns than the console has (measured unconstrained)."""
    from rich.measure import Measurement

    unbounded = console.options.update_width(1 << 16)
    return Measurement.get(console, unbounded, table).maximum > console.width


def crosstable_table(console: Any, bots: Sequence[str], cells: Mapping[str, Any]) -> Any:
    """Points / games of the row bot against the column bot; columns are headed by the bots'
    names when that fits the console, else by their row numbers."""
    from rich.console import Group

    def build(numbered: bool) -> Any:
        t = _table()
        t.add_column("#" if numbered else "bot", no_wrap=True)
        for n, b in enumerate(bots, 1):
            t.add_column(str(n) if numbered else b, justify="right", no_wrap=True)
        for n, a in enumerate(bots, 1):
            row = []
            for b in bots:
                c = cells.get(a, {}).get(b, {"points": 0, "games": 0})
                row.append("" if a == b else f"{c['points']:g}/{c['games']}" if c["games"] else "-")
            t.add_row(f"{n} {a}" if numbered else a, *row)
        return t

    table = build(numbered=False)
    numbered = _too_wide(console, table)
    heading = "Crosstable: points / games of the row bot against the column bot" + (
        " (numbered as the rows)" if numbered else ""
    )
    return Group(heading, build(numbered=True) if numbered else table)


def _heading(title: str, ratings: Mapping) -> str:
    """The table title, saying why the Elo needed a prior when it did (see ratings.py)."""
    prior = ratings.get("prior_draws_per_pair")
    if not prior:
        return title
    scores = [p["points"] / p["games"] for p in ratings["players"] if p.get("games")]
    if any(score == 1.0 for score in scores):
        why = "a perfect score"
    elif any(score == 0.0 for score in scores):
        why = "a score of zero"
    else:
        why = "some bots never lost a point to the others"
    return f"{title} ({why}: Elo with {prior:g} virtual draw per pair)"


def standings_table(
    console: Any, rows: Sequence[Mapping[str, Any]], *, forfeits: bool = True, title: str = ""
) -> Any:
    """The standings as a rich table (report and live display), fitted to the console width.

    When the full table is wider than the console, Elo and its interval share a column, and
    so do wins, draws and losses; a bot's name is never cut.
    """
    table = _standings_table(rows, forfeits=forfeits, compact=False, title=title)
    if _too_wide(console, table):
        table = _standings_table(rows, forfeits=forfeits, compact=True, title=title)
    return table


def _standings_table(
    rows: Sequence[Mapping[str, Any]], *, forfeits: bool, compact: bool, title: str
) -> Any:
    t = _table(title=title or None, title_justify="left")
    name_width = max((len(s["bot"]) for s in rows), default=3)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("bot", no_wrap=True, min_width=name_width)
    heads = ["elo"] if compact else ["elo", "±95%"]
    heads += ["games", "points", "score"]
    heads += ["W-D-L"] if compact else ["W", "D", "L"]
    for head in heads:
        t.add_column(head, justify="right", no_wrap=True)
    if forfeits:
        t.add_column("forfeits")
    for s in rows:
        elo, ci = _fmt_elo(s)
        games, points, score, w, d, loss = standing_cells(s)
        cells = [f"{elo} {ci}".strip()] if compact else [elo, ci]
        cells += [games, points, score]
        cells += [f"{w}-{d}-{loss}"] if compact else [w, d, loss]
        if forfeits:
            cells.append(_forfeit_text(s["forfeits"]))
        t.add_row(str(s["rank"]), s["bot"], *cells)
    return t


def standing_cells(s: Mapping[str, Any]) -> tuple[str, ...]:
    """games, points, score, W, D, L of one standings row as table cells."""
    score = "-" if s["score"] is None else f"{100 * s['score']:.1f}%"
    return (
        str(s["games"]),
        f"{s['points']:g}",
        score,
        str(s["wins"]),
        str(s["draws"]),
        str(s["losses"]),
    )


def render_csv(report: Mapping[str, Any]) -> str:
    """Standings and ratings, one row per bot per scope (`all` and each game)."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(
        [
            "scope",
            "rank",
            "bot",
            "elo",
            "ci95",
            "games",
            "points",
            "score",
            "wins",
            "draws",
            "losses",
            *(f"forfeit_{k}" for k in KIND_ORDER),
        ]
    )
    scopes = itertools.chain(
        [("all", report["standings"], report["ratings"])],
        ((g, s["standings"], s["ratings"]) for g, s in report["per_game"].items()),
    )
    for scope, rows, ratings in scopes:
        by_bot = {p["bot"]: p for p in ratings["players"]}
        for s in rows:
            p = by_bot.get(s["bot"], {})
            w.writerow(
                [
                    scope,
                    s["rank"],
                    s["bot"],
                    p.get("elo"),
                    p.get("ci95"),
                    s["games"],
                    s["points"],
                    s["score"],
                    s["wins"],
                    s["draws"],
                    s["losses"],
                    *(s["forfeits"][k] for k in KIND_ORDER),
                ]
            )
    return out.getvalue()


def game_fields(r: GameRow) -> dict[str, Any]:
    """One recorded game as a JSON-safe dict (the `--games` listings)."""
    return {
        "game_id": r.game_id,
        "round": r.round,
        "game": r.game,
        "pair": r.pair,
        "seat_order": r.seat_order,
        "bots": list(r.bots),
        "result": r.result,
        "winner": r.winner,
        "reason": r.reason,
        "detail": r.detail,
        "forfeit": r.forfeit,
        "scores": list(r.scores),
        "turns": r.turns,
        "duration": r.duration,
        "attempt": r.attempt,
    }


def games_json(rows: Iterable[GameRow]) -> dict[str, Any]:
    """Every recorded game in schedule order, for `report --games --format json`."""
    return {"format": "arena-tournament-games/1", "games": [game_fields(r) for r in rows]}


def render_games_text(rows: Sequence[GameRow]) -> str:
    """Every recorded game, one line each: the ids `record` and `replay` take.

    Plain columns sized to their contents (not a rich table: a tournament holds thousands of
    games, and rich lays out a table of that many rows in seconds)."""
    head = ("game id", "seat 0 (moves first)", "seat 1", "result", "reason", "turns")
    table = [
        (
            r.game_id,
            r.bots[0],
            r.bots[1],
            r.result,
            r.reason,
            "-" if r.turns is None else str(r.turns),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in [head, *table]) for i in range(len(head))]

    def line(cells: Sequence[str]) -> str:
        text = "   ".join(c.ljust(w) for c, w in zip(cells[:-1], widths, strict=False))
        return f"{text}   {cells[-1].rjust(widths[-1])}"

    out = [f"{len(rows)} recorded games", line(head), "-" * len(line(head))]
    out += [line(row) for row in table]
    return "".join(x.rstrip() + "\n" for x in out)


def render_games_csv(rows: Iterable[GameRow]) -> str:
    """Every recorded game, one row each, in schedule order."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(
        [
            "game_id",
            "round",
            "game",
            "pair",
            "seat_order",
            "bot0",
            "bot1",
            "result",
            "winner",
            "reason",
            "forfeit",
            "score0",
            "score1",
            "turns",
            "duration",
            "attempt",
        ]
    )
    for r in rows:
        w.writerow(
            [
                r.game_id,
                r.round,
                r.game,
                r.pair,
                r.seat_order,
                r.bots[0],
                r.bots[1],
                r.result,
                r.winner,
                r.reason,
                int(r.forfeit),
                r.scores[0],
                r.scores[1],
                r.turns,
                r.duration,
                r.attempt,
            ]
        )
    return out.getvalue()
