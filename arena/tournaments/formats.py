"""Tournament formats: who plays whom. Chosen by the config's `format`, from `FORMATS`.

A format decides the *pairings*: which bots meet, and which of the two is the pair's first
bot (seat 0 in the game of seat order `a`). Everything else is shared by every format and lives
in arena/tournaments/schedule.py: each pairing plays every game of the config, every round,
from both seats, with the opening and seeds derived from the game's identity. So a format is
small, like gomill's Playoff against its Competition base, and adding one is adding a class
here and a line to `FORMATS`.

Hooks, in the order they are used:

- `check()` when the config is read: a problem with the bot list, as (key, message), or None.
  The base class refuses a bot that sets another format's key (`bot_keys`: the flags a
  format reads from a bot's table, like a gauntlet's `challenger = true`), so a format that
  needs a per-bot key declares it here and the config accepts it without naming the format;
- `tested_bot()` when the config asks for an SPRT: the one bot under test, or None when the
  format has no single such bot (the config is then refused);
- `pairings()` when a run starts: (first, second) bot indices, in a stable order. The runner
  keeps the pair numbers of pairings a results file already holds (arena/tournaments/
  identity.py), so a pool can grow without renaming the games already played.

A knockout (`staged`) has no pairings known in advance: who meets whom in a round depends on
the rounds before. The runner plays it stage by stage instead, each stage's games derived
from the games recorded so far (arena/tournaments/knockout.py), never from memory.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Protocol


class BotEntry(Protocol):
    """What a format reads of a config's bot entry (arena/tournaments/config.py BotEntry):
    the flags of `bot_keys`."""

    challenger: bool


class Format(ABC):
    """A tournament format over the config's bot entries (in config order)."""

    name: ClassVar[str]
    #: one line for `--help` and docs
    summary: ClassVar[str]
    #: the flags this format reads from a bot's table (`true` or `false`); no other format
    #: accepts them
    bot_keys: ClassVar[tuple[str, ...]] = ()

    def __init__(self, bots: Sequence[BotEntry]) -> None:
        self.bots = tuple(bots)

    def check(self) -> tuple[str, str] | None:
        """A problem with the bot list as (config key, message), or None: here, a bot that
        sets a key of another format."""
        for f in FORMATS.values():
            for key in f.bot_keys:
                if key in self.bot_keys:
                    continue
                for i, b in enumerate(self.bots):
                    if getattr(b, key):
                        return (f"bots[{i}].{key}", f'only a format = "{f.name}" has {key}s')
        return None

    @abstractmethod
    def pairings(self) -> list[tuple[int, int]]:
        """Every pairing this format plays, as (first, second) bot indices."""

    def tested_bot(self) -> int | None:
        """The bot an SPRT tests (its game pairs against all others), or None."""
        return None

    #: the pairings come from recorded results, round by round (a knockout), not `pairings()`
    staged: ClassVar[bool] = False


class RoundRobin(Format):
    name = "round-robin"
    summary = "every pair of bots plays every game from both seats"

    def pairings(self) -> list[tuple[int, int]]:
        return list(itertools.combinations(range(len(self.bots)), 2))

    def tested_bot(self) -> int | None:
        """With two bots, a round robin is a match: the first bot is the one tested."""
        return 0 if len(self.bots) == 2 else None


class Gauntlet(Format):
    name = "gauntlet"
    summary = "each challenger plays every other bot (the pool); the pool never meets itself"
    bot_keys = ("challenger",)

    def challengers(self) -> list[int]:
        """Entries marked `challenger = true`; none marked means the first bot."""
        marked = [i for i, b in enumerate(self.bots) if b.challenger]
        return marked or [0]

    def check(self) -> tuple[str, str] | None:
        if len(self.challengers()) >= len(self.bots):
            return ("bots", "a gauntlet needs at least one bot that is not a challenger")
        return super().check()

    def pairings(self) -> list[tuple[int, int]]:
        challengers = self.challengers()
        pool = [i for i in range(len(self.bots)) if i not in challengers]
        return [(c, o) for c in challengers for o in pool]

    def tested_bot(self) -> int | None:
        challengers = self.challengers()
        return challengers[0] if len(challengers) == 1 else None


class Knockout(Format):
    name = "knockout"
    summary = (
        "a single-elimination bracket seeded by config order: matches of K game pairs, "
        "the winner goes through"
    )
    staged = True

    def pairings(self) -> list[tuple[int, int]]:
        """None in advance: each round's matches follow from the one before
        (arena/tournaments/knockout.py)."""
        return []


FORMATS: dict[str, type[Format]] = {f.name: f for f in (RoundRobin, Gauntlet, Knockout)}


def bot_keys() -> tuple[str, ...]:
    """Every format's bot keys, in the order of `FORMATS`: what a config's bot table may set."""
    return tuple(k for f in FORMATS.values() for k in f.bot_keys)


def format_of(name: str, bots: Sequence[BotEntry]) -> Format:
    return FORMATS[name](bots)
