"""Stripes! policy: mobility search, one ply in the opening, alpha-beta once options run low.

Why mobility: the game is lost by the first player who cannot colour a stripe; the cell counts
only fill the record. So a good move keeps own stripes available and takes the opponent's away:
colour across the cells their next stripes need (only cells near their own stripes), and do
not wall in your own anchors. The measure is the number of cells each player could colour next
(the union of their legal stripes), which, unlike the raw stripe count, does not overrate one
long free line with dozens of sub-stripes. When either side is down to a few options the
search looks several plies deep, because then the exact order of who runs out first decides.
Once the opponent is stuck the game is won and the policy just colours its longest stripe.
"""

from __future__ import annotations

import random

from arena.games.base import State

W_THEIRS = 1.0
MODE = "cells"  # "cells" (reachable cells) or "count" (legal stripes)
DEEP_WHEN = 6  # search deeper when a side has at most this many reachable units
DEEP_DEPTH = 1
WIN = 1e6
TOP_K = 8  # candidates re-scored by the solo-reserve estimate
RESERVE_CAP = 12
W_RESERVE = 10.0


def _reserve(state, seat: int, cap: int) -> int:
    """How many stripes `seat` could still colour if the other player never moved again,
    greedily taking a shortest legal stripe each time (short stripes use the fewest cells)."""
    t = state.solo_copy(seat)
    n = 0
    while n < cap:
        options = t.legal_stripes(seat)
        if not options:
            break
        t.apply_stripe(min(options, key=len))
        n += 1
        if t.is_terminal():
            break
    return n


def _measure(stripes: list[tuple[int, ...]]) -> int:
    if MODE == "count":
        return len(stripes)
    cells = set()
    for s in stripes:
        cells.update(s)
    return len(cells)


def _evaluate(state, seat: int) -> float:
    r = state.result()
    if r is not None:
        return WIN if r.winner == seat else -WIN
    loser = state.loser()
    if loser is not None:
        return WIN if loser != seat else -WIN
    mine = state.legal_stripes(seat)
    if not mine and state.current_player() == seat:
        return -WIN
    theirs = state.legal_stripes(1 - seat)
    return _measure(mine) - W_THEIRS * _measure(theirs)


def _search(state, seat: int, depth: int, alpha: float, beta: float) -> float:
    """Alpha-beta over whole stripes; leaves use `_evaluate`, decided games score +-WIN."""
    if depth == 0 or state.is_terminal() or state.loser() is not None:
        return _evaluate(state, seat)
    mover = state.current_player()
    legal = state.legal_actions()
    if mover == seat:
        value = -WIN
        for a in legal:
            child = state.clone()
            child.apply(a)
            value = max(value, _search(child, seat, depth - 1, alpha, beta))
            alpha = max(alpha, value)
            if alpha >= beta:
                break
        return value
    value = WIN
    for a in legal:
        child = state.clone()
        child.apply(a)
        value = min(value, _search(child, seat, depth - 1, alpha, beta))
        beta = min(beta, value)
        if alpha >= beta:
            break
    return value


def choose_turn(state: State, rng: random.Random) -> list[str]:
    seat = state.current_player()
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal
    if state.loser() == 1 - seat:
        # the game is won: colour as many cells as possible, biggest stripe first
        return [max(legal, key=lambda a: (_length(state, a), rng.random()))]
    children = []
    for action in legal:
        child = state.clone()
        child.apply(action)
        children.append((_evaluate(child, seat), action, child))
    low = min(_measure(state.legal_stripes(seat)), _measure(state.legal_stripes(1 - seat)))
    if DEEP_DEPTH > 1 and low <= DEEP_WHEN:
        # order by the one-ply value so alpha-beta cuts early, then search each deeper
        children.sort(key=lambda t: -t[0])
        scored = []
        alpha = -WIN - 1
        for _, action, child in children:
            v = _search(child, seat, DEEP_DEPTH - 1, alpha, WIN + 1)
            scored.append((v, action))
            alpha = max(alpha, v)
        children = [(v, a, None) for v, a in scored]
    elif TOP_K > 0:
        children.sort(key=lambda t: -t[0])
        rescored = []
        for v, action, child in children[:TOP_K]:
            if abs(v) < WIN:
                v = (
                    W_RESERVE
                    * (_reserve(child, seat, RESERVE_CAP) - _reserve(child, 1 - seat, RESERVE_CAP))
                    + v
                )
            rescored.append((v, action, child))
        children = rescored
    best_value = max(v for v, _, _ in children)
    best = [a for v, a, _ in children if v >= best_value - 1e-9]
    return [rng.choice(best)]


def _length(state, action: str) -> int:
    ends = action.split("-")
    if len(ends) == 1:
        return 1
    grid = state.geo.grid
    a, b = grid.index[ends[0]], grid.index[ends[1]]
    return abs(grid.cols[a] - grid.cols[b]) + abs(grid.rows[a] - grid.rows[b]) + 1
