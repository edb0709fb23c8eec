"""Quadraphages and Hexaphage: every rule of RULES.md on hand-made positions, and the seed's
sample games (transcribed below from seeds/003_89e0c10bf5ea7d07.txt) replayed strictly and
leniently."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.games import GameOver, IllegalAction, make_game
from arena.games.phages import replay, sample_actions

# --- the seed's sample games, verbatim ---------------------------------------------------------

QUAD_SAMPLE = """
1.  ....  ....  1  a7a8  i3i2    c1c2  g9g8  3  c2f2  g8d8
2.  a8a5  i2i5  3  a5a2  i5i8    f2f5  d2d5  2  d5b5  f5f7
3.  a2a4  i8i6  7  i6b6  a4h4    ----  ----  3  b5e5  f7f4
4.  i6i9  a4a1  8  a1i1  i9a9    ----  ----  4  e5e1  f4f8
5.  ----  a9e9  6  i1i7  e9e3    ----  ----  3  e1h1  f8c8
6.  e3h3  i7i4  1  i4h4  h3h2    h1g1  c8c7  5  c7h7  g1b1
7.  ----  h4c4  4  h2h6  c4g4    h7d7  b1f1  5  f1f6  d7d2
8.  ----  g4b4  1  h6g6  b4b3    d2d3  f6e6  2  d3f3  e6c6
9.  ----  ----  4  g6g2  b3b7    ----  ----  3  f3c3  c6c9
10. g2g5  b7e7  1  e7e8  g5h5    c9d9  ----  2  c3a3  d9f9
11. ----  ----  6  ----  e8e2    a3g3  ----  4  g3g7  f9b9
12. ----  h5h9  2  ----  e2e4    ----  ----  1  b9b8  ----
13. h9h8  e4d4  3  ----  d4d6  and wins 40-39
"""

QUAD_FINAL = """
a b c d e f g h i
x o o . o o o o x  1.
x . o o x o x x x  2.
o x o o x o o x x  3.
x x x x x o x x x  4.
x o . o o o x x x  5.
. . o X o o x x x  6.
x x o o x o O o x  7.
x O o o x o o X x  8.
x o o o x o o x x  9.
"""

HEX_SAMPLE = """
1.  ....  ....     ....  ....    ....  ....  1  j5h5  d3e4
2.  g2f3  g6f5  1  f5d5  f3g4    h5i4  e4c4  3  c4f1  i4f7
3.  ----  g4m4  4  d5l5  m4j1    f7b3  f1b5  4  ----  b3j3
4.  ----  ----  3  j1d1  ----    ----  b5e2  1  e2c2  j3k4
5.  ----  l5k6  3  k6e6  d1a4    k4h1  c2i2  5  ----  h1c6
6.  ----  ----  2  ----  e6i6    ----  ----  1  c6d7  i2k2
7.  resign
"""

HEX_FINAL = """
 abcdefghijklm
    o x x o    1
   x x o x X   2
  x x o . x .  3
 O x x o x x o 4
  x o o x x o  5
   x o o O o   6
    X x . .    7
 abcdefghijklm
"""


def _diagram(state, lines: int) -> str:
    text = state.render_text().splitlines()[:lines]
    return "\n".join(line.rstrip() for line in text)


def _clean(diagram: str) -> str:
    return "\n".join(line.rstrip() for line in diagram.strip("\n").splitlines())


# --- position builder ----------------------------------------------------------------------


def position(
    name: str,
    *,
    X: tuple[str, str],
    O: tuple[str, str],  # noqa: E741
    x: tuple[str, ...] = (),
    o: tuple[str, ...] = (),
    to_move: str = "X",
    phase: str = "a",
    announced: tuple[int | None, int | None] = (None, None),
    pending: tuple[str, ...] | None = None,
    failures: tuple[str, ...] = (),
    turn: int = 9,
    max_turns: int = 200,
):
    """A position from its stones and marks, via the engine's own description format."""
    game = make_game(name, {"max_turns": max_turns})
    d = game.new_initial_state().describe()
    cells = {c: "X" for c in X} | {c: "O" for c in O} | {c: "x" for c in x} | {c: "o" for c in o}
    if pending is None:
        pending = (X if to_move == "X" else O) if phase in "ac" else ()
    d.update(
        cells=cells,
        stones={"X": list(X), "O": list(O)},
        player=to_move,
        phase=phase,
        announced={"X": announced[0], "O": announced[1]},
        pending=list(pending),
        failures=list(failures),
        turn=turn,
        turn_actions=[],
    )
    return game.state_from_description(d)


