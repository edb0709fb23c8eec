"""Candidate tests in the database: opened, fed games, counted exactly once, stopped.

A candidate test (arena/league/candidates.py has the policy) is one row of `candidate_tests`
per new version and variant. Its games are ordinary game rows of kind `candidate` that name
the test and their game pair (`games.candidate_test`, `games.candidate_pair`), created by the
scheduler one at a time (`take_game` numbers them) and recorded by the ledger like any other.

Exactly once. The test's counts are never incremented: `tally`, which the ledger calls inside
the transaction that records one of the test's games (or fails it for good), locks the test's
row and recounts them from the test's finished game rows, which the ledger's conditional update
records at most once. So a stale result, a replayed attempt or a server killed between two
games cannot count a game twice or lose one: whatever was committed is what is counted. The
row lock orders two games of one pair recorded at once on PostgreSQL: the second to take the
lock reads the first's committed row (READ COMMITTED reads anew per statement), so the pair is
counted by whichever commits last. Once decided or stopped, a test's counts no longer move: the
games still in flight then are recorded as games and shown, and not counted.

Every function takes a Connection inside the caller's transaction (arena/league/db/database.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from arena.league.db.schema import (
    GameState,
    TestState,
    VersionState,
    bots,
    candidate_tests,
    games,
    versions,
)
from arena.referee.outcome import Reason, now_iso
from arena.tournaments.sprt import SprtParams, evaluate


@dataclass(frozen=True)
class OpenTest:
    """A test that may get a new game: what the scheduler needs to make it."""

    id: int
    variant: str
    candidate_id: int
    baseline_id: int
    seed: int
    games_made: int
    in_flight: int


def previous_active(conn: Connection, version_id: int) -> int | None:
    """The version of the same bot that is active now besides `version_id` (the newest, if an
    admin's re-enabling ever left two): the one a new version is tested against."""
    bot_id = sa.select(versions.c.bot_id).where(versions.c.id == version_id).scalar_subquery()
    return conn.execute(
        sa.select(sa.func.max(versions.c.id)).where(
            versions.c.bot_id == bot_id,
            versions.c.id != version_id,
            versions.c.state == VersionState.ACTIVE,
        )
    ).scalar()


def open_test(
    conn: Connection,
    *,
    candidate_id: int,
    baseline_id: int,
    variant: str,
    params: SprtParams,
    max_pairs: int,
    seed: int,
) -> int | None:
    """A new test (state testing); None if the version has one in this variant already."""
    exists = conn.execute(
        sa.select(candidate_tests.c.id).where(
            candidate_tests.c.candidate_id == candidate_id, candidate_tests.c.variant == variant
        )
    ).first()
    if exists is not None:
        return None
    return int(
        conn.execute(
            candidate_tests.insert().values(
                candidate_id=candidate_id,
                baseline_id=baseline_id,
                variant=variant,
                state=TestState.TESTING,
                elo0=params.elo0,
                elo1=params.elo1,
                alpha=params.alpha,
                beta=params.beta,
                model=params.model,
                max_pairs=max_pairs,
                seed=seed,
                games_made=0,
                pentanomial="0,0,0,0,0",
                wins=0,
                draws=0,
                losses=0,
                llr=0.0,
                created_at=now_iso(),
            )
        ).inserted_primary_key[0]
    )


def stop_tests_of(conn: Connection, candidate_id: int, note: str) -> int:
    """Stop the version's tests still testing (its counts stay as they are); how many."""
    return conn.execute(
        candidate_tests.update()
        .where(
            candidate_tests.c.candidate_id == candidate_id,
            candidate_tests.c.state == TestState.TESTING,
        )
        .values(state=TestState.STOPPED, note=note[:500], decided_at=now_iso())
    ).rowcount


_cand = versions.alias("cand")
_base = versions.alias("base")


def stop_orphaned(conn: Connection) -> int:
    """Stop the tests whose new version no longer plays (retired with its bot, replaced by a
    newer one, disabled) or whose previous version an admin disabled; how many. A previous
    version that is merely retired (as every one is once its successor is active) plays on."""
    rows = conn.execute(
        sa.select(
            candidate_tests.c.id,
            _cand.c.state.label("cand_state"),
            _cand.c.number.label("cand_number"),
            _base.c.state.label("base_state"),
            _base.c.number.label("base_number"),
        )
        .join(_cand, _cand.c.id == candidate_tests.c.candidate_id)
        .join(_base, _base.c.id == candidate_tests.c.baseline_id)
        .where(
            candidate_tests.c.state == TestState.TESTING,
            sa.or_(_cand.c.state != VersionState.ACTIVE, _base.c.state == VersionState.DISABLED),
        )
    ).all()
    for r in rows:
        if r.cand_state != VersionState.ACTIVE:
            note = f"version {r.cand_number} was {_state_word(r.cand_state)}"
        else:
            note = f"the previous version ({r.base_number}) was disabled by an admin"
        conn.execute(
            candidate_tests.update()
            .where(candidate_tests.c.id == r.id, candidate_tests.c.state == TestState.TESTING)
            .values(state=TestState.STOPPED, note=note, decided_at=now_iso())
        )
    return len(rows)


def _state_word(state: str) -> str:
    return {VersionState.DISABLED: "disabled by an admin"}.get(state, str(state))


_IN_FLIGHT = (
    sa.select(games.c.candidate_test, sa.func.count().label("n"))
    .where(
        games.c.candidate_test.is_not(None),
        games.c.state.in_([GameState.QUEUED, GameState.RUNNING]),
    )
    .group_by(games.c.candidate_test)
    .subquery()
)


def open_tests(conn: Connection) -> list[OpenTest]:
    """The tests that may get a game: testing, their new version active, pairs left to make;
    with their games in flight (queued or running)."""
    rows = conn.execute(
        sa.select(
            candidate_tests.c.id,
            candidate_tests.c.variant,
            candidate_tests.c.candidate_id,
            candidate_tests.c.baseline_id,
            candidate_tests.c.seed,
            candidate_tests.c.games_made,
            sa.func.coalesce(_IN_FLIGHT.c.n, 0).label("in_flight"),
        )
        .join(_cand, _cand.c.id == candidate_tests.c.candidate_id)
        .join(_base, _base.c.id == candidate_tests.c.baseline_id)
        .outerjoin(_IN_FLIGHT, _IN_FLIGHT.c.candidate_test == candidate_tests.c.id)
        .where(
            candidate_tests.c.state == TestState.TESTING,
            candidate_tests.c.games_made < 2 * candidate_tests.c.max_pairs,
            _cand.c.state == VersionState.ACTIVE,
            _base.c.state != VersionState.DISABLED,
        )
        .order_by(candidate_tests.c.id)
    )
    return [OpenTest(*r) for r in rows]


def take_game(conn: Connection, test_id: int) -> int | None:
    """The index of the test's next game (pair index // 2, seat order index % 2), counted as
    made in the caller's transaction (which creates it); None if the test has made its last."""
    made = conn.execute(
        candidate_tests.update()
        .where(
            candidate_tests.c.id == test_id,
            candidate_tests.c.state == TestState.TESTING,
            candidate_tests.c.games_made < 2 * candidate_tests.c.max_pairs,
        )
        .values(games_made=candidate_tests.c.games_made + 1)
        .returning(candidate_tests.c.games_made)
    ).scalar()
    return None if made is None else int(made) - 1


def params_of(row: Any) -> SprtParams:
    return SprtParams(row.elo0, row.elo1, row.alpha, row.beta, row.model)


def tally(conn: Connection, test_id: int) -> None:
    """Recount a testing test from its finished games, and decide it if the SPRT does (or its
    last pair is done: undecided). Called by the ledger in the transaction that records (or
    fails for good) one of its games; see the module's docstring for why it recounts."""
    t = conn.execute(
        sa.select(candidate_tests).where(candidate_tests.c.id == test_id).with_for_update()
    ).first()
    if t is None or t.state != TestState.TESTING:
        return
    rows = conn.execute(
        sa.select(
            games.c.candidate_pair, games.c.version0, games.c.winner, games.c.state, games.c.reason
        ).where(games.c.candidate_test == test_id)
    ).all()
    by_pair: dict[int, list[float]] = {}
    wins = draws = losses = unfinished = 0
    for r in rows:
        if r.state in (GameState.QUEUED, GameState.RUNNING):
            unfinished += 1
            continue
        if r.state != GameState.FINISHED or r.reason == Reason.BOTH_FAILED_START:
            continue  # failed for good, or no contest: its pair is never complete
        points0 = 0.5 if r.winner is None else 1.0 if r.winner == 0 else 0.0
        points = points0 if r.version0 == t.candidate_id else 1.0 - points0
        wins += points == 1.0
        draws += points == 0.5
        losses += points == 0.0
        by_pair.setdefault(int(r.candidate_pair), []).append(points)
    counts = [0] * 5
    for scored in by_pair.values():
        if len(scored) == 2:
            counts[round(2 * sum(scored))] += 1
    s = evaluate(counts, params_of(t))
    state = TestState.TESTING
    if s.decision == "H1":
        state = TestState.BETTER
    elif s.decision == "H0":
        state = TestState.NOT_BETTER
    elif t.games_made >= 2 * t.max_pairs and unfinished == 0:
        state = TestState.UNDECIDED
    conn.execute(
        candidate_tests.update()
        .where(candidate_tests.c.id == test_id)
        .values(
            pentanomial=",".join(str(n) for n in counts),
            wins=wins,
            draws=draws,
            losses=losses,
            llr=s.llr,
            elo=s.elo,
            elo_ci95=s.elo_ci95,
            los=s.los,
            state=state,
            decided_at=None if state == TestState.TESTING else now_iso(),
        )
    )


# --- reads for the pages, the API and `league submit --wait` ---------------------------------


def _tests_select() -> sa.Select:
    return (
        sa.select(
            candidate_tests,
            bots.c.name.label("bot"),
            _cand.c.number.label("candidate_number"),
            _base.c.number.label("baseline_number"),
        )
        .join(_cand, _cand.c.id == candidate_tests.c.candidate_id)
        .join(_base, _base.c.id == candidate_tests.c.baseline_id)
        .join(bots, bots.c.id == _cand.c.bot_id)
    )


def tests_of_version(conn: Connection, version_id: int) -> list[Any]:
    """The version's tests (one per variant), by variant."""
    return conn.execute(
        _tests_select()
        .where(candidate_tests.c.candidate_id == version_id)
        .order_by(candidate_tests.c.variant)
    ).all()


def tests_of_bot(conn: Connection, bot_id: int, *, limit: int) -> list[Any]:
    """The bot's last `limit` tests, newest version first, by variant."""
    return conn.execute(
        _tests_select()
        .where(_cand.c.bot_id == bot_id)
        .order_by(candidate_tests.c.candidate_id.desc(), candidate_tests.c.variant)
        .limit(limit)
    ).all()


def stop(conn: Connection, test_id: int, note: str) -> bool:
    """Stop one test still testing (its counts stay as they are)."""
    return (
        conn.execute(
            candidate_tests.update()
            .where(candidate_tests.c.id == test_id, candidate_tests.c.state == TestState.TESTING)
            .values(state=TestState.STOPPED, note=note[:500], decided_at=now_iso())
        ).rowcount
        == 1
    )


def any_testing(conn: Connection) -> bool:
    """Whether any test is testing (one probe of the state index: the scheduler asks before
    every new game)."""
    row = conn.execute(
        sa.select(candidate_tests.c.id).where(candidate_tests.c.state == TestState.TESTING).limit(1)
    ).first()
    return row is not None
