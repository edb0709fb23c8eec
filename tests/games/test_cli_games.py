"""`arena games` and `arena rules`: run as a user would, through the installed entry point."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena.games import GAME_NAMES

ARENA = [sys.executable, "-m", "arena"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=60)


def test_games_lists_every_variant_with_options_and_defaults():
    out = run("games")
    assert out.returncode == 0, out.stderr
    for name in GAME_NAMES:
        assert name in out.stdout
    assert "board = hex 5" in out.stdout
    assert "ludii_rules = False" in out.stdout
    assert out.stdout.count("max_turns") == len(GAME_NAMES)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_rules_prints_the_rules_page(name):
    out = run("rules", name)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# ")
    assert "max_turns" in out.stdout


def test_rules_of_an_unknown_game_is_a_one_line_error():
    out = run("rules", "chess")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert "unknown game 'chess'" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_numeric_option_has_an_upper_bound(name):
    """A size or turn limit from the command line must not build a 10^12-cell board (or a
    value the protocol cannot encode): each integer option refuses a huge value."""
    from arena.games import game_class

    for spec in game_class(name).option_specs:
        if isinstance(spec.default, bool) or not isinstance(spec.default, int | str):
            continue
        huge = "hex 1000001" if spec.name == "board" else 10**12 + 1
        with pytest.raises(ValueError, match=r"at most|from|expected one of"):
            spec.parse(huge)
        if spec.name == "board":
            with pytest.raises(ValueError, match="from 2 to 26"):
                spec.parse("square 1000001")
