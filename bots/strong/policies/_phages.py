"""Shared policy for Quadraphages and Hexaphage: a one-turn search with a mobility evaluation.

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

The simulation reads the engine's board tables (`state.L`, `state._board`, `state._stones`)
directly: this policy ships with the engine and a full clone/apply per leaf would be several
times slower.
"""

from __future__ import annotations

import random
from typing import Any

PASS = "----"
# evaluation weights, tuned against the random player and against earlier versions
W_MARK = 10.0
W_OPP_A = 9.0
W_MOB = 1.2
W_REACH = 0.25
BEAM = 6
WIN = 10_000.0


def _landings(L: Any, board: list[int], opp: list[int], cell: int, n: int) -> list[int]:
    """Legal landings at exactly n cells; mirrors PhageState._landings."""
    line = L.line
    size = len(board)
    o0, o1 = opp
    b0 = line[cell * size + o0]
    b1 = line[cell * size + o1]
    out = []
    for d, ray in enumerate(L.rays[cell]):
        if len(ray) < n:
            continue
        t = ray[n - 1]
        if board[t]:
            continue
        if b0 >= 0 and b0 >> 6 == d and (b0 & 63) < n:
            continue
        if b1 >= 0 and b1 >> 6 == d and (b1 & 63) < n:
            continue
        out.append(t)
    return out


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
            lands = _landings(L, board, opp, c, n)
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
        if any(_landings(L, board, opp, c, n) for c in stones[seat])
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
            if s == opp and mask & bit and _landings(L, board, stones[seat], c, number):
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


def _best_c(L, board, stones, seat, marks, pending, n) -> tuple[float, list[str]]:
    best = (-float("inf"), [])
    for acts, b, st, moved, failed in _part_outcomes(L, board, stones, seat, pending, n):
        m = marks[:]
        m[seat] += moved
        v = _evaluate(L, b, st, seat, n, m, failed)
        if v > best[0]:
            best = (v, acts)
    return best


def _best_bc(L, board, stones, seat, marks) -> tuple[float, list[str]]:
    best = (-float("inf"), [])
    for n in _legal_numbers(L, board, stones, seat):
        v, acts = _best_c(L, board, stones, seat, marks, list(stones[seat]), n)
        if v > best[0]:
            best = (v, [str(n), *acts])
    return best


def _quick(L, board, stones, seat, marks) -> float:
    """Cheap score of a part (a) outcome, used to keep the search narrow."""
    mob = [0, 0]
    for s in (0, 1):
        for c in stones[s]:
            mask, count = _reach(L, board, 2 - s, c)
            mob[s] += mask.bit_count() + W_REACH / W_MOB * count
    return W_MARK * (marks[seat] - marks[1 - seat]) + W_MOB * (mob[seat] - mob[1 - seat])


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
    L = state.L
    seat = state.current_player()
    board = list(state._board)
    stones = [list(state._stones[0]), list(state._stones[1])]
    marks = list(state.scores())
    phase = state.phase()
    if phase == "c":
        _, acts = _best_c(L, board, stones, seat, marks, list(state._pending), state._number())
        return acts
    if phase == "b":
        _, acts = _best_bc(L, board, stones, seat, marks)
        return acts
    outcomes = _part_outcomes(L, board, stones, seat, list(state._pending), state._number())
    rng.shuffle(outcomes)  # equal scores: vary the play
    scored = []
    for acts, b, st, moved, failed in outcomes:
        m = marks[:]
        m[seat] += moved
        scored.append((_quick(L, b, st, seat, m), acts, b, st, m, failed))
    scored.sort(key=lambda x: -x[0])
    best = (-float("inf"), [])
    for _, acts, b, st, m, _failed in scored[:BEAM]:
        v, rest = _best_bc(L, b, st, seat, m)
        if v > best[0]:
            best = (v, [*acts, *rest])
    return best[1]