def everything_but(name: str, keep: set[str]) -> list[str]:
    cells = make_game(name).new_initial_state().describe()["board"]["cells"]
    return [c for c in cells if c not in keep]


def rejected(state, action: str) -> str:
    before = state.describe()
    with pytest.raises(IllegalAction) as info:
        state.apply(action)
    assert state.describe() == before, "a rejected action must not change the position"
    assert action not in state.legal_actions()
    return info.value.message


# --- setup and turn structure ----------------------------------------------------------------


def test_variants_boards_and_starting_positions():
    q = make_game("quadraphages", {"max_turns": "50"})
    assert (q.name, q.title, q.colours, q.options) == (
        "quadraphages",
        "Quadraphages",
        ("X", "O"),
        {"max_turns": 50},
    )
    d = q.new_initial_state().describe()
    assert d["stones"] == {"X": ["i3", "a7"], "O": ["c1", "g9"]}
    assert d["board"]["kind"] == "square" and len(d["board"]["cells"]) == 81
    assert d["max_number"] == 8 and d["phase"] == "b" and d["to_move"] == 0

    h = make_game("hexaphage")
    assert (h.name, h.title, h.options) == ("hexaphage", "Hexaphage", {"max_turns": 200})
    d = h.new_initial_state().describe()
    assert d["stones"] == {"X": ["d3", "j5"], "O": ["g2", "g6"]}
    assert d["board"]["kind"] == "hex" and len(d["board"]["cells"]) == 37
    assert d["max_number"] == 6


def test_first_turn_is_announce_and_move_then_five_actions_per_turn():
    s = make_game("quadraphages").new_initial_state()
    assert s.actions_remaining() == 3
    assert "a7a8" not in s.legal_actions()  # part (a) does not exist in the first turn
    msg = rejected(s, "a7a8")
    assert "announcing a number" in msg
    s.apply("1")
    assert s.actions_remaining() == 2 and s.phase() == "c"
    s.apply("a7a8")
    s.apply("i3i2")
    assert s.current_player() == 1 and s.turn_number() == 2
    assert s.actions_remaining() == 5 and s.phase() == "a"
    assert s.describe()["number"] == 1  # part (a) uses X's announced number
    for a in ("c1c2", "g9g8", "3", "c2f2", "g8d8"):
        assert s.current_player() == 1
        s.apply(a)
    assert s.current_player() == 0 and s.describe()["number"] == 3
    assert s.scores() == (2, 4)
    assert s.describe()["marks"] == {"X": ["i3", "a7"], "O": ["c1", "c2", "g8", "g9"]}


def test_number_must_be_in_range_and_announced_only_in_part_b():
    s = make_game("quadraphages").new_initial_state()
    assert "from 1 to 8" in rejected(s, "9")
    assert "from 1 to 8" in rejected(s, "0")
    s.apply("2")
    assert "cannot announce" in rejected(s, "3")
    h = make_game("hexaphage").new_initial_state()
    assert "from 1 to 6" in rejected(h, "7")


# --- a move ----------------------------------------------------------------------------------


def test_own_stones_and_marks_of_either_colour_do_not_block():
    s = position(
        "quadraphages", X=("a1", "a3"), O=("i9", "i8"), x=("a2",), o=("a4",), announced=(None, 4)
    )
    assert "a1a5" in s.legal_actions()
    s.apply("a1a5")
    assert s.describe()["cells"]["a1"] == "x"
    assert s.describe()["stones"]["X"] == ["a5", "a3"]


def test_opponent_stones_block_the_way():
    s = position("quadraphages", X=("a1", "e5"), O=("a3", "i9"), announced=(None, 4))
    assert "passes over O's stone on a3" in rejected(s, "a1a5")
    assert "a1e1" in s.legal_actions()
    # an opponent stone right at the landing cell is an occupied landing, not a block
    s = position("quadraphages", X=("a1", "e5"), O=("a5", "i9"), announced=(None, 4))
    assert "cannot land on a5: it is occupied by O's stone" in rejected(s, "a1a5")


