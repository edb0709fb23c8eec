"""A uniformly random bot on the Python SDK: the smallest complete bot, and a sparring partner.

It knows nothing about any game: it asks the referee for the legal actions in every turn and
picks one. Its randomness comes from the SDK's RNG, seeded from `hello.seed` and the seat, so
a tournament of such bots replays identically for the same seed.
"""

from protocol.sdk import run_bot


def choose(turn, bot):
    # One action per reply: after it the referee either asks again (mandatory actions left)
    # or ends the turn (only optional ones left), so the bot never needs to count.
    return bot.rng.choice(turn["legal"])


if __name__ == "__main__":
    raise SystemExit(run_bot(choose, name="random-py", version="1.0", author="arena"))
