"""Stripes!: clauses a)-g) of the seed and every decision of RULES.md on hand-made positions.

On the default 13x13 board the origin is g7; its corner cells are f6, h6, f8 and h8. Positions
are loaded through `state_from_description` with the stripes listed by colour; they need not be
reachable in play, only consistent.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.games import GameOver, IllegalAction, OptionError, make_game

FIRSTS = {"f5-f6", "e6-f6", "h5-h6", "h6-i6", "e8-f8", "f8-f9", "h8-i8", "h8-h9"}


def position(red=(), blue=(), to_move=0, turn=None, options=None):
    game = make_game("stripes", options or {})
    d = game.new_initial_state().describe()
    d.update(
        stripes=[list(red), list(blue)],
        to_move=to_move,
        turn=turn if turn is not None else len(red) + len(blue) + 1,
    )
    return game.state_from_description(d)


def legal(s) -> set[str]:
    return set(s.legal_actions())


def rejects(s, action, message):
    with pytest.raises(IllegalAction) as e:
        s.apply(action)
    assert e.value.message == message
    assert action not in s.legal_actions()


# --- board and options -----------------------------------------------------------------


def test_options():
    g = make_game("stripes", {"size": "15", "max_turns": "50"})
    assert g.options == {"size": 15, "max_turns": 50}
    s = g.new_initial_state()
    assert s.describe()["origin"] == "h8"
    for bad in ({"size": 11}, {"size": 14}, {"size": "x"}, {"colours": 2}):
        with pytest.raises(OptionError):
            make_game("stripes", bad)


def test_origin_is_the_centre_and_never_coloured():
    s = make_game("stripes").new_initial_state()
    d = s.describe()
    assert d["origin"] == "g7" and d["cells"] == {} and d["scores"] == [0, 0]
    s = position(red=["h8-i8"], blue=["e6-f6"])
    rejects(s, "g6-g8", "g7 is the origin")
    rejects(s, "g7", "g7 is the origin")
    assert "+" in s.render_text().splitlines()[7]


def test_red_moves_first():
    s = make_game("stripes").new_initial_state()
    assert s.current_player() == 0 and s.game.colours == ("red", "blue")
    s.apply("e6-f6")
    assert s.current_player() == 1 and s.turn_number() == 2


# --- a) the first stripe ---------------------------------------------------------------


def test_a_first_stripe_is_1x2_at_a_corner_of_the_origin():
    s = make_game("stripes").new_initial_state()
    assert legal(s) == FIRSTS
    rejects(s, "d6-f6", "your first stripe must be 1x2 (2 cells) but stripe d6-f6 has 3")
    rejects(s, "f6", "your first stripe must be 1x2 (2 cells) but stripe f6 has 1")
    # f6-g6 touches the origin's corner but shares the edge g6|g7: not diagonal
    rejects(s, "f6-g6", "your first stripe must be diagonally adjacent to the origin g7")
    rejects(s, "a1-a2", "your first stripe must be diagonally adjacent to the origin g7")


def test_a_second_player_first_stripe_avoids_taken_cells():
    s = make_game("stripes").new_initial_state()
    s.apply("e6-f6")
    assert legal(s) == FIRSTS - {"e6-f6", "f5-f6"}
    rejects(s, "f5-f6", "f6 is already coloured")
    s.apply("h8-h9")
    assert s.describe()["stripes"] == [["e6-f6"], ["h8-h9"]]


# --- b) diagonal adjacency to the origin or an own stripe ------------------------------


def test_b_later_stripe_must_touch_origin_or_own_stripe_at_a_corner():
    s = position(red=["h8-i8"], blue=["e6-f6"])
    rejects(
        s,
        "b2-b3",
        "stripe b2-b3 is not diagonally adjacent to the origin g7 or to one of your stripes",
    )
    # d5 touches blue's e6 at a corner: the other colour does not count
    rejects(
        s, "d5", "stripe d5 is not diagonally adjacent to the origin g7 or to one of your stripes"
    )
    # j9 touches red's i8 at a corner: legal (length 1 next to length 2)
    assert "j9" in legal(s)


def test_b_origin_corner_allows_any_length():
    s = position(red=["h8-i8"], blue=[], to_move=0)
    for a in ("f6", "e6-f6", "c6-f6", "a6-f6", "f1-f6", "h1-h6", "h6-m6"):
        assert a in legal(s), a
    s.apply("a6-f6")
    assert s.scores() == (8, 0)


def test_b_sharing_an_edge_with_the_origin_is_not_diagonal_adjacency():
    s = position(red=["h8-i8"])
    rejects(
        s,
        "g5-g6",
        "stripe g5-g6 is not diagonally adjacent to the origin g7 or to one of your stripes",
    )
    # f6-f7 touches the origin at f6's corner but f7 shares an edge with it
    assert "f6-f7" not in legal(s)


def test_b_a_stripe_may_share_an_edge_with_the_origin():
    # f7 shares an edge with the origin and touches red's e6 at a corner
    s = position(red=["h8-h9", "e5-e6"], blue=["b2-b3"])
    assert "f7" in legal(s)
    s.apply("f7")
    assert s.describe()["cells"]["f7"] == "red"


# --- c) never orthogonally adjacent to an own stripe -----------------------------------


def test_c_no_edge_with_an_own_stripe():
    s = position(red=["e6-f6"], blue=["h8-i8"])
    rejects(s, "d6", "stripe d6 is orthogonally adjacent to your stripe e6-f6")
    rejects(s, "e5-f5", "stripe e5-f5 is orthogonally adjacent to your stripe e6-f6")
    rejects(s, "f3-f5", "stripe f3-f5 is orthogonally adjacent to your stripe e6-f6")
    rejects(s, "d5-d6", "stripe d5-d6 is orthogonally adjacent to your stripe e6-f6")
    # the corner-only neighbours are fine
    assert {"d5", "d7", "g5"} <= legal(s)


def test_c_and_f_edges_with_the_other_colour_are_allowed():
    # f) red's e10-g10 shares edges with blue's e9-f9; it touches red's h9 at a corner
    s = position(red=["h8-h9"], blue=["e9-f9"])
    assert "e10-g10" in legal(s)
    s.apply("e10-g10")
    assert s.scores() == (5, 2)


# --- d) and g) one cell wide, whole cells ----------------------------------------------


def test_d_g_stripes_are_straight_runs_of_whole_cells():
    s = position(red=["e6-f6"], blue=["h8-i8"])
    rejects(s, "c4-d5", "c4-d5 is not a straight horizontal or vertical stripe")
    rejects(s, "c4-c7.5", "cannot parse 'c7.5' as a cell")
    rejects(s, "c4-c5-c6", "cannot parse 'c4-c5-c6' as a stripe (expected c4-c7, c4-f4 or d5)")
    rejects(s, "n1", "n1 is not on the 13x13 board")
    rejects(s, "", "cannot parse '' as a stripe (expected c4-c7, c4-f4 or d5)")


def test_d_stripes_may_cross_coloured_cells_never():
    s = position(red=["h8-i8"], blue=["d7-e7"])
    rejects(s, "d5-d8", "d7 is already coloured")
    rejects(s, "h8", "h8 is already coloured")


# --- e) one longer or shorter than EACH diagonally adjacent own stripe ------------------


def test_e_length_differs_by_one_from_the_neighbour():
    s = position(red=["e6-f6"], blue=["h8-i8"])
    assert {"d5", "d3-d5", "b5-d5"} <= legal(s)
    rejects(
        s,
        "c5-d5",
        "stripe c5-d5 has length 2 but your diagonally adjacent stripe e6-f6 has length 2 "
        "(needs 1 or 3)",
    )
    rejects(
        s,
        "d2-d5",
        "stripe d2-d5 has length 4 but your diagonally adjacent stripe e6-f6 has length 2 "
        "(needs 1 or 3)",
    )


def test_e_against_each_neighbour_like_figure_2():
    # c5-d5 (length 2) and f5-h5 (length 3) with a gap at e5; e6 downwards touches both
    s = position(red=["c5-d5", "f5-h5"], blue=["a13"])
    rejects(
        s,
        "e6",
        "stripe e6 has length 1 but your diagonally adjacent stripe f5-h5 has length 3 "
        "(needs 2 or 4)",
    )
    rejects(
        s,
        "e6-e7",
        "stripe e6-e7 has length 2 but your diagonally adjacent stripe c5-d5 has length 2 "
        "(needs 1 or 3)",
    )
    rejects(
        s,
        "e6-e8",
        "stripe e6-e8 has length 3 but your diagonally adjacent stripe f5-h5 has length 3 "
        "(needs 2 or 4)",
    )
    assert not any(a.startswith("e6") for a in legal(s))
    # touching only one of them is fine
    assert {"b6", "b6-b8", "i6-i7", "i6-i9"} <= legal(s)


def test_e_fits_two_neighbours_in_between():
    # e6 touches d5 (length 1) and f5-h5 (length 3): length 2 is one off each, so legal
    s = position(red=["d5", "f5-h5"], blue=["a13"])
    assert "e6-e7" in legal(s)
    s.apply("e6-e7")
    assert s.scores() == (6, 1)


def test_e_single_cell_neighbour_needs_length_2():
    s = position(red=["h8-i8", "j9"], blue=["a13"])
    rejects(
        s,
        "k10-k12",
        "stripe k10-k12 has length 3 but your diagonally adjacent stripe j9 has length 1 (needs 2)",
    )
    assert "k10-k11" in legal(s)


# --- notation --------------------------------------------------------------------------


def test_notation_canonical_lowest_cell_first():
    s = make_game("stripes").new_initial_state()
    s.apply("f6-e6")  # a harmless spelling variant
    s.apply("h9-h8")
    assert s.describe()["stripes"] == [["e6-f6"], ["h8-h9"]]
    s.apply("D5")
    assert s.describe()["stripes"][0] == ["e6-f6", "d5"]
    index = s.geo.grid.index
    for a in s.legal_actions():
        ends = a.split("-")
        assert len(ends) == 1 or index[ends[0]] < index[ends[1]], a


# --- the end: loser stuck, winner plays on ---------------------------------------------


STUCK_RED = ["d7", "d9", "f6", "h6", "h8"]  # covers every cell blue's e8-f8 could grow from
STUCK_BLUE = ["e8-f8"]


def test_first_player_unable_to_colour_loses_and_winner_plays_on():
    s = position(red=STUCK_RED, blue=STUCK_BLUE, to_move=0)
    assert "g9-g10" in legal(s)
    s.apply("g9-g10")  # takes blue's last anchor
    assert s.describe()["loser"] == 1 and s.loser() == 1
    assert not s.is_terminal()
    assert s.current_player() == 0  # red again
    assert "blue is stuck" in s.render_text()
    moves = 0
    while not s.is_terminal():
        assert s.current_player() == 0
        s.apply(s.legal_actions()[0])
        moves += 1
    assert moves > 0
    r = s.result()
    red_cells = sum(1 for v in s.describe()["cells"].values() if v == "red")
    assert (r.winner, r.reason, r.scores) == (0, "stuck", (red_cells, 2))


def test_stuck_player_loses_even_with_more_cells():
    # mirror: blue blocks red, and red has a long, dead stripe on the a file
    s = position(red=["e8-f8", "a1-a12"], blue=[*STUCK_RED, "b13"], to_move=1)
    s.apply("g9-g10")
    assert s.loser() == 0 and s.current_player() == 1
    assert s.scores()[0] > s.scores()[1]
    while not s.is_terminal():
        s.apply(s.legal_actions()[-1])
    assert s.result().winner == 1 and s.result().reason == "stuck"


def test_winner_stuck_at_once_ends_the_game():
    # play the blocking line out, then rebuild the position before red's last stripe with
    # nobody stuck yet: that stripe leaves blue stuck and red without a stripe at the same time
    s = position(red=STUCK_RED, blue=STUCK_BLUE, to_move=0)
    s.apply("g9-g10")
    while not s.is_terminal():
        s.apply(s.legal_actions()[0])
    final = s.describe()
    red_done = final["stripes"][0]
    t = position(red=red_done[:-1], blue=STUCK_BLUE, to_move=0, turn=final["turn"])
    assert t.loser() is None
    t.apply(red_done[-1])
    assert t.is_terminal() and t.loser() == 1
    assert (t.result().winner, t.result().reason) == (0, "stuck")


def test_game_over_rejects_actions():
    s = position(red=STUCK_RED, blue=STUCK_BLUE)
    s.apply("g9-g10")
    while not s.is_terminal():
        s.apply(s.legal_actions()[0])
    assert s.legal_actions() == [] and s.current_player() is None
    with pytest.raises(GameOver):
        s.apply("a1")


def test_scores_count_coloured_cells():
    s = make_game("stripes").new_initial_state()
    s.apply("e6-f6")
    s.apply("h8-i8")
    s.apply("d3-d5")
    assert s.scores() == (5, 2) and s.describe()["scores"] == [5, 2]


# --- max_turns -------------------------------------------------------------------------


def test_max_turns_more_cells_wins_or_draw():
    s = make_game("stripes", {"max_turns": 2}).new_initial_state()
    s.apply("e6-f6")
    s.apply("h8-i8")
    assert (s.result().winner, s.result().reason) == (None, "max_turns")
    s = make_game("stripes", {"max_turns": 3}).new_initial_state()
    s.apply("e6-f6")
    s.apply("h8-i8")
    s.apply("h4-h6")
    assert (s.result().winner, s.result().reason, s.result().scores) == (0, "max_turns", (5, 2))


def test_max_turns_after_a_player_is_stuck_keeps_the_winner():
    s = position(
        red=["e8-f8", "a1-a12"],
        blue=[*STUCK_RED, "b13"],
        to_move=1,
        turn=9,
        options={"max_turns": 9},
    )
    s.apply("g9-g10")
    r = s.result()
    assert (r.winner, r.reason) == (1, "max_turns")
    assert r.scores[0] > r.scores[1]


# --- describe and views ----------------------------------------------------------------


def test_describe_round_trip_and_render():
    s = position(red=STUCK_RED, blue=STUCK_BLUE)
    s.apply("g9-g10")
    d = s.describe()
    assert d["stripes"] == [[*STUCK_RED, "g9-g10"], STUCK_BLUE]
    assert d["cells"]["e8"] == "blue" and d["cells"]["g10"] == "red"
    t = s.game.state_from_description(d)
    assert t.describe() == d and t.legal_actions() == s.legal_actions()
    lines = s.render_text().splitlines()
    assert lines[0] == "a b c d e f g h i j k l m"
    assert lines[7] == ". . . R . . + . . . . . .  7."
    assert s.render_svg().startswith("<svg")


# --- legal move generation against brute force -----------------------------------------


def brute_force(s) -> set[str]:
    """Every straight run on the board that `apply` accepts: the slow, obvious definition."""
    geo = s.geo
    seat = s.current_player()
    n = geo.n
    at = geo.grid.at
    out = set()
    runs = []
    for r in range(n):
        for c0 in range(n):
            for c1 in range(c0, n):
                runs.append(tuple(at[(c, r)] for c in range(c0, c1 + 1)))
    for c in range(n):
        for r0 in range(n):
            for r1 in range(r0 + 1, n):
                runs.append(tuple(at[(c, r)] for r in range(r0, r1 + 1)))
    for cells in runs:
        try:
            s._check("probe", cells, seat)
        except IllegalAction:
            continue
        out.add(geo.stripe_name(cells))
    return out


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_legal_actions_equal_brute_force_and_loser_never_moves(seed):
    game = make_game("stripes")
    s = game.new_initial_state()
    rng = random.Random(seed)
    step = 0
    while not s.is_terminal():
        la = s.legal_actions()
        assert len(la) == len(set(la)) and la
        if step % 4 == 0:
            assert set(la) == brute_force(s)
        if s.loser() is not None:
            assert s.current_player() == 1 - s.loser()
        s.apply(rng.choice(la))
        step += 1
    assert s.result().winner == 1 - s.loser()
    d = s.describe()
    assert game.state_from_description(d).describe() == d
