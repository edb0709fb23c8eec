"""The import layers issue 20 fixed, read from the source (imports inside functions too): the
sandbox at the bottom imports nothing of the arena but arena/errors.py, which imports nothing;
the referee workers (arena/workers/) sit under both tournaments and the league, and
tournaments never import the league (the league's queue is handed to the runner as a player)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imports_of(where: str) -> dict[str, set[str]]:
    """Module file -> the arena/protocol modules it imports, anywhere in its body, for a
    package directory or one module file."""
    out: dict[str, set[str]] = {}
    top = ROOT / where
    for path in sorted(top.rglob("*.py") if top.is_dir() else [top]):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        out[str(path.relative_to(ROOT))] = {
            m for m in found if m.split(".")[0] in ("arena", "protocol")
        }
    return out


def test_tournaments_and_workers_never_import_the_league() -> None:
    for package in ("arena.tournaments", "arena.workers"):
        for module, names in imports_of(package.replace(".", "/")).items():
            upward = sorted(n for n in names if n.startswith("arena.league"))
            assert upward == [], f"{module} imports {upward}"


def test_the_workers_import_neither_tournaments_nor_the_cli() -> None:
    for module, names in imports_of("arena/workers").items():
        above = sorted(n for n in names if n.startswith(("arena.tournaments", "arena.cli")))
        assert above == [], f"{module} imports {above}"


def test_the_sandbox_stays_at_the_bottom() -> None:
    assert imports_of("arena/errors.py") == {"arena/errors.py": set()}
    for module, names in imports_of("arena/sandbox").items():
        outside = sorted(n for n in names if not n.startswith("arena.sandbox"))
        assert set(outside) <= {"arena.errors"}, f"{module} imports {outside}"
