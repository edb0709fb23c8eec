"""Test support: a league slot holds its first game's record before committing it.

Put on PYTHONPATH (with ARENA_TEST_HOLD_RECORD=DIR) for a league worker under test: in its
slot processes (arena/league/slot.py), the first record stored in the whole test (the file
DIR/held is created once, exclusively) waits as its transaction begins, before it locks or
writes anything, until the FIFO DIR/release is opened by the test, or forever: the test kills
the slot there, between the game's end and its commit. The game, its record, the claim and the
rest are the arena's own; only the moment is held, which no timing could hit reliably. (The
ledger's function is wrapped, not the slot's: the slot runs as `__main__`, a module of its
own.)
"""

import os

_SLOT = b"arena.league.slot"


def _is_slot() -> bool:
    with open("/proc/self/cmdline", "rb") as f:
        return _SLOT in f.read().split(b"\0")


_DIR = os.environ.get("ARENA_TEST_HOLD_RECORD")

if _DIR and _is_slot():
    from arena.league.db import ledger as _ledger

    _real = _ledger.lock_ratings

    def lock_ratings(*args, **kwargs):
        try:
            os.close(os.open(os.path.join(_DIR, "held"), os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return _real(*args, **kwargs)
        with open(os.path.join(_DIR, "release"), "rb"):  # blocks until the test opens it
            pass
        return _real(*args, **kwargs)

    _ledger.lock_ratings = lock_ratings
