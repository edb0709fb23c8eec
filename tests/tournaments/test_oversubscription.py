"""Oversubscription (issue 19): a concurrency above the CPUs available is refused, with one line
naming the problem and the way out, unless the operator insists (`--force`, `oversubscribe`).

The CPUs are the process's affinity, so `taskset -c 0` gives a one-CPU machine on any host.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.errors import ArenaError
from arena.oversubscription import OversubscribedError, available_cpus, check_concurrency
from arena.tournaments.config import load_config

from .tournament_helpers import BOTS, REPO, write_config

CPUS = available_cpus()


def _config(tmp_path: Path, concurrency: int, extra: str = "") -> Path:
    return write_config(
        tmp_path,
        f'name = "over"\nseed = 1\nconcurrency = {concurrency}\n{extra}'
        f'bots = ["{BOTS / "random-c"}", "{BOTS / "random-py"}"]\n'
        'games = [{ name = "wrigglers", options = { max_turns = 6 } }]\n'
        'results = "over.sqlite"\ntime_control = "20+0.2"\n',
    )


def _arena(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "arena", *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
    )


def _refused(result: subprocess.CompletedProcess, concurrency: int, cpus: int) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        f"arena: error: concurrency {concurrency} is more than the {cpus} CPU(s)"
    ), lines[0]
    assert "lose games on time" in lines[0] and "--force" in lines[0]


def _played(results: Path) -> tuple[int, int]:
    """(games recorded, the concurrency the run stored)."""
    import json

    with sqlite3.connect(results) as db:
        n = db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    return n, json.loads(meta["config"])["concurrency"]


@given(concurrency=st.integers(1, 512), cpus=st.integers(1, 256), insist=st.booleans())
def test_refused_exactly_when_thinking_bots_outnumber_the_cpus(
    concurrency: int, cpus: int, insist: bool
) -> None:
    try:
        check_concurrency(concurrency, insist=insist, way_out="X", cpus=cpus)
    except OversubscribedError as e:
        assert isinstance(e, ArenaError) and not insist and concurrency > cpus
        assert str(e).endswith("or X to run anyway") and "\n" not in str(e)
    else:
        assert insist or concurrency <= cpus


def test_the_default_concurrency_is_the_cpus_of_the_affinity(tmp_path: Path) -> None:
    import os

    assert len(os.sched_getaffinity(0)) == CPUS
    cfg = write_config(tmp_path, f'bots = ["{BOTS / "random-c"}", "{BOTS / "random-py"}"]\n')
    assert load_config(cfg).concurrency == CPUS
    assert load_config(cfg).oversubscribe is False


def test_tournament_above_the_cpus_is_refused_before_anything_starts(tmp_path: Path) -> None:
    cfg = _config(tmp_path, CPUS + 1)
    result = _arena("tournament", "run", str(cfg), "--quiet")
    _refused(result, CPUS + 1, CPUS)
    assert not (tmp_path / "over.sqlite").exists()  # refused before the results file
    # the flag overrides the file the same way
    ok = _config(tmp_path, 1)
    _refused(_arena("tournament", "run", str(ok), "-j", str(CPUS + 1)), CPUS + 1, CPUS)


def test_force_and_the_config_key_insist(tmp_path: Path) -> None:
    cfg = _config(tmp_path, CPUS + 1)
    result = _arena("tournament", "run", str(cfg), "--quiet", "--force")
    assert result.returncode == 0, result.stderr
    assert _played(tmp_path / "over.sqlite") == (2, CPUS + 1)

    keyed = tmp_path / "keyed"
    keyed.mkdir()
    cfg = _config(keyed, CPUS + 1, "oversubscribe = true\n")
    assert load_config(cfg).oversubscribe is True
    result = _arena("tournament", "run", str(cfg), "--quiet")
    assert result.returncode == 0, result.stderr
    assert _played(keyed / "over.sqlite") == (2, CPUS + 1)


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset (util-linux)")
def test_the_cpus_are_the_affinity_not_the_machine(tmp_path: Path) -> None:
    """On one CPU (taskset) two games at once are refused, and the default is one."""
    one_cpu = ("taskset", "-c", "0")
    cfg = _config(tmp_path, 2)
    _refused(_arena("tournament", "run", str(cfg), "--quiet", prefix=one_cpu), 2, 1)
    result = _arena("tournament", "run", str(cfg), "--quiet", "-j", "0", prefix=one_cpu)
    assert result.returncode == 0, result.stderr
    assert _played(tmp_path / "over.sqlite") == (2, 1)


def test_sprt_refuses_and_force_insists(tmp_path: Path) -> None:
    args = [
        "sprt",
        "wrigglers",
        str(BOTS / "random-c"),
        str(BOTS / "random-py"),
        "-o",
        "max_turns=6",
        "--max-games",
        "2",
        "--quiet",
        "-j",
        str(CPUS + 1),
        "--results",
        str(tmp_path / "s.sqlite"),
    ]
    _refused(_arena(*args), CPUS + 1, CPUS)
    assert not (tmp_path / "s.sqlite").exists()
    result = _arena(*args, "--force")
    assert result.returncode in (0, 1, 3), result.stderr  # a decision or none: it ran
    assert _played(tmp_path / "s.sqlite") == (2, CPUS + 1)


def test_the_readme_tournament_runs_on_this_machine() -> None:
    """tournaments/bundled.toml (the README's first command) leaves the concurrency to the
    default, so it is never refused, whatever the machine."""
    config = load_config(REPO / "tournaments" / "bundled.toml")
    check_concurrency(config.concurrency, insist=config.oversubscribe, way_out="-")
    assert config.concurrency == CPUS
