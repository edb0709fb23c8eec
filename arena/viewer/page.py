"""Replay data made into files: one self-contained HTML page, or one SVG per turn.

The page inlines `static/viewer.css`, `static/viewer.js` and the replay data, so it works from
a mail attachment or a file:// URL with no network (its Content-Security-Policy forbids any
fetch). A site that serves the static files itself (the league) includes the same two files and
calls `ArenaViewer.mount(element, data)` with the same data; `static_path` says where they are.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from arena.referee.record import GameRecord
from arena.viewer.replay import action_cells, cell_markup, mark_cells, replay_data


def static_path(name: str = "") -> Path:
    """A file of the viewer's static assets (`viewer.js`, `viewer.css`), or their directory."""
    return Path(str(resources.files("arena.viewer") / "static")) / name


@cache
def static_text(name: str) -> str:
    return static_path(name).read_text(encoding="utf-8")


@cache
def templates() -> jinja2.Environment:
    """The viewer's Jinja2 templates, HTML-escaped by default."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("arena.viewer", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def replay_title(data: dict[str, Any]) -> str:
    names = " vs ".join(p["name"] for p in data["players"])
    return f"{data['title']}: {names} ({data['result'].get('result') or 'unfinished'})"


def replay_page(data: dict[str, Any]) -> str:
    """A complete HTML page showing one replay."""
    return (
        templates()
        .get_template("replay.html")
        .render(
            title=replay_title(data),
            data=data,
            css=static_text("viewer.css"),
            js=static_text("viewer.js"),
        )
    )


def write_replay_html(record: GameRecord, path: str | Path) -> Path:
    out = Path(path)
    out.write_text(replay_page(replay_data(record)), encoding="utf-8")
    return out


def write_turn_svgs(record: GameRecord, directory: str | Path) -> list[Path]:
    """`turn-000.svg` (the start, after any opening), then one file per recorded turn, each
    with the cells of that turn's actions outlined, and what else the turn changed dashed."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    before: dict[str, str] = {}
    for i, (entry, state) in enumerate(record.replay_states()):
        svg = state.render_svg()
        now = cell_markup(svg)
        cells: list[str] = []
        changed: list[str] = []
        if entry is not None:
            for item in entry["actions"]:
                if not item.get("illegal"):
                    cells.extend(action_cells(item["action"]))
            changed = [name for name, markup in now.items() if before.get(name) != markup]
        before = now
        path = out / f"turn-{i:03d}.svg"
        path.write_text(mark_cells(svg, cells, changed) + "\n", encoding="utf-8")
        written.append(path)
    return written
