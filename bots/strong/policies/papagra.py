"""Papagra policy: a sampled two-action search on marks, plus the repetition rule as a weapon.

Why this shape: a mark moves only when an action *creates* a matched group, and two actions per
turn are what it takes to build a group and its matching empty region (or to make one and break
it again, which still counts). So the policy looks at the whole turn: every first action once,
and for a random sample of first actions every second action, with the engine itself judging
the marks (clone + apply). Against weak play the board keeps changing and such chances come up
often; taking each one lifts the mark well above what random play reaches.

The end-of-turn evaluation adds two things the marks alone miss:
- the repetition rule (third occurrence of an arrangement at the end of a turn ends the game,
  the leader wins): a leader that hands back the arrangement it was given (add a stone and take
  it away again) wins the moment the opponent does the same, and such a "null turn" also never
  creates an opponent's group at the end; a trailing player avoids arrangements already seen
  twice.
What the opponent might create on later turns is left out: too uncertain to be worth the time.

Budget: a time limit on the sampled part keeps a turn at a few milliseconds on the default
board and never near a second.
"""

from __future__ import annotations

import random
import time

from arena.games.base import State

WIN = 1e6
# how many first actions get a full second-action search, and the time the search may take
FULL_SAMPLES = 10
BUDGET_S = 0.04
# on very large boards even one look at every first action may take long: stop there
HARD_S = 0.4


def _value(state: State, me: int, start_key: bytes, rng: random.Random) -> float:
    """End-of-turn value for `me`: game result, then the lead and the marks, then the
    repetition trap; a little noise breaks ties so the play does not freeze."""
    r = state.result()
    if r is not None:
        if r.winner is None:
            return 0.0
        return WIN if r.winner == me else -WIN
    marks = state.scores()
    mine, theirs = marks[me], marks[1 - me]
    v = 100.0 * (mine > theirs) - 100.0 * (theirs > mine) + 10.0 * (mine - theirs)
    seen = state.repetition_count()  # type: ignore[attr-defined]
    if mine > theirs:
        if state.key() == start_key:
            v += 2.0  # a null turn: the opponent repeating it would end the game in our favour
    elif seen >= 2:
        v -= 5.0  # one more occurrence ends the game while we do not lead
    return v + rng.random() * 0.01


def _inverse(action: str) -> str:
    return action[1:] if action.startswith("-") else "-" + action


def choose_turn(state: State, rng: random.Random) -> list[str]:
    """The rest of the current player's turn."""
    me = state.current_player()
    turn = state.turn_number()
    start_key = state.key()
    deadline = time.perf_counter() + BUDGET_S
    hard_stop = time.perf_counter() + HARD_S
    if state.can_end_turn():  # called for the optional third action only
        return _optional_removal(state, [], me, start_key, rng)

    def turn_over(s: State) -> bool:
        return s.is_terminal() or s.turn_number() != turn

    def finish(s: State, acts: list[str]) -> tuple[float, list[str]]:
        """Value of a position reached inside the turn, as if the turn ended there."""
        if turn_over(s):
            return _value(s, me, start_key, rng), acts
        if s.can_end_turn():
            ended = s.clone()
            ended.end_turn()
            return _value(ended, me, start_key, rng), acts
        return -2 * WIN, acts  # unfinished mandatory part: never chosen over a finished one

    first = state.legal_actions()
    rng.shuffle(first)
    best_v, best = -4 * WIN, first[:1]
    full = 0
    for a1 in first:
        if time.perf_counter() > hard_stop:
            break
        s1 = state.clone()
        s1.apply(a1)
        if turn_over(s1) or s1.can_end_turn():
            v, acts = finish(s1, [a1])
            if v > best_v:
                best_v, best = v, acts
            continue
        if full < FULL_SAMPLES and time.perf_counter() < deadline:
            full += 1
            seconds = s1.legal_actions()
        else:
            # cheap completion: undo the first action, or one random second action
            seconds = [_inverse(a1)]
            rest = s1.legal_actions()
            seconds.append(rng.choice(rest))
            seconds = [a for a in seconds if a in rest]
        for a2 in seconds:
            s2 = s1.clone()
            s2.apply(a2)
            v, acts = finish(s2, [a1, a2])
            if v > best_v:
                best_v, best = v, acts
    return best + _optional_removal(state, best, me, start_key, rng)


def _optional_removal(
    state: State, acts: list[str], me: int, start_key: bytes, rng: random.Random
) -> list[str]:
    """The extra-removal variant's optional third action: one stone, only when it improves
    the end-of-turn value (searched for the chosen two actions only, to keep the cost flat)."""
    s = state.clone()
    for a in acts:
        s.apply(a)
    if s.is_terminal() or not s.can_end_turn():
        return []
    ended = s.clone()
    ended.end_turn()
    best_v, best = _value(ended, me, start_key, rng), []
    for a in s.legal_actions():
        if a.count("-") != 1:
            continue
        t = s.clone()
        t.apply(a)
        v = _value(t, me, start_key, rng)
        if v > best_v:
            best_v, best = v, [a]
    return best
