"""A random bot whose name and logs are HTML: pages that show them must print them as text."""

from protocol.sdk import run_bot

LOGS = (
    "<script>alert('log')</script>",
    '<img src=x onerror="alert(2)"> & </div></script><b>bold?</b>',
    "</textarea><svg onload=alert(3)>",
)


def choose(turn, bot):
    bot.log(LOGS[turn["turn"] % len(LOGS)])
    return bot.rng.choice(turn["legal"])


if __name__ == "__main__":
    raise SystemExit(run_bot(choose, name="<script>alert(1)</script>", version="<i>v</i>"))
