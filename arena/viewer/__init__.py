"""The game viewer: a record as replay data, and the page and pictures made from it.

`replay_data(record)` is the JSON-safe replay (format `arena-replay/1`, replay.py); the static
`viewer.js`/`viewer.css` show it in any page (`ArenaViewer.mount(element, data)`); `replay_page`
makes the self-contained HTML file of `arena replay --html` and `arena match --html`, and
`write_turn_svgs` the per-turn pictures of `--svg DIR`. The tournament report's HTML form embeds
the same viewer.
"""

from arena.viewer.page import (
    replay_page,
    static_path,
    static_text,
    templates,
    write_replay_html,
    write_turn_svgs,
)
from arena.viewer.replay import REPLAY_FORMAT, action_cells, cell_markup, mark_cells, replay_data

__all__ = [
    "REPLAY_FORMAT",
    "action_cells",
    "cell_markup",
    "mark_cells",
    "replay_data",
    "replay_page",
    "static_path",
    "static_text",
    "templates",
    "write_replay_html",
    "write_turn_svgs",
]
