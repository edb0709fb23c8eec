"""Bot sessions: one bot process kept between games, where the bot and the operator allow it.

A bot that says `sessions: true` in `ready` can play several games in one process: after `end`
it receives a new `hello` instead of the end of its stdin (docs/protocol.md, "Sessions"). Where
the operator allows it (`reuse` in a tournament config), the referee does not start such a bot
again for its next game but takes its idle process from a `SessionPool`. The rules:

- a process serves one bot version only: the pool's key is the bot's command, directory,
  executable hash, isolation, affinity and limits, so a rebuilt binary gets a new process;
- it sees one game at a time: `take` removes it from the pool, only a cleanly finished game
  gives it back, and a pool belongs to one tournament slot (one game at a time);
- any failure ends it: a forfeit of any kind, an exit, output between games, a missed `end`,
  an idle process found dead or broken; the bot's next game starts a fresh process;
- the sandbox still holds: the process keeps its cgroup (memory and pids limits), uid, and
  namespaces for its whole life. The kernel's CPU-seconds limit (RLIMIT_CPU, a safety net
  behind the referee's clocks, one game's generous `cpu_budget`) counts the process's CPU
  time over all its games. So before each game the limit is renewed to the CPU time used so
  far plus one game's budget (prlimit; needs CAP_SYS_RESOURCE for a bot of another uid).
  Where that is not permitted (root in most containers), a process that may be kept is
  started with `SESSION_CPU_GAMES` budgets instead and retired before a game whose whole
  budget it could no longer afford: a kept process never meets the limit for having played
  many games, and no game can use more than that many budgets of CPU time;
- an idle process is stopped (SIGSTOP to its process group) as soon as a game of its slot
  starts without it (`settle`), until the game that takes it, so it does not compete for the
  CPU with the games of its slot (a child that left the group with setsid is not stopped, but
  stays in the cgroup and dies with the process). Not at the end of its game: the next game
  often takes the same process back, and a signal to a process costs a wake-up of it, so a
  pair of bots playing game after game is never signalled;
- the record of each game stays complete: `ready.session_game` says which game of its
  process this was, only the stderr written during the game is kept, and `exits` says the
  process was kept (`kept: true`) instead of giving an exit status.

Only the `process` isolation mode has sessions (a docker bot is started per game).
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from arena.referee.accounting import OwnClock, open_own_schedstat

if TYPE_CHECKING:
    from collections.abc import Callable

    from arena.referee.channel import BotChannel
    from arena.sandbox import BotProcess, LaunchSpec

#: RLIMIT_CPU of a process that may be kept, in games' CPU budgets, where the limit of a
#: running process cannot be renewed
SESSION_CPU_GAMES = 4
_CLK_TCK = os.sysconf("SC_CLK_TCK")
#: launch specs a pool remembers (SessionPool.launch_spec)
MAX_SHAPES = 64
#: idle processes kept per pool at most (a slot needs two; self-play and varied pairings more)
MAX_IDLE = 8


@dataclass
class Session:
    """A bot process and its channel, kept across games."""

    key: tuple[Any, ...]
    proc: BotProcess
    channel: BotChannel
    #: the RLIMIT_CPU the process was started with (None: no limit)
    cpu_limit: int | None
    #: games this process has started (1 during its first game)
    games: int = 0
    #: SIGSTOPped while idle (SessionPool.settle), to be continued by the game that takes it
    stopped: bool = False

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) of the bot's main process so far: what RLIMIT_CPU counts."""
        pid = getattr(self.proc, "pid", None)
        if pid is None:
            return None
        try:
            # os-level calls: a buffered file object cost more than the read, every game
            fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
            try:
                data = os.read(fd, 4096)
            finally:
                os.close(fd)
            fields = data.rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return None
        # after the command name: state is field 3, utime 14 and stime 15 (proc(5))
        return (int(fields[11]) + int(fields[12])) / _CLK_TCK

    def usable(self) -> bool:
        """Alive, not broken, nothing unread: fit for another game."""
        ch = self.channel
        return (
            self.proc.exit_info() is None
            and ch.error is None
            and not ch.eof
            and ch.pending_messages() == 0
        )

    def renew_cpu_limit(self, cpu_budget: int | None) -> bool:
        """Give the process one game's CPU budget from now on, as a fresh process would have:
        RLIMIT_CPU counts its CPU time over all its games, so the limit is raised to what it
        used so far plus `cpu_budget` (prlimit, needs root for a bot of another uid). False if
        that is impossible and what is left of the old limit is less than a game's budget:
        the process is then retired."""
        if self.cpu_limit is None or cpu_budget is None:
            return True
        used = self.cpu_seconds()
        if used is None:
            return False
        limit = math.ceil(used) + cpu_budget
        if limit == self.cpu_limit:
            return True  # renewed to this already (a bot's game costs it little CPU)
        try:
            resource.prlimit(self.proc.pid, resource.RLIMIT_CPU, (limit, limit + 1))  # type: ignore[attr-defined]
        except (OSError, ValueError, AttributeError):
            return used + cpu_budget + 1 <= self.cpu_limit
        self.cpu_limit = limit
        return True


