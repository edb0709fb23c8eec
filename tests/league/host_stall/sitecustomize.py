"""Test support: every game this process's referee plays ends in a host stall.

Put on PYTHONPATH (with ARENA_TEST_HOST_STALL=1) for a league worker or server under test: in
the processes that play games (a worker's slots, the server's referee workers; not the server
itself, whose validation games must pass) the referee plays each game for real (real bots in
the sandbox), then raises `HostStall`, as the fair referee does when the host, not a bot, made
a reply late (issue 19). The rest of the path is the arena's own: the referee worker's void
reply, the slot's or executor's void kind, the store, the fleet's counts. Only the verdict is
forced: a host stall on demand cannot be made reliably on a loaded test machine.
"""

import os

_PLAYERS = (b"arena.league.slot", b"arena.workers.child")


def _plays_games() -> bool:
    with open("/proc/self/cmdline", "rb") as f:
        argv = f.read().split(b"\0")
    return any(m in argv for m in _PLAYERS)


if os.environ.get("ARENA_TEST_HOST_STALL") == "1" and _plays_games():
    import arena.referee
    import arena.referee.match as _match

    HostStall = getattr(_match, "HostStall", None)
    if HostStall is None:  # a referee without fair clocks: the same name and base

        class HostStall(_match.RefereeFault):
            pass

    _real = arena.referee.play_match

    async def play_match(*args, **kwargs):
        await _real(*args, **kwargs)
        raise HostStall("host_stall: (test) the host kept the bot from a CPU for 0.500 s")

    arena.referee.play_match = play_match
