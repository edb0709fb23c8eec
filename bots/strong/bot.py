"""The stronger bundled bot: a per-game policy on top of the arena's own rules engine.

Every game has its own heuristic in `policies/<game>.py` (`choose_turn(state, rng) ->
list[str]`, written with the engines). This file only picks the policy for the game in
`hello`, checks what it proposes on a copy of the position, and sends the whole rest of the
turn in one `move`, which is how a bot shows multi-action turns (Papagra's two actions,
Quadraphages' move-announce-move). A game without a policy, or a policy that fails or proposes
something illegal, falls back to random legal actions, logged, so the bot never forfeits
through its own bug.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path

from arena.games import IllegalAction
from protocol.sdk import Resign, run_engine_bot

# `policies` sits next to this file; running `python3 bot.py` puts this directory on sys.path
# already, this covers other ways of starting it (e.g. `python3 bots/strong/bot.py` from a
# different working directory still works, but `-m` or an embedding launcher might not).
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def load_policy(game: str):
    """The policy function for `game`, or None when there is none (yet)."""
    try:
        module = importlib.import_module(f"policies.{game}")
    except ModuleNotFoundError as e:
        if e.name in (f"policies.{game}", "policies"):
            return None
        raise
    return getattr(module, "choose_turn", None)


def random_rest_of_turn(state, rng) -> list[str]:
    """Random legal actions until the turn's mandatory part is done."""
    turn = state.turn_number()
    actions: list[str] = []
    while (
        not state.is_terminal()
        and state.turn_number() == turn
        and state.actions_remaining() > 0
        and not (actions and state.can_end_turn())
    ):
        legal = state.legal_actions()
        if not legal:
            break
        action = rng.choice(legal)
        state.apply(action)
        actions.append(action)
    return actions


def playable_prefix(state, actions: list[str]) -> tuple[list[str], str | None]:
    """The actions that fit into this turn, applied to `state`, and an error for the rest.

    A policy may return more than the turn holds (sending those would be illegal: "the turn
    has ended") or an illegal action; keep what is legal and stop at the first problem.
    """
    turn = state.turn_number()
    played: list[str] = []
    for action in actions:
        # the turn number, not the player: a Stripes winner moves again after a stuck loser
        if state.is_terminal() or state.turn_number() != turn:
            return played, f"policy returned more actions than the turn holds: {actions}"
        try:
            state.apply(action)
        except IllegalAction as e:
            return played, f"policy proposed illegal {action!r}: {e.message}"
        played.append(action)
    return played, None


def choose_turn(state, rng, bot):
    if "policy" not in bot.memory:
        bot.memory["policy"] = load_policy(bot.game)
        if bot.memory["policy"] is None:
            bot.log(f"no policy for {bot.game}; playing random legal actions")
    policy = bot.memory["policy"]
    turn = state.turn_number()
    work = state.clone()
    actions: list[str] = []
    if policy is not None:
        try:
            proposed = policy(state.clone(), rng)
            if isinstance(proposed, str):
                proposed = [proposed]
            actions, problem = playable_prefix(work, list(proposed or []))
            if problem:
                bot.log(problem)
        except Exception:
            bot.log("policy failed, playing random:\n" + traceback.format_exc(limit=3))
            work, actions = state.clone(), []
    # complete the turn's mandatory part at random if the policy left some of it open (but
    # never add optional actions the policy chose not to play)
    if (
        not work.is_terminal()
        and work.turn_number() == turn
        and not (actions and work.can_end_turn())
    ):
        actions += random_rest_of_turn(work, rng)
    if not actions:
        # nothing playable at all: resigning is the only valid reply left
        return Resign("no legal action")
    return actions


if __name__ == "__main__":
    raise SystemExit(run_engine_bot(choose_turn, name="strong", version="1.0", author="arena"))
