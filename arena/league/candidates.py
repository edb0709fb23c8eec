"""Candidate verdicts: "is my new version better than the last one?", answered in the league.

When a new version of a bot becomes active and the bot had an active version before it (which
the activation retires from rated play), the league opens one *candidate test* per variant:
the new version plays game pairs against that previous version (both seats, the same opening
per pair, as the local runner plays them: arena/tournaments/schedule.py's `random_opening` and
`derive_seed`), under the local SPRT (arena/tournaments/sprt.py, what `arena sprt` runs), with
the bounds of league.toml's `[sprt]` (per variant where `[sprt.variants.LABEL]` says so),
frozen when the test opens. The test stops when the SPRT decides ("better": H1 accepted, "not
better": H0 accepted) or its `max_pairs` are played ("undecided").

Those games are real league games (kind `candidate`): claimed by the same scheduler, played by
the same executors and workers, recorded through the ledger's exactly-once rule with their
records, replays and logs, and listed as "(candidate, unrated)". They are unrated: no rating,
leaderboard row or placement count moves (the ledger rates `rated` games only, and matchmaking
counts only those). Their test counts them in the same transaction (db/verdicts.py `tally`).

Interleaving. The scheduler draws its new games from two sources: rated matchmaking and the
open tests (`CandidateSource`). A credit grows by `[sprt] share` per new game; a test's game is
made when the credit reaches 1 (and costs 1), otherwise a rated one; when the source due has
nothing to make, the other one plays, so no slot idles for a share. With share 0.5 new games
alternate rated, candidate, rated...; with 1/3 every third is a test's; over any run the tests
get the share of the new games, within one game. A credit due while no test has a game to
make stays due for the next game only, so an idle spell never banks a burst. Among open tests,
the one with the fewest games made goes first (all variants progress together), and a test has
at most IN_FLIGHT games queued or running, so a decision is not followed by many games it no
longer needs.

Decisions taken here (docs/league.md, "Candidate verdicts"):
- the previous version is the bot's active version when the new one activates; it is retired
  from rated play then, as always, and keeps playing its test's games (a retired version's code
  stays). If an admin disables it, its tests stop ("stopped", with the reason).
- a third version activating while its predecessor is still under test stops that test
  ("stopped: superseded by version 3"; its figures stay) and opens its own, against the version
  that was active: the one it replaces.
- a new version that leaves the ladder (its bot retired by its owner, disabled by an admin)
  stops its tests; reactivating the bot does not reopen them.
- a variant removed from league.toml stops its tests; a no-contest game (both bots failed to
  start) or one failed for good leaves its pair incomplete, not counted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena.league.db import ledger, roster, verdicts
from arena.league.db.schema import VERDICT_WORDS, GameKind
from arena.league.settings import LeagueSettings
from arena.tournaments.schedule import derive_seed, random_opening

#: games of one test queued or running at once
IN_FLIGHT = 4
#: tests listed on a bot's page and in its API answer
BOT_TESTS = 50


def open_tests(conn: Any, settings: LeagueSettings, version_id: int, previous: int | None) -> int:
    """In the transaction that activates `version_id` (whose bot's active version was
    `previous`): stop the tests of `previous` (superseded) and open this version's, one per
    variant with pairs to play. How many were opened."""
    if previous is None:
        return 0
    v = roster.version(conn, version_id)
    assert v is not None
    verdicts.stop_tests_of(conn, previous, f"superseded by version {v.number}")
    opened = 0
    for entry in settings.games:
        rule = settings.sprt.for_variant(entry.label)
        if rule.max_pairs == 0:
            continue
        made = verdicts.open_test(
            conn,
            candidate_id=version_id,
            baseline_id=previous,
            variant=entry.label,
            params=rule.params,
            max_pairs=rule.max_pairs,
            seed=derive_seed(settings.name, "candidate", version_id, entry.label),
        )
        opened += made is not None
    return opened


class CandidateSource:
    """The open tests as the scheduler's second source of new games (see the module's
    docstring for the share)."""

    def __init__(self, settings: LeagueSettings) -> None:
        self.settings = settings
        self.credit = 0.0

    def next_game(
        self, conn: Any, rated: Callable[[], ledger.NewGame | None]
    ) -> ledger.NewGame | None:
        """The next new game, in the caller's transaction: a test's when its share is due (or
        when `rated`, matchmaking, has nothing), else `rated()`'s."""
        share = self.settings.sprt.share
        self.credit += share
        if self.credit >= 1.0 - 1e-9:
            game = self.test_game(conn)
            if game is not None:
                self.credit = max(0.0, self.credit - 1.0)
                return game
            # nothing to test now: due again at the next game, no burst later for it
            self.credit = 1.0 - share
            return rated()
        game = rated()
        if game is not None:
            return game
        game = self.test_game(conn)
        if game is not None:
            self.credit = 0.0
        return game

    def test_game(self, conn: Any) -> ledger.NewGame | None:
        """A new game of the open test with the fewest games made, counted as made."""
        if not verdicts.any_testing(conn):
            return None
        verdicts.stop_orphaned(conn)
        labels = {g.label for g in self.settings.games}
        ready = []
        for t in verdicts.open_tests(conn):
            if t.variant not in labels:
                verdicts.stop(conn, t.id, f"the league no longer plays {t.variant}")
            elif t.in_flight < IN_FLIGHT:
                ready.append(t)
        for t in sorted(ready, key=lambda t: (t.games_made, t.id)):
            index = verdicts.take_game(conn, t.id)
            if index is not None:
                return self._game(t, index)
        return None

    def _game(self, t: verdicts.OpenTest, index: int) -> ledger.NewGame:
        """Game `index` of the test: pair index // 2 from seat order index % 2, the pair's
        opening and each game's seed derived from the test's seed (the local runner's way)."""
        pair, order = divmod(index, 2)
        entry = self.settings.game(t.variant)
        seats = (t.candidate_id, t.baseline_id) if order == 0 else (t.baseline_id, t.candidate_id)
        return ledger.NewGame(
            kind=GameKind.CANDIDATE,
            variant=entry.label,
            game_name=entry.name,
            options=dict(entry.options),
            # 31 bits, as a tournament's: every bot language reads it as a plain integer
            seed=derive_seed(t.seed, "match", pair, order) & 0x7FFFFFFF,
            opening=random_opening(entry, t.seed, 0, pair, self.settings.opening_turns),
            time_control=self.settings.time_control.to_dict(),
            version0=seats[0],
            version1=seats[1],
            candidate_test=t.id,
            candidate_pair=pair,
        )


