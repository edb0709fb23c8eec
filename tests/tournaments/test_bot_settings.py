"""Per-bot settings of a tournament config: one manifest, two entries, each with its own time
control, arguments, environment and `hello.bot_options`, checked from what a real bot saw."""

from __future__ import annotations

import json
from pathlib import Path

from arena.tournaments.config import load_config
from arena.tournaments.runner import run_tournament
from arena.tournaments.store import Store

from .tournament_helpers import write_config

# reports what it received in its `ready.version`, then plays random legal actions
BOT = """
import json, os, random, sys

rng = random.Random(1)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        seen = {
            "argv": sys.argv[1:],
            "env": os.environ.get("ECHO_MODE"),
            "bot_options": msg.get("bot_options"),
            "time_control": msg["time_control"],
        }
        reply = {"type": "ready", "name": "echo", "version": json.dumps(seen), "legal": True}
    elif msg["type"] == "turn":
        reply = {"type": "move", "actions": [rng.choice(msg["legal"])]}
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


async def test_two_entries_of_one_manifest_get_their_own_settings(tmp_path: Path) -> None:
    bot = tmp_path / "echo"
    bot.mkdir()
    (bot / "bot.py").write_text(BOT)
    (bot / "bot.toml").write_text(
        'name = "echo"\ncommand = ["python3", "bot.py"]\nencoding = "json"\n'
    )
    text = """
seed = 1
concurrency = 1
games = ["stripes"]
time_control = { base = 20.0, increment = 0.5, startup = 20.0 }
results = "s.sqlite"
[[bots]]
path = "echo"
name = "fast"
args = ["--depth", "3"]
env = { ECHO_MODE = "quick" }
options = { depth = 3, book = "none", weights = [1, 2.5] }
time_control = { base = 5.0, increment = 0.1, startup = 20.0 }
[[bots]]
path = "echo"
name = "plain"
"""
    cfg = load_config(write_config(tmp_path, text))
    out = await run_tournament(cfg)
    assert out.status == "complete" and out.played == 2
    with Store(cfg.results) as s:
        records = [s.record(r.game_id) for r in s.games()]
    for rec in records:
        by_name = {b["name"]: b for b in rec["bots"]}
        seen = {by_name[n]["seat"]: n for n in by_name}
        for seat, ready in enumerate(rec["ready"]):
            got = json.loads(ready["version"])
            if seen[seat] == "fast":
                assert got["argv"] == ["--depth", "3"]
                assert got["env"] == "quick"
                assert got["bot_options"] == {"depth": 3, "book": "none", "weights": [1, 2.5]}
                assert got["time_control"]["base"] == 5.0
                assert by_name["fast"]["time_control"]["base"] == 5.0  # recorded
                assert by_name["fast"]["bot_options"]["depth"] == 3
            else:
                assert got == {
                    "argv": [],
                    "env": None,
                    "bot_options": None,
                    "time_control": {**got["time_control"], "base": 20.0, "increment": 0.5},
                }
                assert "time_control" not in by_name["plain"]
        assert rec["time_control"]["base"] == 20.0
