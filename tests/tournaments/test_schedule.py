"""The schedule: every pair, every game, both seats, every round; deterministic from the seed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.games import GAME_NAMES, make_game
from arena.tournaments.checks import GameEntry
from arena.tournaments.config import load_config
from arena.tournaments.schedule import build_schedule, random_opening

from .tournament_helpers import BOTS, write_config


def _config(tmp_path: Path, n_bots: int = 3, rounds: int = 2, seed: int = 5, games: str = ""):
    bots = ", ".join(f'{{ path = "{BOTS / "random-py"}", name = "b{i}" }}' for i in range(n_bots))
    text = f"bots = [{bots}]\nrounds = {rounds}\nseed = {seed}\n{games}"
    return load_config(write_config(tmp_path, text, f"s{seed}.toml"))


def test_round_robin_shape(tmp_path: Path) -> None:
    cfg = _config(tmp_path, n_bots=3, rounds=2)
    sched = build_schedule(cfg)
    assert len(sched) == 2 * len(GAME_NAMES) * 3 * 2
    assert len({g.game_id for g in sched}) == len(sched)
    assert [g.seq for g in sched] == list(range(len(sched)))
    # every ordered pair of distinct bots meets once per game per round
    seen = Counter((g.round, g.game, g.bots) for g in sched)
    assert set(seen.values()) == {1}
    for r in (1, 2):
        for game in GAME_NAMES:
            ordered = {g.bots for g in sched if g.round == r and g.game == game}
            assert ordered == {(a, b) for a in range(3) for b in range(3) if a != b}
    # the two seat orders of a game pair are adjacent and swap the seats
    for a, b in zip(sched[::2], sched[1::2], strict=True):
        assert a.pair_key == b.pair_key and a.bots == b.bots[::-1]
        assert (a.seat_order, b.seat_order) == (0, 1)
    # rounds in order
    assert [g.round for g in sched] == sorted(g.round for g in sched)


def test_deterministic_and_seed_dependent(tmp_path: Path) -> None:
    a = build_schedule(_config(tmp_path, seed=5))
    b = build_schedule(_config(tmp_path, seed=5))
    c = build_schedule(_config(tmp_path, seed=6))
    assert a == b
    assert [g.game_id for g in a] != [g.game_id for g in c]
    assert len({g.seed for g in a}) == len(a)
    assert all(0 <= g.seed < 2**31 for g in a)


def test_more_rounds_extend_the_schedule(tmp_path: Path) -> None:
    two = build_schedule(_config(tmp_path, rounds=2))
    three = build_schedule(_config(tmp_path, rounds=3))
    assert three[: len(two)] == two


@settings(max_examples=15, deadline=None)
@given(game=st.sampled_from(GAME_NAMES), seed=st.integers(0, 2**40), turns=st.integers(1, 3))
def test_openings_are_legal_and_reproducible(game: str, seed: int, turns: int) -> None:
    entry = GameEntry(game, {}, game)
    opening = random_opening(entry, seed, 1, 0, turns)
    assert opening == random_opening(entry, seed, 1, 0, turns)
    assert len(opening) == turns
    state = make_game(game).new_initial_state()
    for turn in opening:
        start = state.turn_number()
        for action in turn:
            state.apply(action)  # raises if illegal
        if state.turn_number() == start and state.can_end_turn():
            state.end_turn()
        assert state.turn_number() == start + 1
    assert not state.is_terminal()


def test_no_opening_when_disabled() -> None:
    assert random_opening(GameEntry("stripes", {}, "stripes"), 1, 1, 0, 0) == ()
