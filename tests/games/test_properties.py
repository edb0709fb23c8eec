"""Invariants every rules engine must keep, checked on random legal play with hypothesis.

These are the guarantees the referee and the bots build on: legal play always terminates, the
legal list is exactly what `apply` accepts, the plain description is a faithful serialisation,
and rendering never fails on any reachable position.
"""

from __future__ import annotations

import json
import random
from xml.etree import ElementTree

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import GAME_NAMES, IllegalAction, game_class, make_game

JUNK_ACTIONS = ["", "zz99", "a0", "-", "--", "pass pass", "9", "0", "a1a1", "-z1", "e5-e5x", "💥"]

PROPERTY_SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _games():
    """Every registered game, with each of its small option sets (`Game.small_options`: small
    boards and low turn limits keep each example fast while still reaching game ends)."""
    return [(name, dict(opts)) for name in GAME_NAMES for opts in game_class(name).small_options]


def _play_random(state, rng: random.Random, check_each=None):
    """Random legal play to the end; returns the number of actions applied."""
    n = 0
    limit = 100_000
    while not state.is_terminal():
        legal = state.legal_actions()
        assert legal, "a non-terminal state must have a legal action"
        if check_each:
            check_each(state, legal)
        state.apply(rng.choice(legal))
        n += 1
        assert n < limit
    return n


def _random_position(game, seed: int, actions: int):
    """The position after up to `actions` random legal actions (fewer if the game ends)."""
    state = game.new_initial_state()
    rng = random.Random(seed)
    for _ in range(actions):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    return state


def _plain(value) -> bool:
    """Only msgpack/JSON-native types, string keys."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


@pytest.mark.parametrize(("name", "options"), _games())
@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_random_play_ends_within_max_turns(name, options, seed):
    game = make_game(name, options)
    state = game.new_initial_state()
    _play_random(state, random.Random(seed))
    result = state.result()
    assert result is not None
    assert result.winner in (0, 1, None)
    assert state.turn_number() <= options["max_turns"] + 1
    assert state.current_player() is None
    assert state.legal_actions() == []
    assert len(result.scores) == 2


@pytest.mark.parametrize(("name", "options"), _games())
@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_every_legal_action_applies_and_junk_is_rejected(name, options, seed):
    game = make_game(name, options)
    state = game.new_initial_state()
    rng = random.Random(seed)

    def check(s, legal):
        assert len(set(legal)) == len(legal), "legal actions must be distinct"
        for action in rng.sample(legal, min(len(legal), 8)):
            s.clone().apply(action)
        for junk in JUNK_ACTIONS:
            if junk in legal:
                continue
            before = s.describe()
            with pytest.raises(IllegalAction) as info:
                s.clone().apply(junk)
            assert info.value.message
            assert s.describe() == before

    _play_random(state, rng, check)


@pytest.mark.parametrize(("name", "options"), _games())
@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**32 - 1), stop=st.integers(0, 200))
def test_description_round_trips(name, options, seed, stop):
    game = make_game(name, options)
    state = _random_position(game, seed, stop)
    desc = state.describe()
    assert _plain(desc)
    for key in ("game", "options", "turn", "to_move", "actions_remaining", "turn_actions"):
        assert key in desc, key
    for key in ("scores", "board", "cells", "result"):
        assert key in desc, key
    # the description survives both wire encodings unchanged
    assert msgpack.unpackb(msgpack.packb(desc), raw=False) == desc
    assert json.loads(json.dumps(desc)) == desc
    rebuilt = game.state_from_description(desc)
    assert rebuilt.describe() == desc
    assert rebuilt.key() == state.key()
    assert rebuilt.legal_actions() == state.legal_actions()
    # and it plays on identically
    tail = random.Random(seed + 1)
    while not state.is_terminal():
        action = tail.choice(state.legal_actions())
        state.apply(action)
        rebuilt.apply(action)
    assert rebuilt.result() == state.result()


@pytest.mark.parametrize(("name", "options"), _games())
@PROPERTY_SETTINGS
@given(seed=st.integers(0, 2**32 - 1), stop=st.integers(0, 120))
def test_rendering_never_fails(name, options, seed, stop):
    game = make_game(name, options)
    state = _random_position(game, seed, stop)
    text = state.render_text()
    assert isinstance(text, str) and text.strip()
    svg = state.render_svg()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    root = ElementTree.fromstring(svg)  # well-formed XML, so it works as a standalone file
    ns = "{http://www.w3.org/2000/svg}"
    # every cell is a group named by its notation, so pages can find and click it by name
    named = [g.get("data-cell") for g in root.iter(f"{ns}g") if g.get("data-cell")]
    cells = state.describe()["board"]["cells"]
    assert sorted(named) == sorted(cells)
    # coordinates on every board shape: every column letter and row number is written
    labels = {t.text for t in root.iter(f"{ns}text") if t.text}
    assert {c.rstrip("0123456789") for c in cells} <= labels
    assert {c.lstrip("abcdefghijklmnopqrstuvwxyz") for c in cells} <= labels


@pytest.mark.parametrize(("name", "options"), _games())
def test_clone_is_independent(name, options):
    game = make_game(name, options)
    state = game.new_initial_state()
    copy = state.clone()
    state.apply(state.legal_actions()[0])
    assert copy.describe() == game.new_initial_state().describe()


@pytest.mark.parametrize("name", GAME_NAMES)
def test_unknown_option_lists_valid_ones(name):
    from arena.games import OptionError

    with pytest.raises(OptionError) as info:
        make_game(name, {"no_such_option": 1})
    assert "max_turns" in str(info.value)
    with pytest.raises(OptionError) as info:
        make_game(name, {"max_turns": "lots"})
    assert "max_turns" in str(info.value)


def test_unknown_game_lists_valid_ones():
    from arena.games import OptionError

    with pytest.raises(OptionError) as info:
        make_game("chess")
    for name in GAME_NAMES:
        assert name in str(info.value)
