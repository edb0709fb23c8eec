"""The rules engines and the registry that creates a game from its name and options.

Every other part of the arena goes through `make_game` and `GAME_NAMES` (the CLI, tournament
configs, the league's settings, the viewer), so adding a variant means its engine module (with
its `small_options` for the property tests), one line in `_VARIANTS`, its rules page
(docs/games/) and its test file: nothing else names the games.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from arena.games.base import Game, OptionSpec, Result, State
from arena.games.errors import GameError, GameOver, IllegalAction, OptionError

# name -> "module:Class"; imported lazily so that `arena games` stays quick
_VARIANTS: dict[str, str] = {
    "papagra": "arena.games.papagra:Papagra",
    "wrigglers": "arena.games.wrigglers:Wrigglers",
    "stripes": "arena.games.stripes:Stripes",
    "quadraphages": "arena.games.phages:Quadraphages",
    "hexaphage": "arena.games.phages:Hexaphage",
}

GAME_NAMES: tuple[str, ...] = tuple(_VARIANTS)


def game_class(name: str) -> type[Game]:
    """The Game subclass for a variant name; OptionError lists the valid names."""
    target = _VARIANTS.get(name)
    if target is None:
        raise OptionError(f"unknown game {name!r} (valid games: {', '.join(GAME_NAMES)})")
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)


def make_game(name: str, options: Mapping[str, Any] | None = None) -> Game:
    """Create a game from its name and options (strings from the CLI or typed TOML values)."""
    return game_class(name)(options)


__all__ = [
    "GAME_NAMES",
    "Game",
    "GameError",
    "GameOver",
    "IllegalAction",
    "OptionError",
    "OptionSpec",
    "Result",
    "State",
    "game_class",
    "make_game",
]
