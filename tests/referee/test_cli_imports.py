"""What the `arena` command imports before it knows what to do.

`arena --help`, a typo in a subcommand and the argument checks of `arena match` must not pay
for the heavy optional parts: Docker's SDK, rich (the live display), the tournament runner and
the league (SQLAlchemy, Starlette, ...). Behaviour, not timing: `python -X importtime` lists
every module imported, and these must not be among them (benchmarks/tournament.py measures how
long start-up takes).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("docker", "rich", "sqlalchemy", "starlette", "arena.tournaments", "arena.league")


def imported_modules(*argv: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "arena", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names, proc


def heavy_in(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("match", "--help"),
        ("tournament", "--help"),
        ("league", "--help"),
        ("sprt", "--help"),
        ("play", "--help"),
        ("games",),
    ],
)
def test_cli_start_imports_nothing_heavy(argv):
    names, proc = imported_modules(*argv)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "arena.cli" in names  # the listing really covers the CLI
    assert heavy_in(names) == []


def test_help_does_not_start_trio():
    names, _ = imported_modules("--help")
    assert "trio" not in names
    assert "arena.referee.match" not in names


def test_match_argument_error_imports_nothing_heavy():
    names, proc = imported_modules("match", "nosuchgame", "a", "b")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("arena: error:")
    assert heavy_in(names) == []


def test_tournament_command_does_import_the_runner(tmp_path):
    """The listing would catch the heavy modules: a tournament command does import them."""
    names, _ = imported_modules("tournament", "status", str(tmp_path / "missing.toml"))
    assert "arena.tournaments" in names


def test_a_command_imports_its_own_module_only(tmp_path):
    """A command line naming a subcommand imports that command's module, not every other
    command's (`arena tournament run` paid for `arena check`'s and the league's). The
    listing shows what those modules import (themselves are imported by `importlib`, which
    -X importtime does not list): arena/cli/match.py the conformance check, arena/cli/league.py
    its seasons' commands."""
    names, _ = imported_modules("tournament", "status", str(tmp_path / "missing.toml"))
    assert "arena.tournaments.report" in names  # the listing covers the command
    assert {"arena.referee.check", "arena.cli.league_seasons"} & names == set()
    names, _ = imported_modules("match", "nosuchgame", "a", "b")
    assert "arena.referee.check" in names and "arena.cli.league_seasons" not in names


def test_every_command_maps_to_the_module_that_registers_it():
    """`COMMAND_MODULE` (which module a command line needs) is what the modules register."""
    from arena.cli import _COMMAND_MODULES, COMMAND_MODULE, build_parser

    registered = {}
    for module in _COMMAND_MODULES:
        parser = build_parser((module,))
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        registered.update(dict.fromkeys(sub.choices, module))
    assert registered == COMMAND_MODULE
