"""The example bots of docs/protocol.md play real games: the spec's walkthrough stays true."""

from __future__ import annotations

import re
import sys

import pytest

from arena.referee import MatchConfig, TimeControl, load_bot, play_match

from .conftest import ROOT, bundled

DOC = ROOT / "docs" / "protocol.md"


def python_examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize(
    "index, encoding, game",
    [(0, "msgpack", "papagra"), (1, "json", "stripes")],
    ids=["msgpack", "json"],
)
async def test_the_minimal_bots_of_the_spec_play_a_game(tmp_path, index, encoding, game):
    bot = tmp_path / "minimal.py"
    bot.write_text(python_examples()[index])
    prefix = "json:" if encoding == "json" else ""
    spec = load_bot(f"{prefix}{sys.executable} {bot}")
    record = await play_match(
        MatchConfig(
            game=game,
            options={"max_turns": "40"},
            bots=(spec, bundled("random-py")),
            time_control=TimeControl(base=20.0),
        )
    )
    assert not record.result["forfeit"], record.result
    assert record.ready[0]["name"].startswith("minimal")
    assert record.exits[0]["exited_after_end"] is True


def test_every_reason_code_has_words():
    """Pages show a game's end in words (REASON_WORDS, beside the codes): every code the
    protocol documents and every one an engine's source can end a game with has its words."""
    from arena.referee.outcome import REASON_WORDS, Reason, reason_text

    section = DOC.read_text(encoding="utf-8").split("## 6.", 1)[1].split("## 7.", 1)[0]
    rules = section.split("By a forfeit", 1)[0]  # the engines' codes, then the table's
    documented = set(re.findall(r"`([a-z_]+)`", rules))
    documented |= set(re.findall(r"(?m)^\| `([a-z_]+)` \|", section))
    engines = set()
    for source in (ROOT / "arena" / "games").glob("*.py"):
        text = source.read_text(encoding="utf-8")
        engines |= set(re.findall(r"Result\(\s*[^,]+,\s*\"([a-z_]+)\"", text))
        engines |= set(re.findall(r"self\._(?:end|finish)\(\s*(?:[a-z_]+,\s*)?\"([a-z_]+)\"", text))
    assert {"stuck", "max_turns", "board_full"} <= engines  # the search finds them
    for code in documented | engines | set(Reason):
        assert code in REASON_WORDS, code
        assert "_" not in reason_text(code)
