"""Shared policy for Quadraphages and Hexaphage: a two-ply turn search with a mobility evaluation.

Every successful stone move is one marked cell, so the game is a race of moves: the side whose
stones keep finding landings wins. The announced number is the lever: the opponent's part (a)
must use it, so a number that moves our stones in part (c) but leaves the opponent's stones
without a landing in their part (a) is worth a mark on each side. The search enumerates every
distinct outcome of the rest of the turn (part (a) orders and landings, every legal number, part
(c) orders and landings), keeping only the most promising part (a) outcomes when the tree is
wide, and scores the position the opponent then faces:

- marks so far (ours minus theirs);
- the opponent stones that can move with our number in their part (a) (they will mark those);
- for every stone, the set of distances it can still travel and the cells it can reach:
  stones with many options survive whatever number the other side announces.

The best one-ply turns (TOP_K) then get the opponent's best one-ply reply searched in the same
way (negamax), which matters most for the number: it shows which numbers the opponent can
answer with to stop our stones in our next part (a).

The simulation reads the engine's board tables (`state.L`, `state._board`, `state._stones`)
directly: this policy ships with the engine and a full clone/apply per leaf would be several
times slower.
"""

from __future__ import annotations

import random
import time
from typing import Any

from arena.games.phages import landings

PASS = "----"
# evaluation weights, tuned in self-play against earlier versions (random openings)
W_MARK = 10.0
W_OPP_A = 9.0
W_MOB = 0.6
W_REACH = 0.25
BEAM = 6
TOP_K = 16  # our best one-ply turns that get the opponent's reply searched
TIME_BUDGET = 0.3  # seconds; stop widening the two-ply search after this
WIN = 10_000.0


def _reach(L: Any, board: list[int], opp_stone: int, cell: int) -> tuple[int, int]:
    """(bitmask of distances with a landing, number of reachable landing cells)."""
    mask = 0
    count = 0
    for ray in L.rays[cell]:
        for k, c in enumerate(ray):
            v = board[c]
            if v == opp_stone:
                break
            if v == 0:
                mask |= 1 << (k + 1)
                count += 1
    return mask, count


def _part_outcomes(
    L: Any, board: list[int], stones: list[list[int]], seat: int, pending: list[int], n: int
) -> list[tuple[list[str], list[int], list[list[int]], int, int]]:
    """Every distinct outcome of one part: (actions, board, stones, moves made, failures)."""
    names = L.move_names
    seen: dict[tuple[int, ...], tuple[list[str], list[int], list[list[int]], int, int]] = {}
    opp = stones[1 - seat]

    def rec(board, mine, pending, acts, moved, failed):
        if not pending:
            key = tuple(sorted(mine))
            if key not in seen:
                st = [mine, opp] if seat == 0 else [opp, mine]
                seen[key] = (acts, board, st, moved, failed)
            return
        for i, c in enumerate(pending):
            rest = pending[:i] + pending[i + 1 :]
            lands = landings(L, board, opp, c, n)
            if not lands:
                rec(board, mine, rest, [*acts, PASS], moved, failed + 1)
                continue
            for t in lands:
                b = board[:]
                b[c] = 3 + seat
                b[t] = 1 + seat
                m = [t if s == c else s for s in mine]
                rec(b, m, rest, [*acts, names[c][t]], moved + 1, failed)

    rec(board, list(stones[seat]), list(pending), [], 0, 0)
    return list(seen.values())


def _legal_numbers(L: Any, board: list[int], stones: list[list[int]], seat: int) -> list[int]:
    opp = stones[1 - seat]
    good = [
        n
        for n in range(1, L.max_number + 1)
        if any(landings(L, board, opp, c, n) for c in stones[seat])
    ]
    return good or list(range(1, L.max_number + 1))


def _evaluate(
    L: Any,
    board: list[int],
    stones: list[list[int]],
    seat: int,
    number: int,
    marks: list[int],
    c_failed: int,
) -> float:
    """Score for `seat` of the position after its turn, the opponent to play part (a)."""
    opp = 1 - seat
    mob = [0, 0]
    reach = [0, 0]
    opp_a = 0
    bit = 1 << number
    for s in (0, 1):
        for c in stones[s]:
            mask, count = _reach(L, board, 2 - s, c)
            mob[s] += mask.bit_count()
            reach[s] += count
            if s == opp and mask & bit and landings(L, board, stones[seat], c, number):
                opp_a += 1
    diff = marks[seat] - marks[opp]
    if c_failed == 2 and opp_a == 0:
        # our part (c) and their part (a) both fail completely: the game ends here
        return WIN * ((diff > 0) - (diff < 0)) + diff
    return (
        W_MARK * diff
        - W_OPP_A * opp_a
        + W_MOB * (mob[seat] - mob[opp])
        + W_REACH * (reach[seat] - reach[opp])
    )


