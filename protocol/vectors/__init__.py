"""Test vectors of the five variants, for authors who write their own rules code.

`<game>.json` beside this file holds positions reached from the start by listed actions, each
with the position exactly as the protocol's `turn` message carries it, the legal next actions,
the scores, whether the game is over and its result (docs/vectors.md). They are generated from
the arena's own engines (`python -m protocol.vectors`, see `generate.py`) and a test rebuilds
them and fails when the shipped files differ, so they cannot drift from the rules the referee
enforces. They ship inside the package (`protocol/vectors/*.json` in the wheel), so an installed
arena has them too: `load(game)`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: where the shipped files are (in a checkout and in an installed package alike)
VECTORS_DIR = Path(__file__).resolve().parent


def path(game: str) -> Path:
    return VECTORS_DIR / f"{game}.json"


def load(game: str) -> dict[str, Any]:
    """One game's file: `{"format", "game", "generator", "vectors": [...]}`."""
    return json.loads(path(game).read_text(encoding="utf-8"))


__all__ = ["VECTORS_DIR", "load", "path"]
