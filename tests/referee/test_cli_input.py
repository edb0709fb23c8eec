"""Bad input to `arena match` / `arena check` is one line `arena: error: ...` and exit 2, before
any game starts; a finished game is never lost to an unwritable `--record` path."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import BOTS, ROOT

PY = str(BOTS / "random-py")


def arena(*args: str) -> subprocess.CompletedProcess:
    """The real command, so argparse's own exits and tracebacks are what is checked."""
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def assert_one_line(result: subprocess.CompletedProcess, needle: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), result.stderr
    assert needle in lines[0], lines[0]
    assert "turn 1:" not in result.stdout  # nothing was played


@contextlib.contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """A file this process cannot write: immutable for root (who ignores modes), else 0444."""
    path.write_text("{}")
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        path.chmod(0o444)
        yield


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["match", "stripes", PY], "the following arguments are required: BOT_B"),
        (["bogus"], "invalid choice: 'bogus'"),
        (["match", "stripes", PY, PY, "--seed", "99999999999999999999999"], "--seed"),
        (["match", "stripes", PY, PY, "--seed", "-1"], "from 0 to 2^63-1"),
        (["match", "stripes", PY, PY, "--seed", str(2**63)], "from 0 to 2^63-1"),
        (["match", "stripes", PY, PY, "--json", "--quiet"], "not allowed with argument --json"),
        (["check", PY, "--turns", "0"], "--turns: expected a positive integer"),
        (["match", "stripes", PY, PY, "-o", "size=1000001"], "size: must be at most 51"),
        (["match", "papagra", PY, PY, "-o", "max_turns=10000000"], "must be at most 100000"),
        (["match", "stripes", PY, PY, "--isolation", "docker"], "docker mode needs an image"),
        (["tournament", "run", "x.toml", "-j", "-1"], "argument -j/--concurrency"),
        (["match", "stripes", PY, PY, "--tc", "1e300"], "base must be at most 604800 s"),
        (["match", "stripes", PY, PY, "--startup", "1e9"], "startup must be at most"),
        (["match", "stripes", PY, PY, "--limit", "memory_mb=-5"], "--limit memory_mb must be"),
        (["check", PY, "--limit", "processes=0"], "--limit processes must be from 1"),
        (["match", "stripes", PY, PY, "--limit", "network"], "expected KEY=VALUE"),
    ],
)
def test_bad_input_is_one_line(args: list[str], needle: str) -> None:
    assert_one_line(arena(*args), needle)


def test_the_largest_seed_is_played() -> None:
    result = arena("match", "stripes", PY, PY, "--seed", str(2**63 - 1), "--json", "--tc", "20+1")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["seed"] == 2**63 - 1


def test_record_path_is_checked_before_the_game(tmp_path: Path) -> None:
    base = ["match", "stripes", PY, PY, "--record"]
    assert_one_line(arena(*base, str(tmp_path / "no" / "g.json")), "no such directory")
    assert_one_line(arena(*base, str(tmp_path)), "is a directory")
    target = tmp_path / "locked.json"
    with unwritable(target):
        assert_one_line(arena(*base, str(target)), "cannot write")


def test_a_record_that_cannot_be_written_after_the_game_is_kept(tmp_path: Path) -> None:
    """/dev/full passes every check (as root) and fails the write: the result is printed and
    the record goes to a temporary file, named on stderr. Without root the check refuses it."""
    result = arena("match", "stripes", PY, PY, "-q", "--tc", "20+1", "--record", "/dev/full")
    if os.geteuid() != 0:
        assert_one_line(result, "--record /dev/full")
        return
    assert result.returncode == 1, result.stderr
    assert " by " in result.stdout  # the result line
    line = result.stderr.strip()
    assert line.startswith("arena: error: cannot write the record to /dev/full"), line
    spare = Path(line.rsplit("written to ", 1)[1].removesuffix(" instead"))
    try:
        assert json.loads(spare.read_text())["game"] == "stripes"
    finally:
        spare.unlink()


def test_a_bot_that_cannot_start_is_an_error_before_the_game(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text('name = "nobin"\ncommand = ["./missing"]\n')
    assert_one_line(arena("match", "stripes", PY, str(tmp_path)), "bot nobin: cannot start")
    check = arena("check", str(tmp_path), "--game", "stripes")
    assert check.returncode == 1 and "Traceback" not in check.stderr, check.stderr
    assert "FAIL start: bot nobin: cannot start ./missing: no such file" in check.stdout
    assert " as red" not in check.stdout  # no game was played


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--tc", "5+0", "--move-time", "0.2", "--bank", "1"], "--bank: bank needs a fixed move"),
        (["--bank", "1"], "--bank: bank needs a fixed move time (move_time)"),
        (["--move-time", "0.2", "--bank", "lots"], "--bank: bank: expected a number of seconds"),
        (["--move-time", "0.2", "--bank", "-1"], "--bank: bank must be a number >= 0"),
        (["--move-time", "1", "--first-move", "0.5"], "--first-move: first_move must be at least"),
        (["--tc", "5+0", "--first-move", "2"], "--first-move: first_move needs a fixed move time"),
    ],
)
def test_bad_time_banks_are_one_line_naming_the_flag(flags, needle):
    assert_one_line(arena("match", "stripes", PY, PY, *flags), needle)


def test_a_bank_drops_the_commands_default_fischer_clock():
    """`arena check` and `arena sprt` default to a Fischer clock; asking for a bank asks for a
    move-time clock instead of an error about a clock the user never gave."""
    from arena.cli import build_parser
    from arena.cli.options import time_control_from
    from arena.referee import TimeControl

    for command in (["check", PY], ["sprt", "stripes", PY, PY]):
        args = build_parser().parse_args([*command, "--move-time", "0.2", "--bank", "1"])
        assert time_control_from(args) == TimeControl(move_time=0.2, bank=1.0)
        args = build_parser().parse_args([*command, "--move-time", "0.2"])
        assert time_control_from(args).base is not None  # as before without a bank
