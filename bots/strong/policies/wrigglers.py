"""Wrigglers Squared policy: one-ply search on an evaluation that knows about forced moves.

Why the evaluation looks the way it does: under the default rules nobody may pass while an add
or a remove is available, so the board fills up and, late in the game, a player who has run
out of harmless moves is forced to put stones next to the middle of their own chains, which
branches them (a branched group scores nothing). A greedy score-maximiser builds two fine
chains and then loses them in the last twenty turns. So besides the score and the growth of the
two best chains, the evaluation counts

- *poison*: empty points next to an inner stone of a best chain that the player could still
  fill (a forced add there breaks the chain), which is penalised, and
- *spare* moves: adds that touch no best chain's middle, and removals inside dead groups, which
  keep the player off the poison points when the board is nearly full.

Search is one ply with the engine (clone, apply, evaluate); ties are broken at random. Under
`ludii_rules` the same evaluation applies and a pass that wins on the spot scores as a win.
"""

from __future__ import annotations

import random

from arena.games.base import State

W_GROWTH = 0.3
W_BALANCE = 0.5
W_POISON = 1.5
W_SPARE = 0.6
SPARE_CAP = 12
REPAIR = True
SCORE_POW = 1.0
LATE = 0.0
W_DEFICIT = 0.0
MERGE_POISON = False


def _repaired(cells: list[int], own: list[int], nbrs) -> list[tuple[int, list[int]]]:
    """The chains a branched group falls into once its overcrowded stones are removed.

    Removal is always available for an overcrowded stone (and under the default rules the game
    cannot end while one exists), so a branch is worth what its repair leaves, not zero.
    """
    keep = {c for c in cells if own[c] <= 2}
    out = []
    seen = set()
    for start in keep:
        if start in seen:
            continue
        seen.add(start)
        stack = [start]
        piece = []
        ok = True
        while stack:
            c = stack.pop()
            piece.append(c)
            k = 0
            for n in nbrs[c]:
                if n in keep:
                    k += 1
                    if n not in seen:
                        seen.add(n)
                        stack.append(n)
            if k > 2:
                ok = False
        if ok:
            out.append((len(piece), piece))
    return out


def _features(state, seat: int) -> float:
    board = state.board()
    own = state.neighbour_counts(seat)
    nbrs = state.grid.neighbours
    mark = seat + 1
    seen = bytearray(len(board))
    chains: list[tuple[int, list[int]]] = []
    dead_removals = 0
    empties_ok = 0
    for start, v in enumerate(board):
        if v == 0:
            if own[start] <= 2:
                empties_ok += 1
            continue
        if v != mark or seen[start]:
            continue
        seen[start] = 1
        stack = [start]
        cells = []
        crowded = 0
        while stack:
            c = stack.pop()
            cells.append(c)
            if own[c] > 2:
                crowded += 1
            for n in nbrs[c]:
                if board[n] == mark and not seen[n]:
                    seen[n] = 1
                    stack.append(n)
        if crowded:
            dead_removals += crowded
            if REPAIR:
                chains.extend(_repaired(cells, own, nbrs))
        else:
            chains.append((len(cells), cells))
    chains.sort(key=lambda t: -t[0])
    top = chains[:2]
    score = top[0][0] * top[1][0] if len(top) == 2 else 0
    growth = sum(t[0] for t in top)
    balance = min(t[0] for t in top) if len(top) == 2 else 0
    poison = set()
    touched: dict[int, int] = {}
    for k, (size, cells) in enumerate(top):
        if size < 3:
            continue
        for c in cells:
            if own[c] == 2:
                for n in nbrs[c]:
                    if board[n] == 0 and own[n] <= 2:
                        poison.add(n)
            elif MERGE_POISON:
                for n in nbrs[c]:
                    if board[n] == 0 and own[n] <= 2:
                        if touched.get(n, k) != k:
                            poison.add(n)
                        touched[n] = k
    free = empties_ok - len(poison) + dead_removals
    spare = min(free, SPARE_CAP)
    fill = 1.0 - empties_ok / len(board)
    return (
        score**SCORE_POW
        + W_GROWTH * growth
        + W_BALANCE * balance
        - W_POISON * (1.0 + LATE * fill * fill) * len(poison)
        + W_SPARE * (1.0 + LATE * fill * fill) * spare
        - W_DEFICIT * fill * fill * max(0, len(poison) - free)
    )


def evaluate(state, seat: int) -> float:
    r = state.result()
    if r is not None:
        if r.winner == seat:
            return 1e6 + r.scores[seat]
        if r.winner is None:
            return 0.0
        return -1e6
    return _features(state, seat) - _features(state, 1 - seat)


def choose_turn(state: State, rng: random.Random) -> list[str]:
    seat = state.current_player()
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal
    best: list[str] = []
    best_value = float("-inf")
    for action in legal:
        child = state.clone()
        child.apply(action)
        value = evaluate(child, seat)
        if value > best_value + 1e-9:
            best_value = value
            best = [action]
        elif abs(value - best_value) <= 1e-9:
            best.append(action)
    return [rng.choice(best)]
