"""Wrigglers Squared: every rule of RULES.md on hand-made positions.

Positions are drawn as 9x9 diagrams (`x` dark, `o` light, `.` empty) and loaded through
`state_from_description`, the same door a bot's description goes through.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.games import GameOver, IllegalAction, OptionError, make_game
from arena.games.wrigglers import chain_sizes, score_of

ROWS_FULL = [  # alternate full rows: every row a chain of 9, nobody can add or remove
    "xxxxxxxxx",
    "ooooooooo",
    "xxxxxxxxx",
    "ooooooooo",
    "xxxxxxxxx",
    "ooooooooo",
    "xxxxxxxxx",
    "ooooooooo",
    "xxxxxxxxx",
]


def position(
    diagram: list[str],
    to_move: int = 0,
    options: dict | None = None,
    last_action: str | None = None,
    removed_last: tuple[bool, bool] = (False, False),
    turn: int = 1,
):
    game = make_game("wrigglers", options or {})
    n = game.grid.size
    rows = diagram + ["." * n] * (n - len(diagram))
    cells = {}
    for r, row in enumerate(rows):
        row = row.ljust(n, ".")
        for c, ch in enumerate(row):
            if ch in "xo":
                cells[game.grid.names[r * n + c]] = "dark" if ch == "x" else "light"
    d = game.new_initial_state().describe()
    d.update(
        cells=cells,
        to_move=to_move,
        last_action=last_action,
        removed_last_turn=list(removed_last),
        turn=turn,
    )
    return game.state_from_description(d)


# --- options ---------------------------------------------------------------------------


def test_options_defaults_and_cli_strings():
    g = make_game("wrigglers")
    assert g.options == {"size": 9, "ludii_rules": False, "max_turns": 400}
    g = make_game("wrigglers", {"size": "13", "ludii_rules": "true", "max_turns": "50"})
    assert g.options == {"size": 13, "ludii_rules": True, "max_turns": 50}
    assert len(g.new_initial_state().describe()["board"]["cells"]) == 169


@pytest.mark.parametrize("opts", [{"size": 10}, {"ludii_rules": "maybe"}, {"colour": 1}])
def test_bad_options(opts):
    with pytest.raises(OptionError):
        make_game("wrigglers", opts)


def test_dark_moves_first_one_action_per_turn():
    s = make_game("wrigglers").new_initial_state()
    assert s.current_player() == 0 and s.actions_remaining() == 1 and s.turn_number() == 1
    s.apply("e5")
    assert s.current_player() == 1 and s.turn_number() == 2 and s.turn_actions() == []
    assert s.describe()["cells"] == {"e5": "dark"}


# --- scoring ---------------------------------------------------------------------------


def test_score_is_product_of_two_largest_chains():
    s = position(["xxxx.xxx.", ".........", "xx......."])
    assert s.chains(0) == [4, 3, 2]
    assert s.scores() == (12, 0)


def test_fewer_than_two_chains_scores_zero():
    assert position(["xxxxx"]).scores() == (0, 0)
    assert position([]).scores() == (0, 0)
    assert score_of([7]) == 0 and score_of([]) == 0 and score_of([2, 1]) == 2


def test_branching_group_scores_nothing():
    # a T: b2 touches a2, c2 and b1 -> the whole group is no chain; only the pair d5-e5 counts
    s = position([".x.......", "xxx......", ".........", ".........", "...xx...."])
    assert s.chains(0) == [2]
    assert s.scores() == (0, 0)
    s = position([".x.......", "xxx......", "........", "xxx......", "....xx..."])
    assert s.chains(0) == [3, 2]
    assert s.scores() == (6, 0)


def test_wriggling_chain_and_loop_count():
    # a bent chain has no stone with three own neighbours; a 2x2 loop neither
    s = position(["xx.......", ".xx......", "..x......", ".........", "....xx...", "....xx..."])
    assert s.chains(0) == [5, 4]
    assert s.scores() == (20, 0)


def test_opponent_stones_do_not_join_or_break_chains():
    s = position(["xxoxx....", "..o......", "..o......"])
    assert s.chains(0) == [2, 2] and s.chains(1) == [3]
    assert s.scores() == (4, 0)
    assert chain_sizes(s._board, s._nb[1], 1, s.grid) == [3]


def test_scores_shown_after_every_turn():
    s = make_game("wrigglers").new_initial_state()
    for a, expect in [("a1", (0, 0)), ("a9", (0, 0)), ("c1", (1, 0)), ("c9", (1, 1))]:
        s.apply(a)
        assert s.scores() == expect
        assert s.describe()["scores"] == list(expect)
    s.apply("b1")  # joins a1-b1-c1 into one chain of 3: one chain only
    assert s.scores() == (0, 1)
    assert "score 0" in s.render_text()


# --- add and remove --------------------------------------------------------------------


def test_add_next_to_at_most_two_own_stones():
    s = position(["x.x......", ".x......."])  # b1 touches a1, c1, b2
    with pytest.raises(IllegalAction, match="b1: it touches 3 of your stones"):
        s.apply("b1")
    assert "b1" not in s.legal_actions()
    s = position(["x.x......"])  # b1 touches two
    assert "b1" in s.legal_actions()
    s.apply("b1")
    assert s.describe()["cells"]["b1"] == "dark"


def test_opponent_stones_do_not_limit_adding():
    s = position(["o.o......", ".o......."])
    s.apply("b1")
    assert s.describe()["cells"]["b1"] == "dark"


def test_add_on_occupied_point():
    s = position(["xo......."])
    for a in ("a1", "b1"):
        with pytest.raises(IllegalAction, match=f"{a} is occupied"):
            s.apply(a)


def test_remove_needs_three_own_neighbours():
    s = position([".x.......", "xxx......", ".x......."])
    legal = s.legal_actions()
    assert "-b2" in legal and "-a2" not in legal
    with pytest.raises(IllegalAction, match="touches 1 of your stones"):
        s.apply("-a2")
    s.apply("-b2")
    assert "b2" not in s.describe()["cells"]
    assert s.chains(0) == [1, 1, 1, 1]


def test_remove_only_own_stones():
    s = position([".o.......", "ooo......", ".o......."])
    with pytest.raises(IllegalAction, match="not your stone"):
        s.apply("-b2")
    with pytest.raises(IllegalAction, match="it is empty"):
        s.apply("-e5")


def test_unparsable_and_off_board_actions():
    s = make_game("wrigglers").new_initial_state()
    with pytest.raises(IllegalAction, match="j1 is not on the 9x9 board"):
        s.apply("j1")
    with pytest.raises(IllegalAction, match="cannot parse 'zz'"):
        s.apply("zz")
    with pytest.raises(IllegalAction):
        s.apply("")


def test_two_removals_in_a_row_allowed_by_default():
    s = position(["xxx......", "xxx......", "xxx......"])
    s.apply("-b2")
    s.apply("i9")
    assert "-a2" not in s.legal_actions()
    s2 = position(["xxxx.....", "xxxx.....", "xxxx....."], to_move=0)
    s2.apply("-b2")
    s2.apply("i9")
    s2.apply("-c2")  # dark removes again right after removing
    assert "c2" not in s2.describe()["cells"]


# --- pass ------------------------------------------------------------------------------


def test_pass_only_when_nothing_else_is_possible():
    s = make_game("wrigglers").new_initial_state()
    assert "pass" not in s.legal_actions()
    with pytest.raises(IllegalAction, match="only pass when you can neither add nor remove"):
        s.apply("pass")


def test_forced_pass():
    # a full checkerboard but for e5, whose four neighbours are dark: dark cannot add there,
    # no dark stone touches another, so dark must pass; light may fill e5
    rows = ["".join("ox"[(r + c) % 2] for c in range(9)) for r in range(9)]
    rows[4] = rows[4][:4] + "." + rows[4][5:]
    s = position(rows, to_move=0)
    assert s.legal_actions() == ["pass"]
    s.apply("pass")
    assert s.legal_actions() == ["e5"]
    s.apply("e5")
    assert s.legal_actions() == ["pass"]
    s.apply("pass")
    assert not s.is_terminal()
    s.apply("pass")
    # every stone is a lone chain of 1: 1 x 1 each, a tie won by light who passed last
    r = s.result()
    assert r.winner == 1 and r.reason == "tie_last_pass" and r.scores == (1, 1)


# --- ludii_rules -----------------------------------------------------------------------


def test_ludii_rules_pass_at_any_time():
    s = make_game("wrigglers", {"ludii_rules": True}).new_initial_state()
    assert s.legal_actions()[-1] == "pass"
    s.apply("pass")
    s.apply("e5")
    s.apply("pass")
    assert not s.is_terminal()
    s.apply("pass")
    assert s.result().reason == "tie_last_pass" and s.result().winner == 1


def test_ludii_rules_no_two_removals_in_a_row():
    opts = {"ludii_rules": True}
    s = position(["xxxxxxx..", "xxxxxxx..", "xxxxxxx.."], options=opts)
    s.apply("-b2")
    s.apply("i9")
    assert not any(a.startswith("-") for a in s.legal_actions())
    with pytest.raises(IllegalAction, match="two removals in a row"):
        s.apply("-d2")
    s.apply("pass")  # a pass between two removals clears the ban
    s.apply("h9")
    assert "-d2" in s.legal_actions()
    s.apply("-d2")
    s.apply("a9")
    with pytest.raises(IllegalAction, match="two removals in a row"):
        s.apply("-f2")
    s.apply("e9")  # so does an add
    s.apply("g9")
    s.apply("-f2")
    assert set(s.describe()["cells"]) & {"b2", "d2", "f2"} == set()


def test_ludii_ban_survives_description_round_trip():
    s = position(["xxxx.....", "xxxx.....", "xxxx....."], options={"ludii_rules": True})
    s.apply("-b2")
    s.apply("i9")
    d = s.describe()
    assert d["removed_last_turn"] == [True, False]
    t = s.game.state_from_description(d)
    assert t.describe() == d and t.legal_actions() == s.legal_actions()


# --- the end ---------------------------------------------------------------------------


def test_both_pass_higher_score_wins():
    rows = list(ROWS_FULL)
    rows[0] = "o" + rows[0][1:]  # light's row 2 chain grows to 10, dark's row 1 drops to 8
    s = position(rows)
    assert s.scores() == (81, 90)
    assert s.legal_actions() == ["pass"]
    s.apply("pass")
    s.apply("pass")
    r = s.result()
    assert (r.winner, r.reason, r.scores) == (1, "both_passed", (81, 90))
    assert s.current_player() is None and s.legal_actions() == []
    with pytest.raises(GameOver):
        s.apply("pass")


@pytest.mark.parametrize("first", [0, 1])
def test_tie_goes_to_the_last_passer(first):
    s = position(ROWS_FULL, to_move=first)
    assert s.scores() == (81, 81)
    s.apply("pass")
    s.apply("pass")
    r = s.result()
    assert r.reason == "tie_last_pass" and r.winner == 1 - first


def test_pass_after_an_opponent_pass_ends_the_game():
    rows = ["".join("ox"[(r + c) % 2] for c in range(9)) for r in range(9)]
    rows[4] = rows[4][:4] + "." + rows[4][5:]
    s = position(rows, last_action="pass", to_move=0)
    s.apply("pass")  # light passed before, dark passes now: both passed in succession
    assert s.result().reason == "tie_last_pass" and s.result().winner == 0


def test_max_turns_higher_score_wins_or_draw():
    s = make_game("wrigglers", {"max_turns": 3}).new_initial_state()
    for a in ("a1", "i9", "a3"):
        s.apply(a)
    r = s.result()
    assert (r.winner, r.reason, r.scores) == (0, "max_turns", (1, 0))
    s = make_game("wrigglers", {"max_turns": 2}).new_initial_state()
    s.apply("a1")
    s.apply("i9")
    r = s.result()
    assert (r.winner, r.reason) == (None, "max_turns")
    assert s.turn_number() == 2


def test_resign():
    s = make_game("wrigglers").new_initial_state()
    s.resign(0)
    assert s.result().winner == 1 and s.result().reason == "resign"


# --- views -----------------------------------------------------------------------------


def test_describe_keys_and_render():
    s = position(["xx.xx...."], to_move=1)
    d = s.describe()
    assert d["game"] == "wrigglers" and d["to_move"] == 1 and d["scores"] == [4, 0]
    assert d["chains"] == [[2, 2], []] and d["cells"]["a1"] == "dark"
    assert d["board"] == {"kind": "square", "size": 9, "cells": list(s.grid.names)}
    text = s.render_text()
    assert text.splitlines()[0] == "a b c d e f g h i"
    assert text.splitlines()[1] == "x x . x x . . . .  1."
    assert s.render_svg().startswith("<svg")


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), ludii=st.booleans())
def test_random_play_round_trips_and_legal_set_is_exact(seed, ludii):
    game = make_game("wrigglers", {"ludii_rules": ludii, "max_turns": 150})
    s = game.new_initial_state()
    rng = random.Random(seed)
    names = game.grid.names
    while not s.is_terminal():
        legal = s.legal_actions()
        if rng.random() < 0.1:
            # everything the engine lists applies; everything else is refused
            probe = [*names, *("-" + n for n in names), "pass"]
            for a in probe:
                t = s.clone()
                try:
                    t.apply(a)
                    assert a in legal, a
                except IllegalAction:
                    assert a not in legal, a
            d = s.describe()
            assert game.state_from_description(d).describe() == d
        s.apply(rng.choice(legal))
    d = s.describe()
    assert game.state_from_description(d).describe() == d


def _legal_by_scan(s) -> list[str]:
    """The legal list from the rules, by a scan of the whole board (what the engine's flags
    kept up to date stone by stone must equal)."""
    seat = s.current_player()
    board, own, names = s.board(), s.neighbour_counts(seat), s.grid.names
    out = [names[c] for c, v in enumerate(board) if v == 0 and own[c] <= 2]
    if s._can_remove(seat):
        out += ["-" + names[c] for c, v in enumerate(board) if v == seat + 1 and own[c] >= 3]
    if s.game.options["ludii_rules"] or not out:
        out.append("pass")
    return out


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.sampled_from([9, 13]), removals=st.floats(0, 1))
def test_incremental_chains_and_legal_lists_match_a_full_scan(seed, size, removals):
    # the union-find groups, legal flags and described cells, updated around each added or
    # lifted stone, agree with the flood fill and a board scan after every action, in clones
    # and reloaded positions
    game = make_game("wrigglers", {"size": size, "max_turns": 300})
    s = game.new_initial_state()
    rng = random.Random(seed)
    while not s.is_terminal():
        legal = s.legal_actions()
        assert legal == _legal_by_scan(s)
        for seat in (0, 1):
            assert s.chains(seat) == chain_sizes(s.board(), s.neighbour_counts(seat), seat, s.grid)
        colours = ("dark", "light")
        assert s.describe()["cells"] == {
            name: colours[v - 1] for name, v in zip(s.grid.names, s.board(), strict=True) if v
        }
        if rng.random() < 0.05:
            t = game.state_from_description(s.describe())
            assert t.legal_actions() == legal and t.scores() == s.scores()
            s = s.clone() if rng.random() < 0.5 else t
        lifts = [a for a in legal if a.startswith("-")]
        s.apply(rng.choice(lifts) if lifts and rng.random() < removals else rng.choice(legal))
