"""The strong bot on the real engines: whole turns in one move, legal, with safe fallbacks."""

from __future__ import annotations

import random
import shutil
import sys
import textwrap

import pytest

from arena.games import GAME_NAMES, make_game

from .botpipe import BOTS, BotPipe, end_message, hello


def engine_or_skip(game: str, options=None):
    try:
        return make_game(game, options)
    except ModuleNotFoundError as e:
        pytest.skip(f"the {game} engine is not available yet ({e})")


def turn_message(state, seat: int, last_turn) -> dict:
    return {
        "type": "turn",
        "turn": state.turn_number(),
        "seat": seat,
        "position": state.describe(),
        "last_turn": last_turn,
        "turn_actions": state.turn_actions(),
        "actions_remaining": state.actions_remaining(),
        "can_end_turn": state.can_end_turn(),
        "clocks": [None, None],
        "deadline": 10.0,
    }


def play(
    bot: BotPipe,
    game: str,
    bot_seat: int,
    bot_turns: int,
    seed: int = 5,
    to_the_end: bool = False,
    options: dict | None = None,
) -> list[list[str]]:
    """Referee by hand: the bot against random play; returns the bot's moves (one per turn)."""
    state = engine_or_skip(game, options).new_initial_state()
    rng = random.Random(seed)
    bot.send(hello(seat=bot_seat, seed=seed, game=game, options=options or {}))
    ready = bot.recv()
    assert ready["type"] == "ready" and ready["name"] == "strong"
    moves: list[list[str]] = []
    last_turn = None
    while len(moves) < bot_turns and not state.is_terminal():
        seat, turn = state.current_player(), state.turn_number()
        if seat == bot_seat:
            bot.send(turn_message(state, seat, last_turn))
            reply = bot.recv()
            assert reply["type"] == "move", reply
            for action in reply["actions"]:
                # the turn number, not the player: a Stripes winner moves again and again
                assert not state.is_terminal() and state.turn_number() == turn, (
                    f"more actions than the turn holds: {reply}"
                )
                state.apply(action)  # raises IllegalAction on an illegal one
            if not state.is_terminal() and state.turn_number() == turn:
                assert state.can_end_turn(), f"turn left unfinished: {reply}"
                state.end_turn()
            moves.append(reply["actions"])
        else:
            actions = []
            while not state.is_terminal() and state.turn_number() == turn:
                if actions and state.can_end_turn():
                    state.end_turn()
                    break
                action = rng.choice(state.legal_actions())
                state.apply(action)
                actions.append(action)
            last_turn = {"seat": seat, "actions": actions}
    assert state.is_terminal() or not to_the_end
    bot.send(end_message())
    assert bot.close_and_wait() == 0
    return moves


@pytest.fixture
def start_strong(tmp_path):
    started: list[BotPipe] = []

    def start(encoding: str = "msgpack", bot_dir=BOTS / "strong") -> BotPipe:
        bot = BotPipe([sys.executable, "bot.py"], bot_dir, encoding)
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.kill()


@pytest.mark.parametrize("game", GAME_NAMES)
@pytest.mark.parametrize("encoding", ["msgpack", "json"])
def test_strong_bot_plays_whole_legal_turns(start_strong, game, encoding):
    bot = start_strong(encoding)
    moves = play(bot, game, bot_seat=1, bot_turns=3)
    assert moves, "the game ended before the bot moved"


@pytest.mark.parametrize("game", ["stripes", "wrigglers", "quadraphages", "hexaphage"])
@pytest.mark.parametrize("seat", [0, 1])
def test_strong_bot_plays_whole_games(start_strong, game, seat):
    """To the end, including Stripes' winner colouring on alone after the loser is stuck."""
    bot = start_strong("msgpack")
    play(bot, game, bot_seat=seat, bot_turns=10_000, seed=seat, to_the_end=True)


# --- fallbacks: a copy of the bot with deliberately broken policies ----------------------------

BROKEN_POLICIES = {
    # raises: the bot must log the traceback and play random legal actions
    "stripes": "def choose_turn(state, rng):\n    raise RuntimeError('policy bug')\n",
    # illegal first action: logged, replaced by random legal actions
    "wrigglers": "def choose_turn(state, rng):\n    return ['zz99']\n",
    # the whole turn and one action too many: the turn is kept, the extra dropped
    "papagra": textwrap.dedent(
        """
        def choose_turn(state, rng):
            seat, out = state.current_player(), []
            while state.current_player() == seat and not state.is_terminal():
                out.append(state.legal_actions()[0])
                state.apply(out[-1])
                if state.can_end_turn():
                    break
            return out + ["extra"]
        """
    ),
}


@pytest.fixture
def broken_strong(tmp_path):
    shutil.copy(BOTS / "strong" / "bot.py", tmp_path / "bot.py")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "__init__.py").write_text("")
    for game, source in BROKEN_POLICIES.items():
        (tmp_path / "policies" / f"{game}.py").write_text(source)
    return tmp_path


@pytest.mark.parametrize(
    ("game", "expected_log"),
    [
        ("stripes", "policy bug"),
        ("wrigglers", "policy proposed illegal 'zz99'"),
        ("papagra", "more actions than the turn holds"),
        ("hexaphage", "no policy for hexaphage"),
    ],
)
def test_strong_bot_falls_back_to_random(start_strong, broken_strong, game, expected_log):
    bot = start_strong("msgpack", broken_strong)
    moves = play(bot, game, bot_seat=0, bot_turns=2)
    assert len(moves) == 2
    assert any(expected_log in line for line in bot.logs), bot.logs
    if game == "papagra":
        # pink's first turn is one stone, then two actions a turn; the extra is dropped
        assert [len(m) for m in moves] == [1, 2]


# Papagra with `extra_removals`: the policy decides about the optional third action; the bot
# neither drops it nor adds one of its own.
EXTRA_POLICY = textwrap.dedent(
    """
    def choose_turn(state, rng):
        turn, out = state.turn_number(), []
        while state.turn_number() == turn and not state.is_terminal():
            if state.can_end_turn():
                if EXTRA:
                    out.append(rng.choice(state.legal_actions()))
                break
            out.append(rng.choice(state.legal_actions()))
            state.apply(out[-1])
        return out
    """
)


@pytest.mark.parametrize("extra", [True, False])
def test_strong_bot_optional_actions_follow_the_policy(start_strong, tmp_path, extra):
    shutil.copy(BOTS / "strong" / "bot.py", tmp_path / "bot.py")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "__init__.py").write_text("")
    (tmp_path / "policies" / "papagra.py").write_text(f"EXTRA = {extra}\n" + EXTRA_POLICY)
    bot = start_strong("msgpack", tmp_path)
    moves = play(bot, "papagra", bot_seat=1, bot_turns=4, options={"extra_removals": 2})
    assert [len(m) for m in moves] == [3 if extra else 2] * 4
    assert all(m[2].startswith("-") for m in moves) if extra else True
