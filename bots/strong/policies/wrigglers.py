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

A branched group is valued by what removing its overcrowded stones would leave, because that
removal is always available later (and under the default rules the game cannot end before it).

Search: every action is tried on a clone and evaluated (one ply). Once the board is down to
`MC_EMPTIES` empty points the tempo fight decides, which no static count captures well, so the
best `MC_TOP` actions are re-ranked by short Monte Carlo playouts to the end: the policy's own
side plays a cheap "repair, or add where no chain is hurt" rule, the opponent plays uniformly
at random (a crude model, but enough for the playouts to show who gets forced first).
Under `ludii_rules` the same applies, and a pass that wins on the spot scores as a win.
"""

from __future__ import annotations

import random

from arena.games.base import State
from arena.games.errors import IllegalAction

W_GROWTH = 0.3
W_BALANCE = 0.5
W_POISON = 1.5
W_SPARE = 0.6
SPARE_CAP = 12


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
            chains.extend(_repaired(cells, own, nbrs))
        else:
            chains.append((len(cells), cells))
    chains.sort(key=lambda t: -t[0])
    top = chains[:2]
    score = top[0][0] * top[1][0] if len(top) == 2 else 0
    growth = sum(t[0] for t in top)
    balance = min(t[0] for t in top) if len(top) == 2 else 0
    poison = set()
    for size, cells in top:
        if size < 3:
            continue
        for c in cells:
            if own[c] == 2:
                for n in nbrs[c]:
                    if board[n] == 0 and own[n] <= 2:
                        poison.add(n)
    spare = min(empties_ok - len(poison) + dead_removals, SPARE_CAP)
    return (
        score + W_GROWTH * growth + W_BALANCE * balance - W_POISON * len(poison) + W_SPARE * spare
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


MC_EMPTIES = 45  # run rollouts once at most this many points are empty (0: never)
MC_TOP = 8
MC_ROLLOUTS = 10


def _rollout_action(state, rng: random.Random) -> str:
    """A cheap, sensible move for rollouts: repair a branch or add where no chain is hurt."""
    seat = state.current_player()
    board = state.board()
    own = state.neighbour_counts(seat)
    nbrs = state.grid.neighbours
    names = state.grid.names
    mark = seat + 1
    good: list[int] = []
    poor: list[int] = []
    removals: list[int] = []
    for c, v in enumerate(board):
        if v == 0:
            k = own[c]
            if k == 0:
                good.append(c)
            elif k == 1:
                n = next(n for n in nbrs[c] if board[n] == mark)
                (good if own[n] <= 1 else poor).append(c)
            elif k == 2:
                poor.append(c)
        elif v == mark and own[c] >= 3:
            removals.append(c)
    if removals and (not good or rng.random() < 0.5):
        return "-" + names[rng.choice(removals)]
    if good:
        return names[rng.choice(good)]
    if poor:
        return names[rng.choice(poor)]
    return "pass"


def _rollout(state, seat: int, rng: random.Random) -> float:
    """Play to the end: `seat` with the cheap policy, the opponent uniformly at random."""
    s = state.clone()
    while not s.is_terminal():
        if s.current_player() == seat:
            try:
                s.apply(_rollout_action(s, rng))
                continue
            except IllegalAction:  # a forbidden pass, or a removal banned by `ludii_rules`
                pass
        s.apply(rng.choice(s.legal_actions()))
    r = s.result()
    win = 1.0 if r.winner == seat else (0.5 if r.winner is None else 0.0)
    return win + 0.001 * (r.scores[seat] - r.scores[1 - seat])


def choose_turn(state: State, rng: random.Random) -> list[str]:
    seat = state.current_player()
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal
    scored = []
    for action in legal:
        child = state.clone()
        child.apply(action)
        scored.append((evaluate(child, seat), action, child))
    best_value = max(v for v, _, _ in scored)
    empties = state.board().count(0)
    if MC_EMPTIES and empties <= MC_EMPTIES and best_value < 1e5:
        scored.sort(key=lambda t: -t[0])
        results = []
        for _, action, child in scored[:MC_TOP]:
            mean = sum(_rollout(child, seat, rng) for _ in range(MC_ROLLOUTS)) / MC_ROLLOUTS
            results.append((mean, action))
        return [max(results)[1]]
    best = [a for v, a, _ in scored if v >= best_value - 1e-9]
    return [rng.choice(best)]
