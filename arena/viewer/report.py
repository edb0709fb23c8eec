"""A tournament report as one HTML page, with every game's replay inside it.

The page is made from the report dict of `arena.tournaments.report.build_report` (standings,
ratings, crosstable, pentanomial counts, reasons, SPRT) plus the list of games and their replay
data; it does not read a results file itself. Everything it needs is in the one file, so it can
be mailed or put on any web server as is: the charts are inline SVG, and each game's replay is
embedded gzip-compressed (about a tenth of its JSON) and unpacked by the browser's own
`DecompressionStream` when the game is opened, into the same viewer as `arena replay --html`.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Mapping, Sequence
from typing import Any

from arena.referee.outcome import Reason
from arena.viewer.charts import elo_chart, llr_chart
from arena.viewer.page import static_text, templates

#: a game's row class by its reason: `forfeit` for a game decided by a bot's failure (the
#: arena's own codes, arena/referee/outcome.py), none for one the rules ended
REASON_KINDS = {str(r): "forfeit" for r in Reason}


def pack_replay(data: Mapping[str, Any]) -> str:
    """Replay data as base64 of gzipped compact JSON (what report.js unpacks)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return base64.b64encode(gzip.compress(text.encode("utf-8"), mtime=0)).decode("ascii")


def unpack_replay(packed: str) -> dict[str, Any]:
    return json.loads(gzip.decompress(base64.b64decode(packed)).decode("utf-8"))


def _pct(score: float | None) -> str:
    return "-" if score is None else f"{100 * score:.1f}%"


def _elo(p: Mapping[str, Any]) -> str:
    if p.get("elo") is None:
        return "-"
    ci = p.get("ci95")
    return f"{p['elo']:+.0f}" + (f" ± {ci:.0f}" if ci is not None else "")


def report_page(
    report: Mapping[str, Any],
    games: Sequence[Mapping[str, Any]],
    replays: Mapping[str, Mapping[str, Any]] | None = None,
    sprt_history: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The HTML page. `games`: every recorded game as `report.game_fields` gives it;
    `replays`: game id -> replay data (games without one are listed without a link);
    `sprt_history`: the LLR after each completed game pair, for the SPRT chart."""
    replays = replays or {}
    packed = {}
    rows = []
    for i, g in enumerate(games):
        key = f"game-{i + 1}"
        if g["game_id"] in replays:
            packed[key] = pack_replay(replays[g["game_id"]])
        rows.append({**g, "key": key, "has_replay": key in packed})
    sprt = report.get("sprt")
    sections = [
        {
            "title": label,
            "games": part["games"],
            "standings": part["standings"],
            "chart": elo_chart(part["ratings"]["players"], f"Elo in {label}"),
        }
        for label, part in report.get("per_game", {}).items()
    ]
    bots = list(report.get("bots", []))
    return (
        templates()
        .get_template("report.html")
        .render(
            r=report,
            title=f"Tournament {report.get('tournament') or ''}".strip(),
            bots=bots,
            elo_chart=elo_chart(report["ratings"]["players"], "Elo, all games"),
            sections=sections,
            sprt=sprt,
            sprt_chart=llr_chart(sprt_history, sprt["lower"], sprt["upper"]) if sprt else "",
            games=rows,
            replays=packed,
            reason_kinds=REASON_KINDS,
            pct=_pct,
            elo=_elo,
            css=static_text("viewer.css") + static_text("report.css"),
            js=static_text("viewer.js") + static_text("report.js"),
        )
    )
