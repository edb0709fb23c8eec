"""Per-game policies of the strong bot: `<game>.py` defines `choose_turn(state, rng) -> list[str]`.

`state` is the bot's own copy of the position (an `arena.games.State`, possibly mid-turn); the
function returns the actions to play now, normally the whole rest of the turn. `rng` is seeded
from the game's seed and the seat, so drawing all randomness from it keeps games reproducible.
A game without a module here is played with random legal actions.
"""
