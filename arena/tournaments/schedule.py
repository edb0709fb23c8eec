"""The deterministic list of games a tournament plays, and each game's opening and seed.

A game is identified by (round, game label, pair index, seat order), spelled as a stable
string id such as `r2-stripes-p3-b`. Everything a game depends on (its place in the order, its
opening, its match seed) is derived from the tournament seed and that identity by hashing, never
from a shared random stream, so the schedule is the same whether the tournament runs in one go,
is resumed after a kill, or is extended by more rounds.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.tournaments.config import GameEntry, TournamentConfig
from arena.tournaments.knockout import MAX_MATCH_PAIRS, Bracket, GameKey, GameSpec, Rules, bracket

#: fresh random openings tried before giving up on one that does not end the game
OPENING_ATTEMPTS = 100


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule. `bots` are indices into the config's bot list, by seat."""

    game_id: str
    seq: int
    round: int
    game: str  # the game entry's label
    pair: int
    seat_order: int  # 0: the pair's first bot takes seat 0; 1: seats swapped
    bots: tuple[int, int]
    seed: int

    @property
    def pair_key(self) -> tuple[int, str, int]:
        """Identifies the game pair (both seat orders) this game belongs to."""
        return (self.round, self.game, self.pair)


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from the tournament seed and an identity; stable across Python versions."""
    text = "/".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def pairs(n_bots: int) -> list[tuple[int, int]]:
    """Every unordered pair of bot indices, in a fixed order: pair index -> (i, j), i < j."""
    return list(itertools.combinations(range(n_bots), 2))


def game_id(round_: int, label: str, pair: int, seat_order: int) -> str:
    return f"r{round_}-{label}-p{pair}-{'ab'[seat_order]}"


def build_schedule(
    config: TournamentConfig, bot_pairs: list[tuple[int, int]] | None = None
) -> list[ScheduledGame]:
    """All games of all rounds in play order.

    `bot_pairs` are the pairings by pair number, (first, second) bot indices; by default every
    pair in order (a round robin). Within a round the game pairs are shuffled (seeded by the
    tournament seed and the round), and the two seat orders of a pair are adjacent, so an
    interrupted tournament still has mostly complete game pairs and the pentanomial statistics
    stay meaningful.
    """
    if bot_pairs is None:
        bot_pairs = pairs(len(config.bots))
    out: list[ScheduledGame] = []
    for r in range(1, config.rounds + 1):
        game_pairs = [(g.label, p) for g in config.games for p in range(len(bot_pairs))]
        random.Random(derive_seed(config.seed, "order", r)).shuffle(game_pairs)
        for label, p in game_pairs:
            i, j = bot_pairs[p]
            for seat_order, seats in ((0, (i, j)), (1, (j, i))):
                out.append(
                    ScheduledGame(
                        game_id=game_id(r, label, p, seat_order),
                        seq=len(out),
                        round=r,
                        game=label,
                        pair=p,
                        seat_order=seat_order,
                        bots=seats,
                        # 31 bits: every bot language reads it as a plain integer
                        seed=derive_seed(config.seed, "match", r, label, p, seat_order)
                        & 0x7FFFFFFF,
                    )
                )
    return out


# --- knockouts: a bracket's games as scheduled games -----------------------------------------
#
# A knockout game is named by its place in the bracket, `k2-m0-stripes-p1-b` (round 2, match 0,
# game pair 1, seats swapped), so the recorded games say which bracket game each was and the
# bracket can be derived from them alone (arena/tournaments/knockout.py). Its `pair` number is
# unique within the round (match * MAX_MATCH_PAIRS + pair), so the two seat orders of a pair
# share an opening and seed derivation exactly as a round robin's do.

_KNOCKOUT_ID = re.compile(r"k(\d+)-m(\d+)-(.+)-p(\d+)-([ab])")


def knockout_game_id(key: GameKey, label: str) -> str:
    return f"k{key.round}-m{key.match}-{label}-p{key.pair}-{'ab'[key.seat_order]}"


def knockout_key(game_id_: str) -> GameKey | None:
    """The bracket game a game id names, or None if it is not a knockout's."""
    m = _KNOCKOUT_ID.fullmatch(game_id_)
    if m is None:
        return None
    return GameKey(int(m[1]), int(m[2]), int(m[4]), "ab".index(m[5]))


def knockout_games(config: TournamentConfig, specs: Iterable[GameSpec]) -> list[ScheduledGame]:
    """The wanted games of a bracket as the runner plays them (a knockout has one game)."""
    label = config.games[0].label
    out = []
    for spec in specs:
        k = spec.key
        pair = k.match * MAX_MATCH_PAIRS + k.pair
        out.append(
            ScheduledGame(
                game_id=knockout_game_id(k, label),
                seq=((k.round * 2**16 + k.match) * MAX_MATCH_PAIRS + k.pair) * 2 + k.seat_order,
                round=k.round,
                game=label,
                pair=pair,
                seat_order=k.seat_order,
                bots=spec.seats,
                seed=derive_seed(config.seed, "match", k.round, label, pair, k.seat_order)
                & 0x7FFFFFFF,
            )
        )
    return out


def knockout_state(seeds: Sequence[str], rules: Rules, rows: Iterable[Any]) -> Bracket:
    """The bracket the recorded games (`GameRow`s: a game id, bot names by seat, the winning
    seat) leave, the entrants named by `seeds` in seed order."""
    index = {name: i for i, name in enumerate(seeds)}
    results: dict[GameKey, int | None] = {}
    for row in rows:
        key = knockout_key(row.game_id)
        if key is None or row.bots[0] not in index or row.bots[1] not in index:
            continue
        results[key] = None if row.winner is None else index[row.bots[row.winner]]
    return bracket(len(seeds), rules, results)


def random_opening(
    entry: GameEntry, seed: int, round_: int, pair: int, turns: int
) -> tuple[tuple[str, ...], ...]:
    """`turns` complete turns of uniformly random legal actions, the same for both seat orders.

    An attempt that ends the game is discarded and a fresh one tried, since a finished opening
    would leave the bots nothing to play. Optional actions (a turn that may end early) are
    skipped: the opening ends such a turn as soon as it may. Returns () if no attempt succeeds.
    """
    if turns <= 0:
        return ()
    from arena.games import make_game

    game = make_game(entry.name, dict(entry.options))
    rng = random.Random(derive_seed(seed, "opening", round_, entry.label, pair))
    for _ in range(OPENING_ATTEMPTS):
        opening = _try_opening(game, rng, turns)
        if opening is not None:
            return opening
    return ()


def _try_opening(game, rng: random.Random, turns: int) -> tuple[tuple[str, ...], ...] | None:
    state = game.new_initial_state()
    played: list[tuple[str, ...]] = []
    for _ in range(turns):
        if state.is_terminal():
            return None
        start = state.turn_number()
        actions: list[str] = []
        while not state.is_terminal() and state.turn_number() == start:
            if actions and state.can_end_turn():
                state.end_turn()
                break
            legal: Sequence[str] = sorted(state.legal_actions())
            if not legal:
                return None
            action = rng.choice(legal)
            state.apply(action)
            actions.append(action)
        played.append(tuple(actions))
    if state.is_terminal():
        return None
    return tuple(played)