def test_landing_restrictions():
    s = position(
        "quadraphages", X=("a1", "a3"), O=("c1", "i9"), x=("e3",), o=("c3",), announced=(None, 2)
    )
    assert "cannot land on a3: it is occupied by X's stone" in rejected(s, "a1a3")
    assert "cannot land on c1: it is occupied by O's stone" in rejected(s, "a1c1")
    assert "cannot land on c3: it is marked by O" in rejected(s, "a3c3")
    assert "a3a5" in s.legal_actions()
    s2 = position("quadraphages", X=("a1", "c3"), O=("i8", "i9"), x=("e3",), announced=(None, 2))
    assert "cannot land on e3: it is marked by X" in rejected(s2, "c3e3")
    # never off the board: from a corner with 8 only the two far corners exist
    s3 = position("quadraphages", X=("a1", "e5"), O=("h8", "h9"), announced=(None, 8))
    assert [a for a in s3.legal_actions() if a.startswith("a1")] == ["a1i1", "a1a9"]
    assert "not a cell" in rejected(s3, "a1a10")


def test_exact_distance_straight_lines_and_own_pending_stones_only():
    s = position("quadraphages", X=("a1", "e5"), O=("h8", "h9"), announced=(None, 4))
    assert "a1a4 travels 3 cells, but in part (a) your stones move 4" in rejected(s, "a1a4")
    assert "number O announced" in rejected(s, "a1a6")
    assert "not on one straight line" in rejected(s, "a1b3")
    assert "no stone of yours on b5: b5 is empty" in rejected(s, "b5b9")
    assert "holds O's stone" in rejected(s, "h8h4")
    assert "cannot parse" in rejected(s, "zz")
    s.apply("a1a5")
    assert "already moved in this part" in rejected(s, "a5a9")
    assert "no stone of yours on a1: a1 is marked by X" in rejected(s, "a1e1")


def test_hex_moves_in_six_directions_with_doubled_columns():
    s = position("hexaphage", X=("g4", "a4"), O=("m4", "f7"), announced=(None, 1), pending=("g4",))
    assert sorted(s.legal_actions()) == sorted(["g4e4", "g4i4", "g4f3", "g4h3", "g4f5", "g4h5"])
    s = position("hexaphage", X=("a4", "h1"), O=("m4", "f7"), announced=(None, 6), pending=("a4",))
    assert s.legal_actions() == ["----"]
    assert "occupied by O's stone" in rejected(s, "a4m4")
    s = position("hexaphage", X=("a4", "h1"), O=("k2", "f7"), announced=(None, 6), pending=("a4",))
    assert s.legal_actions() == ["a4m4"]
    assert "passes over O's stone" in rejected(
        position("hexaphage", X=("a4", "h1"), O=("e4", "f7"), announced=(None, 6)), "a4m4"
    )


# --- must move -----------------------------------------------------------------------------


def test_a_stone_that_can_move_must_move():
    s = position("quadraphages", X=("a1", "e5"), O=("h8", "h9"), announced=(None, 2))
    assert "'----' is only for a stone that cannot move" in rejected(s, "----")


def test_pass_consumes_a_stuck_stone_in_any_order():
    # a1 is boxed in for distance 1; e5 can move
    base = {"X": ("a1", "e5"), "O": ("h8", "h9"), "x": ("a2", "b1"), "announced": (None, 1)}
    s = position("quadraphages", **base)
    legal = s.legal_actions()
    assert "----" in legal and not any(a.startswith("a1") for a in legal)
    s.apply("----")
    assert s.describe()["pending"] == ["e5"]
    assert "----" not in s.legal_actions()  # e5 can move, so it must
    assert "'----' is only for a stone that cannot move" in rejected(s, "----")
    s.apply("e5e4")
    assert s.phase() == "b"
    # the other order is just as legal
    s = position("quadraphages", **base)
    s.apply("e5e6")
    assert s.legal_actions() == ["----"]
    s.apply("----")
    assert s.phase() == "b"


def test_moving_one_stone_can_take_the_other_stones_only_landing():
    # with 2: a1 can only reach a3 (c1 is marked); c3 can reach a3 as well
    s = position("quadraphages", X=("a1", "c3"), O=("h8", "h9"), o=("c1",), announced=(None, 2))
    assert "----" not in s.legal_actions()
    s.apply("c3a3")
    assert s.legal_actions() == ["----"]
    s.apply("----")
    assert s.describe()["failures"] == ["a1"]


# --- the number ------------------------------------------------------------------------------


def test_number_must_let_a_stone_move_when_some_number_does():
    keep = {"a1", "i9", "e5", "g5", "d1", "i6"}
    s = position(
        "quadraphages",
        X=("a1", "i9"),
        O=("e5", "g5"),
        x=tuple(everything_but("quadraphages", keep)),
        phase="b",
        announced=(None, 2),
    )
    assert s.legal_actions() == ["3"]
    msg = rejected(s, "4")
    assert "4 lets neither of your stones (a1 and i9) move, but 3 would" in msg
    s.apply("3")
    assert sorted(s.legal_actions()) == ["a1d1", "i9i6"]