class _Leaf:
    """A complete rest-of-turn: its actions and the position the opponent then faces."""

    __slots__ = ("acts", "board", "c_failed", "marks", "number", "stones", "terminal", "value")

    def __init__(self, value, acts, board, stones, marks, number, c_failed, terminal=False):
        self.value = value
        self.acts = acts
        self.board = board
        self.stones = stones
        self.marks = marks
        self.number = number
        self.c_failed = c_failed
        self.terminal = terminal


def _c_leaves(L, board, stones, seat, marks, pending, n, prefix, out) -> None:
    for acts, b, st, moved, failed in _part_outcomes(L, board, stones, seat, pending, n):
        m = marks[:]
        m[seat] += moved
        v = _evaluate(L, b, st, seat, n, m, failed)
        out.append(_Leaf(v, [*prefix, *acts], b, st, m, n, failed, v >= WIN or v <= -WIN))


def _bc_leaves(L, board, stones, seat, marks, prefix, out) -> None:
    for n in _legal_numbers(L, board, stones, seat):
        _c_leaves(L, board, stones, seat, marks, list(stones[seat]), n, [*prefix, str(n)], out)


def _quick(L, board, stones, seat, marks) -> float:
    """Cheap score of a part (a) outcome, used to keep the search narrow."""
    mob = [0, 0]
    for s in (0, 1):
        for c in stones[s]:
            mask, count = _reach(L, board, 2 - s, c)
            mob[s] += W_MOB * mask.bit_count() + W_REACH * count
    return W_MARK * (marks[seat] - marks[1 - seat]) + mob[seat] - mob[1 - seat]


def _leaves(L, board, stones, seat, marks, phase, pending, number, prev_failed, rng) -> list:
    """Every rest-of-turn worth considering from part `phase` on, scored for `seat`.

    `prev_failed` is how many of the opponent's part (c) attempts just failed: when it is 2 and
    our whole part (a) fails as well, the game ends right there.
    """
    out: list[_Leaf] = []
    if phase == "c":
        _c_leaves(L, board, stones, seat, marks, pending, number, [], out)
        return out
    if phase == "b":
        _bc_leaves(L, board, stones, seat, marks, [], out)
        return out
    outcomes = _part_outcomes(L, board, stones, seat, pending, number)
    if rng is not None:
        rng.shuffle(outcomes)  # equal scores: vary the play
    scored = []
    for acts, b, st, moved, failed in outcomes:
        m = marks[:]
        m[seat] += moved
        if failed == 2 and prev_failed == 2:
            diff = m[seat] - m[1 - seat]
            v = WIN * ((diff > 0) - (diff < 0)) + diff
            out.append(_Leaf(v, acts, b, st, m, number, 0, True))
            continue
        scored.append((_quick(L, b, st, seat, m), acts, b, st, m))
    scored.sort(key=lambda x: -x[0])
    for _, acts, b, st, m in scored[:BEAM]:
        _bc_leaves(L, b, st, seat, m, acts, out)
    return out


def _reply_value(leaf: _Leaf, L: Any, seat: int) -> float:
    """Our score after the opponent's best one-ply reply to `leaf` (negamax)."""
    if leaf.terminal:
        return leaf.value
    opp = 1 - seat
    replies = _leaves(
        L,
        leaf.board,
        leaf.stones,
        opp,
        leaf.marks,
        "a",
        list(leaf.stones[opp]),
        leaf.number,
        leaf.c_failed,
        None,
    )
    return -max(r.value for r in replies)


def choose_turn(state: Any, rng: random.Random) -> list[str]:
    """The actions for the rest of the current turn (the state may be mid-turn)."""
    acts = _search(state, rng)
    # a completely failed part (a) can end the game on the spot: send nothing beyond the end
    probe = state.clone()
    out = []
    for a in acts:
        if probe.is_terminal():
            break
        probe.apply(a)
        out.append(a)
    return out


def _search(state: Any, rng: random.Random) -> list[str]:
    if state.is_terminal():
        return []
    deadline = time.perf_counter() + TIME_BUDGET
    L = state.L
    seat = state.current_player()
    board = list(state._board)
    stones = [list(state._stones[0]), list(state._stones[1])]
    marks = list(state.scores())
    phase = state.phase()
    number = state._number() if phase != "b" else 0
    leaves = _leaves(L, board, stones, seat, marks, phase, list(state._pending), number, 0, rng)
    leaves.sort(key=lambda lf: -lf.value)
    best, best_value = leaves[0], -float("inf")
    for leaf in leaves[:TOP_K]:
        v = _reply_value(leaf, L, seat)
        if v > best_value:
            best, best_value = leaf, v
        if time.perf_counter() > deadline:
            break
    return best.acts