# --- the verdict as the pages, the API and `league submit --wait` show it ---------------------


def verdict(row: Any) -> dict[str, Any]:
    """A test (a row of db/verdicts.py's reads) as the API shows it."""
    params = verdicts.params_of(row)
    penta = [int(n) for n in row.pentanomial.split(",")]
    out: dict[str, Any] = {
        "variant": row.variant,
        "bot": row.bot,
        "version": row.candidate_number,
        "version_id": row.candidate_id,
        "against": row.baseline_number,
        "state": row.state,
        "verdict": VERDICT_WORDS.get(row.state, row.state),
        "llr": round(row.llr, 3),
        "lower": round(params.lower, 3),
        "upper": round(params.upper, 3),
        "elo0": params.elo0,
        "elo1": params.elo1,
        "alpha": params.alpha,
        "beta": params.beta,
        "model": params.model,
        "max_pairs": row.max_pairs,
        "pairs": sum(penta),
        "games": row.wins + row.draws + row.losses,
        "pentanomial": penta,
        "wins": row.wins,
        "draws": row.draws,
        "losses": row.losses,
        "elo": None if row.elo is None else round(row.elo, 1),
        "elo_ci95": None if row.elo_ci95 is None else round(row.elo_ci95, 1),
        "los": None if row.los is None else round(row.los, 4),
        "note": row.note,
        "created_at": row.created_at,
        "decided_at": row.decided_at,
    }
    out["elo_text"] = elo_text(out)
    out["summary"] = summary(out)
    return out


def elo_text(v: dict[str, Any]) -> str:
    """The Elo estimate as `arena sprt` says it, "+35.2 ± 20.1" (a perfect score has no finite
    Elo: "+inf")."""
    if v["elo"] is not None:
        text = f"{v['elo']:+.1f}"
        if v["elo_ci95"] is not None:
            text += f" \u00b1 {v['elo_ci95']:.1f}"
        return text
    if v["pairs"]:
        return "+inf (a perfect score)" if v["pentanomial"][4] else "-inf (a perfect score)"
    return "n/a"


def summary(v: dict[str, Any]) -> str:
    """One line: `stripes v2 vs v1: better; LLR 3.01 (-2.94, 2.94); 12 games (6 pairs); Elo
    +120.4 ± 80.2`."""
    line = (
        f"{v['variant']} v{v['version']} vs v{v['against']}: {v['verdict']}; "
        f"LLR {v['llr']:.2f} ({v['lower']:.2f}, {v['upper']:.2f}); "
        f"{v['games']} games ({v['pairs']} pairs); Elo {v['elo_text']}"
    )
    if v["note"]:
        line += f" ({v['note']})"
    return line


def version_verdicts(conn: Any, version_id: int) -> list[dict[str, Any]]:
    """The version's tests, by variant (empty: it was its bot's first, or tests are off)."""
    return [verdict(r) for r in verdicts.tests_of_version(conn, version_id)]


def bot_verdicts(conn: Any, bot_id: int) -> list[dict[str, Any]]:
    """The bot's last BOT_TESTS tests, newest version first."""
    return [verdict(r) for r in verdicts.tests_of_bot(conn, bot_id, limit=BOT_TESTS)]
