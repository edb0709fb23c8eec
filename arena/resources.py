"""Files the arena ships besides its code: the games' rules pages, the sparring bot and the
starter kits.

In a checkout they live where people look for them (`docs/games/`, `bots/random-py/`,
`protocol/kits/`); a wheel (`pip install .`, as the Dockerfile does) carries copies inside the
package, as `arena/_rules/`, `arena/_sparring/` and `arena/_kits/` (setup.py maps the
directories into it), because nothing beside an installed package is the repository.
`arena rules`, `arena check`, `arena new` and the league's validation find them here,
whichever way the arena was installed.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _shipped(packaged: str, checkout: str) -> Path:
    inside = _PACKAGE / packaged
    return inside if inside.is_dir() else _PACKAGE.parent / checkout


#: the rules pages, one `GAME.md` per variant
RULES_DIR = _shipped("_rules", "docs/games")
#: the bundled random Python bot: `arena check`'s opponent
SPARRING_BOT = _shipped("_sparring", "bots/random-py")
#: the starter kits, one directory per language (`arena new`, arena/kits.py)
KITS_DIR = _shipped("_kits", "protocol/kits")