def test_any_number_when_no_number_lets_a_stone_move():
    keep = {"a1", "i9", "e5", "g5"}
    s = position(
        "quadraphages",
        X=("a1", "i9"),
        O=("e5", "g5"),
        x=tuple(everything_but("quadraphages", keep)),
        phase="b",
        announced=(None, 2),
    )
    assert s.legal_actions() == [str(n) for n in range(1, 9)]
    s.apply("8")
    assert s.legal_actions() == ["----"]


# --- the end ----------------------------------------------------------------------------------


def test_game_ends_after_opponents_part_c_and_own_part_a_fail_completely():
    keep = {"a1", "i9", "e5", "g5"}
    marks = everything_but("quadraphages", keep)
    s = position(
        "quadraphages",
        X=("a1", "i9"),
        O=("e5", "g5"),
        x=tuple(marks[:40]),
        o=tuple(marks[40:]),
        to_move="O",
        phase="b",
        announced=(5, None),
    )
    for a in ("2", "----", "----"):
        s.apply(a)
    assert not s.is_terminal() and s.current_player() == 0
    s.apply("----")
    assert not s.is_terminal()
    assert s.describe()["failures"] == ["e5", "g5", "a1"]
    s.apply("----")
    assert s.is_terminal() and s.current_player() is None
    assert s.turn_actions() == ["----", "----"] and s.actions_remaining() == 0
    r = s.result()
    assert (r.reason, r.scores, r.winner) == ("blocked", (40, 37), 0)
    assert s.legal_actions() == []
    with pytest.raises(GameOver):
        s.apply("3")


def test_equal_marks_is_a_draw():
    keep = {"a1", "i9", "e5", "g5", "b2"}  # b2 lies on no line of any stone
    marks = everything_but("quadraphages", keep)
    s = position(
        "quadraphages",
        X=("a1", "i9"),
        O=("e5", "g5"),
        x=tuple(marks[:38]),
        o=tuple(marks[38:]),
        to_move="O",
        phase="b",
        announced=(5, None),
    )
    for a in ("2", "----", "----", "----", "----"):
        s.apply(a)
    assert s.result().winner is None and s.result().scores == (38, 38)


def test_failures_that_do_not_cover_all_four_stones_do_not_end_the_game():
    # X is boxed in completely; O's e5 can still move 2 down to e7
    keep = {"a1", "i9", "e5", "g5", "e7"}
    s = position(
        "quadraphages",
        X=("a1", "i9"),
        O=("e5", "g5"),
        x=tuple(everything_but("quadraphages", keep)),
        announced=(None, 1),
    )
    for a in ("----", "----", "2", "----", "----"):  # four X failures in a row
        s.apply(a)
    assert not s.is_terminal() and s.current_player() == 1
    s.apply("e5e7")  # O's part (a) with X's 2 moves a stone
    s.apply("----")
    assert not s.is_terminal()
    assert s.describe()["failures"] == ["g5"]


def test_one_stone_then_both_opponent_stones_failing_is_not_the_end():
    # X's i9 moves 3 to i6 but a1 is stuck; O cannot move 3, but can move 2 (e5e7)
    keep = {"a1", "i9", "e5", "g5", "i6", "e7"}
    s = position(
        "quadraphages",
        X=("a1", "i9"),
        O=("e5", "g5"),
        x=tuple(everything_but("quadraphages", keep)),
        phase="c",
        announced=(3, 1),
    )
    for a in ("i9i6", "----", "----", "----"):
        s.apply(a)
    assert not s.is_terminal()
    assert s.describe()["failures"] == ["a1", "e5", "g5"]
    assert s.legal_actions() == ["2"]
    s.apply("2")
    s.apply("e5e7")
    assert s.describe()["failures"] == []


def test_max_turns_compares_marked_cells():
    g = make_game("quadraphages", {"max_turns": 3})
    s = g.new_initial_state()
    while not s.is_terminal():
        s.apply(s.legal_actions()[0])
    assert s.turn_number() == 3
    r = s.result()
    assert r.reason == "max_turns" and r.scores == (6, 4) and r.winner == 0
    s = make_game("hexaphage", {"max_turns": 2}).new_initial_state()
    while not s.is_terminal():
        s.apply(s.legal_actions()[0])
    assert s.result().reason == "max_turns" and s.result().winner == 1


def test_resign():
    s = make_game("hexaphage").new_initial_state()
    s.apply("1")
    s.resign(0)
    assert s.result().winner == 1 and s.result().reason == "resign"