@dataclass
class SessionPool:
    """Idle bot processes of one tournament slot, and the nursery their helper tasks run in
    (the stdout reader, stderr drain and exit watcher outlive a game)."""

    nursery: trio.Nursery
    idle: list[Session] = field(default_factory=list)
    #: launch specs by the settings they were made from, with their text (see `launch_spec`)
    shapes: dict[tuple[Any, ...], tuple[LaunchSpec, str]] = field(default_factory=dict)
    #: processes started, and games that reused a process (for benchmarks and tests)
    started: int = 0
    reused: int = 0
    #: the referee's own clock for the slot's games, one after another in this run (opening
    #: it and adding it to the run was a measured part of every short game)
    own: OwnClock | None = None

    def own_clock(self) -> OwnClock:
        """The slot's OwnClock (arena/referee/accounting.py), made at its first game."""
        if self.own is None:
            self.own = OwnClock(open_own_schedstat())
        return self.own

    def launch_spec(
        self, settings: tuple[Any, ...], make: Callable[[], LaunchSpec]
    ) -> tuple[LaunchSpec, str]:
        """The launch spec `make` returns for these settings (bot, isolation, affinity,
        limits, time control: all it depends on), and its text, which keys the kept
        processes: made once per settings rather than for every game."""
        try:
            found = self.shapes.get(settings)
        except TypeError:  # a setting that cannot be hashed: made every time
            launch = make()
            return launch, repr(launch)
        if found is None:
            if len(self.shapes) >= MAX_SHAPES:
                self.shapes.clear()  # the league: other bots every game
            launch = make()
            found = self.shapes[settings] = (launch, repr(launch))
        return found

    def take(self, key: tuple[Any, ...], cpu_budget: int | None) -> Session | None:
        """An idle process for this bot version, if one is fit; the unfit are retired."""
        for session in list(self.idle):
            if session.key != key:
                continue
            self.idle.remove(session)
            if session.stopped:
                _signal_group(session, signal.SIGCONT)
                session.stopped = False
            if session.usable() and session.renew_cpu_limit(cpu_budget):
                session.games += 1
                self.reused += 1
                return session
            self.nursery.start_soon(session.proc.aclose)
        return None

    def give_back(self, session: Session) -> None:
        """A cleanly finished game's process, for the bot's next game (stopped by the next
        game's `settle` unless that game takes it)."""
        session.channel.detach()
        self.idle.append(session)
        while len(self.idle) > MAX_IDLE:
            self.nursery.start_soon(self.idle.pop(0).proc.aclose)

    def settle(self) -> None:
        """A game has taken its processes: stop (SIGSTOP to the process group) every idle one
        not stopped yet, so that none can use the CPU the game is timed on while it plays;
        SIGKILL still ends a stopped process."""
        for session in self.idle:
            if not session.stopped:
                _signal_group(session, signal.SIGSTOP)
                session.stopped = True

    async def aclose(self) -> None:
        """Kill every idle process (the slot is closing)."""
        idle, self.idle = self.idle, []
        if self.own is not None:
            self.own.close()
            self.own = None
        with trio.CancelScope(shield=True):
            for session in idle:
                await session.proc.aclose()


def _signal_group(session: Session, sig: int) -> None:
    """Signal the bot's process group (its own session: the pid is the group's id)."""
    pid = getattr(session.proc, "pid", None)
    if pid is not None and session.proc.exit_info() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
