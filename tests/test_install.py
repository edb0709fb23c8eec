"""A normal (non-editable) install works on its own: the wheel `pip install .` would install
carries the rules pages, the sparring bot and the starter kits, so `arena rules`,
`arena check` and `arena new` work from a virtual environment with nothing of the repository
beside the package. Slow (builds a wheel, makes a venv); needs no network beyond the package
index pip is configured with here (for the build backend), and installs the wheel itself
without any index."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(
    ".git", "__pycache__", "*.egg-info", "build", ".pytest_cache", ".hypothesis", "results",
    "tests", "benchmarks", "*.sqlite*",
)  # fmt: skip


def run(*argv: str | Path, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, (argv, result.stdout[-2000:], result.stderr[-2000:])
    return result


@pytest.mark.slow
def test_wheel_installed_in_a_fresh_venv_has_rules_and_sparring_bot(tmp_path: Path) -> None:
    # a copy, so that the in-tree build leaves nothing in the checkout
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=SKIP)
    wheels = tmp_path / "wheels"
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, src, cwd=tmp_path)
    (wheel,) = wheels.glob("arena-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "arena/_rules/stripes.md",
        "arena/_sparring/bot.toml",
        "arena/_sparring/bot.py",
    } <= names
    assert "arena/viewer/templates/replay.html" in names
    kit_files = {
        f"arena/_kits/{p.relative_to(ROOT / 'protocol' / 'kits')}"
        for p in (ROOT / "protocol" / "kits").rglob("*")
        if p.is_file()
    }
    assert {"arena/_kits/java/Bot.java", "arena/_kits/rust/src/main.rs"} <= kit_files
    assert kit_files <= names, sorted(kit_files - names)  # every kit file, dot files too
    assert "arena/league/migrations/script.py.mako" in names

    venv = tmp_path / "venv"
    # system site-packages: the dependencies are already installed there
    run(sys.executable, "-m", "venv", "--system-site-packages", venv, cwd=tmp_path)
    python, arena = venv / "bin" / "python", venv / "bin" / "arena"
    run(python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheel, cwd=tmp_path)
    where = run(
        python, "-c", "import arena.referee.check as c; print(c.__file__, c.CHECK_OPPONENT)",
        cwd=tmp_path,
    ).stdout.split()  # fmt: skip
    assert all(w.startswith(str(venv)) for w in where), where  # not the checkout's copy

    rules = run(arena, "rules", "stripes", cwd=tmp_path)
    assert rules.stdout.startswith("# Stripes!")
    check = run(arena, "check", ROOT / "bots" / "random-c", cwd=tmp_path)
    assert "random-c: all checks passed" in check.stdout, check.stdout
    # `arena new` copies a kit from the installed package, not from the checkout
    run(arena, "new", "mybot", "--lang", "go", cwd=tmp_path)
    assert sorted(p.name for p in (tmp_path / "mybot").iterdir()) == sorted(
        p.name for p in (ROOT / "protocol" / "kits" / "go").iterdir()
    )