# --- description -------------------------------------------------------------------------------


def test_description_mid_turn_round_trips_and_plays_on():
    g = make_game("quadraphages")
    s = g.new_initial_state()
    for a in ("1", "a7a8", "i3i2", "c1c2"):
        s.apply(a)
    d = s.describe()
    assert d["phase"] == "a" and d["pending"] == ["g9"] and d["number"] == 1
    assert d["announced"] == {"X": 1, "O": None} and d["turn_actions"] == ["c1c2"]
    assert d["cells"]["c2"] == "O" and d["cells"]["c1"] == "o"
    assert d["actions_remaining"] == 4
    r = g.state_from_description(d)
    assert r.describe() == d and r.key() == s.key()
    for a in ("g9g8", "3", "c2f2", "g8d8"):
        s.apply(a)
        r.apply(a)
    assert r.describe() == s.describe()


# --- the seed's sample games --------------------------------------------------------------------


def test_hexaphage_sample_strict_replay_rejects_exactly_m4j1_then_d1a4():
    g = make_game("hexaphage")
    actions = sample_actions(HEX_SAMPLE)
    assert actions[:3] == ["1", "j5h5", "d3e4"] and actions[-1] == "resign"
    with pytest.raises(IllegalAction) as info:
        replay(g, actions)
    assert info.value.action == "m4j1"
    assert "m4j1 travels 3 cells, but in part (c) your stones move 4" in info.value.message
    rep = replay(g, actions, lenient=True)
    assert [(r.player, r.action) for r in rep.rejections] == [("O", "m4j1"), ("O", "d1a4")]
    assert rep.rejections[1].message == "d1a4 passes over X's stone on c2"
    # replayed leniently it reproduces the final diagram exactly
    assert _diagram(rep.state, 9) == _clean(HEX_FINAL)
    assert rep.state.result().reason == "resign" and rep.state.result().winner == 0


def test_quadraphages_sample_known_defects():
    g = make_game("quadraphages")
    actions = sample_actions(QUAD_SAMPLE)
    assert len(actions) == 3 + 24 * 5
    # O's second move reads d2d5, but the stone stands on d8
    with pytest.raises(IllegalAction) as info:
        replay(g, actions)
    assert info.value.action == "d2d5"
    assert "no stone of yours on d2" in info.value.message
    # read d8d5: then the only rejections are X's move 4 contradicting move 3 (the stones went
    # to b6 and h4, not to i6 and a4) and X's final d4d6 travelling 2 after announcing 3
    fixed = ["d8d5" if a == "d2d5" else a for a in actions]
    rep = replay(g, fixed, lenient=True)
    assert [(r.player, r.action) for r in rep.rejections] == [
        ("X", "i6i9"),
        ("X", "a4a1"),
        ("X", "d4d6"),
    ]
    assert "no stone of yours on i6" in rep.rejections[0].message
    assert rep.rejections[2].message.startswith("d4d6 travels 2 cells, but in part (c)")
    assert "move 3" in rep.rejections[2].message
    # marking the first cell of every listed move reproduces the final diagram exactly
    assert _diagram(rep.state, 10) == _clean(QUAD_FINAL)
    assert rep.state.scores() == (37, 35)
    stones = rep.state.describe()["stones"]
    assert sorted(stones["X"]) == ["d6", "h8"] and sorted(stones["O"]) == ["b8", "g7"]


def test_quadraphages_sample_taken_literally_marks_d2_instead_of_d8():
    rep = replay(make_game("quadraphages"), sample_actions(QUAD_SAMPLE), lenient=True)
    # forcing the typo marks d2 early, so O's later d7d2 lands on a marked cell
    assert [r.action for r in rep.rejections] == ["d2d5", "i6i9", "a4a1", "d7d2", "d4d6"]
    assert rep.state.scores() == (37, 34)


# --- properties ----------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["quadraphages", "hexaphage"]))
def test_every_move_marks_exactly_one_cell_and_marks_stay(seed, name):
    rng = random.Random(seed)
    s = make_game(name).new_initial_state()
    while not s.is_terminal():
        before = s.describe()
        action = rng.choice(s.legal_actions())
        s.apply(action)
        after = s.describe()
        gained = sum(after["scores"]) - sum(before["scores"])
        assert gained == (1 if action[0].isalpha() else 0)
        for cell, v in before["cells"].items():
            if v in "xo":
                assert after["cells"][cell] == v
        assert after["scores"] == [len(after["marks"]["X"]), len(after["marks"]["O"])]
    assert s.result().reason == "blocked"
