"""Referee speed: round trip per turn through the referee against a raw ping-pong, same run.

Three measurements, all with the same instant-reply bot program (benchmarks/
referee_instant_bot.py) started by the same sandbox launcher:

1. raw ping-pong: this process writes a msgpack `turn`-sized message to the bot's stdin and
   reads its `move` back, over and over, with nothing else (trio streams, like the referee);
2. refereed null game: `play_match` on a do-nothing game (one action per turn, a fixed
   9x9-board-sized position, no rules) so that only the referee's own work is measured:
   framing, validation, clocks, record, scheduling;
3. refereed real games between two instant bots (engine work included, reported separately).

Figures: median round trip per turn (time between the completion of consecutive turns),
the bots' share of it (write-complete to reply-arrived, as the clocks measure it), the
referee's overhead per turn (round trip minus the bot's share), the referee's CPU time per turn
(CPU time of this process per turn, start-up excluded) and the ratio round trip / raw ping-pong.
Targets (issue): overhead <= 100 us median per turn; round trip <= 3x the raw ping-pong.

4. (first, issue 13) all on one CPU: the referee with the instant C bot (benchmarks/
   instant_bot.c, JSON Lines) on both sides, Wrigglers 19x19 with legal lists on, against the
   raw pipe round trip of two C processes (one byte each way) measured in the same rounds.
   Cost per turn = the game's wall time from the first turn's completion to the last one's,
   divided by the turns in between. Target: <= 30x the raw pipe round trip.

Every section also plays the same games with the per-reply accounting of issue 19 switched off
(MatchConfig.accounting=False), interleaved, and prints its cost per turn (target <= 10%).

    python benchmarks/referee.py [--turns 3000] [--rounds 5] [--games papagra,wrigglers]
                                 [--c-rounds 5] [--only-c]
"""

from __future__ import annotations

import argparse
import itertools
import os
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's arena

import arena.games as games_registry
from arena.games.base import Game, OptionSpec, Result, State, parse_int
from arena.referee import MatchConfig, TimeControl, bot_from_command, play_match
from arena.sandbox import LaunchSpec, launcher_for
from protocol.framing import Decoder, Encoder

HERE = Path(__file__).resolve().parent
BOT = HERE / "referee_instant_bot.py"

_CELLS = [f"{c}{r}" for r in range(1, 10) for c in "abcdefghi"]
_POSITION = {
    "game": "null",
    "options": {},
    "board": {"kind": "square", "size": 9, "cells": _CELLS},
    "cells": {c: ("x" if i % 3 == 0 else "o") for i, c in enumerate(_CELLS) if i % 2},
    "scores": [0, 0],
    "result": None,
}


class NullState(State):
    """A game with no rules: every turn is the single action `x`; ends after max_turns."""

    def __init__(self, game: NullGame) -> None:
        self.game = game
        self.turn = 1
        self._result: Result | None = None

    def current_player(self) -> int | None:
        return None if self._result else (self.turn - 1) % 2

    def turn_number(self) -> int:
        return self.turn

    def actions_remaining(self) -> int:
        return 0 if self._result else 1

    def turn_actions(self) -> list[str]:
        return []

    def legal_actions(self) -> list[str]:
        return [] if self._result else ["x"]

    def apply(self, action: str) -> None:
        self.turn += 1
        if self.turn > self.game.options["max_turns"]:
            self._result = Result(None, "max_turns", (0, 0), "done")

    def is_terminal(self) -> bool:
        return self._result is not None

    def result(self) -> Result | None:
        return self._result

    def scores(self) -> tuple[int, int]:
        return (0, 0)

    def _set_result(self, result: Result) -> None:
        self._result = result

    def describe(self) -> dict[str, Any]:
        return _POSITION

    def render_text(self) -> str:
        return f"turn {self.turn}"

    def render_svg(self) -> str:
        return "<svg/>"

    def key(self) -> Any:
        return self.turn

    def clone(self) -> NullState:
        s = NullState(self.game)
        s.turn, s._result = self.turn, self._result
        return s


class NullGame(Game):
    name = "null"
    title = "Null"
    colours = ("first", "second")
    option_specs = (OptionSpec("max_turns", 1000, "turns", parse_int(1)),)

    def new_initial_state(self) -> NullState:
        return NullState(self)

    def state_from_description(self, description: Any) -> NullState:
        raise NotImplementedError


def turn_message(seat: int, turn: int) -> dict[str, Any]:
    return {
        "type": "turn",
        "turn": turn,
        "seat": seat,
        "position": _POSITION,
        "last_turn": {"seat": 1 - seat, "actions": ["x"]},
        "turn_actions": [],
        "actions_remaining": 1,
        "can_end_turn": False,
        "clocks": [10.0, 10.0],
        "deadline": 10.0,
    }


def _alive(chunk: bytes) -> bytes:
    """A bot's output, or an error if it ended (a busy loop on EOF otherwise)."""
    if not chunk:
        raise SystemExit("the benchmark bot closed its stdout (did it fail to start? see stderr)")
    return chunk


async def raw_pingpong(n: int, use_trio: bool, players: int = 2) -> list[float]:
    """Round trips of a turn-sized message with no referee logic at all, alternating between
    `players` bots as a game does: through trio streams (what the referee is built on) or with
    plain blocking syscalls (the floor)."""
    spec = LaunchSpec("instant", (sys.executable, str(BOT), "msgpack"))
    enc = Encoder("msgpack")
    decs = [Decoder("msgpack") for _ in range(players)]
    times = []
    clock = time.perf_counter
    async with trio.open_nursery() as nursery:
        bots = [await launcher_for("process").start(spec, nursery) for _ in range(players)]
        try:
            for i in range(n + 50):
                seat = i % players
                bot, dec = bots[seat], decs[seat]
                data = enc.encode(turn_message(seat, i + 1))
                got: list[dict] = []
                t0 = clock()
                if use_trio:
                    await bot.stdin.send_all(data)
                    while not got:
                        got = dec.feed(_alive(await bot.stdout.receive_some(65536)))
                else:
                    fd_out = bot.stdout.fileno()  # type: ignore[attr-defined]
                    os.write(bot.stdin.fileno(), data)  # type: ignore[attr-defined]
                    while not got:
                        select.select([fd_out], [], [])
                        got = dec.feed(_alive(os.read(fd_out, 65536)))
                if i >= 50:  # warm-up excluded
                    times.append(clock() - t0)
        finally:
            with trio.CancelScope(shield=True):
                for bot in bots:
                    await bot.aclose()
    return times


async def refereed(
    game: str, options: dict[str, Any], legal: bool, accounting: bool = True
) -> dict[str, Any]:
    argv = f"{sys.executable} {BOT} msgpack" + (" legal" if legal else "")
    bots = (bot_from_command(argv), bot_from_command(argv))
    config = MatchConfig(
        game=game,
        options=options,
        bots=bots,
        time_control=TimeControl(startup=20.0, base=1000.0),
        end_grace=1.0,
        accounting=accounting,
    )
    cpu_marks: list[float] = []

    def observer(event: Any) -> None:
        # CPU time of this process at the end of every turn: start-up is excluded below
        cpu_marks.append(time.process_time())

    record = await play_match(config, observer)
    turns = record.turns
    # the first turns include process start-up effects: skip a few
    ts = [t["t"] for t in turns]
    rts = [b - a for a, b in itertools.pairwise(ts[5:])]
    bot_share = [t["elapsed"] for t in turns[6:]]
    return {
        "turns": len(turns),
        "reason": record.result["reason"],
        "rts": rts,
        "bot": bot_share,
        "overhead": [rt - e for rt, e in zip(rts, bot_share, strict=False)],
        "cpu_per_turn": (cpu_marks[-1] - cpu_marks[5]) / max(1, len(cpu_marks) - 6),
    }


def build_instant_c() -> Path:
    """Compile benchmarks/instant_bot.c (when missing or older than its source)."""
    exe = HERE / "instant_bot"
    src = HERE / "instant_bot.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["cc", "-O2", "-o", str(exe), str(src)], check=True)
    return exe


def raw_pipe_c(exe: Path, n: int = 20000) -> float:
    """Median round trip (seconds) of one byte between two C processes over two pipes."""
    out = subprocess.run([str(exe), "pingpong", str(n)], check=True, capture_output=True)
    return int(out.stdout) * 1e-9


async def instant_c_game(
    exe: Path, options: dict[str, Any], accounting: bool = True
) -> tuple[float, float, int, str]:
    """Seconds per turn of one refereed game between two instant C bots, start-up excluded
    (first completed turn to last), the referee's CPU seconds per turn over the same span, its
    number of turns and its reason."""
    cpu: list[float] = []
    bots = (bot_from_command(f"json:{exe}"), bot_from_command(f"json:{exe}"))
    config = MatchConfig(
        game="wrigglers",
        options=options,
        bots=bots,
        time_control=TimeControl(startup=20.0, base=1000.0),
        accounting=accounting,
    )
    record = await play_match(config, lambda event: cpu.append(time.process_time()))
    ts = [t["t"] for t in record.turns]
    n = len(ts) - 1
    return (ts[-1] - ts[0]) / n, (cpu[-1] - cpu[0]) / n, n + 1, record.result["reason"]


async def instant_c_section(rounds: int) -> None:
    """Issue 13, target 1: one CPU, instant C bots, Wrigglers 19x19 with legal lists."""
    exe = build_instant_c()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # the bots inherit it
    options = {"size": "19", "max_turns": "400"}
    raws: list[float] = []
    turns_cost: list[float] = []
    cpus: list[float] = []
    ratios: list[float] = []
    off_cost: list[float] = []
    off_cpu: list[float] = []
    for i in range(rounds):
        raw = raw_pipe_c(exe)
        off, off_c, _, _ = await instant_c_game(exe, options, accounting=False)
        off_cost.append(off)
        off_cpu.append(off_c)
        per_turn, cpu, n, reason = await instant_c_game(exe, options)
        raws.append(raw)
        turns_cost.append(per_turn)
        cpus.append(cpu)
        ratios.append(per_turn / raw)
        print(
            f"  round {i + 1}: raw pipe {us(raw)}, referee per turn {us(per_turn)} "
            f"({n} turns, {reason}), ratio {ratios[-1]:.1f}x, referee CPU/turn {us(cpu)}; "
            f"accounting off: per turn {us(off)}",
            flush=True,
        )
    med = statistics.median
    print(
        f"one CPU, instant C bots (JSON Lines), wrigglers 19x19 with legal lists, "
        f"{rounds} interleaved rounds:"
    )
    print(f"  raw pipe round trip (C, one byte)         median {us(med(raws))}")
    print(f"  referee cost per turn                     median {us(med(turns_cost))}")
    print(f"  of which the referee's own CPU time       median {us(med(cpus))}")
    print(f"  ratio (median of rounds)                  {med(ratios):.1f}x  (target <= 30x)")
    print(f"  accounting off (issue 19): per turn       median {us(med(off_cost))}")
    print(f"    referee CPU time per turn               median {us(med(off_cpu))}")
    print(
        f"  accounting's cost per turn                {us(med(turns_cost) - med(off_cost))}"
        f" = {100 * (med(turns_cost) / med(off_cost) - 1):+.1f}% (target <= 10%)"
    )
    os.sched_setaffinity(0, range(os.cpu_count() or 1))


def us(x: float) -> str:
    return f"{x * 1e6:7.1f} us"


async def main(turns: int, rounds: int, real_games: list[str], c_rounds: int) -> None:
    if c_rounds:
        await instant_c_section(c_rounds)
        if turns <= 0:
            return
    # register the null game for this process only
    games_registry._VARIANTS["null"] = f"{__name__}:NullGame"

    # Interleaved rounds: on a shared machine the load changes from second to second, so
    # every figure is collected in small alternating slices and compared as medians.
    raw_sys: list[float] = []
    raw_one: list[float] = []
    raw_trio: list[float] = []
    rts: list[float] = []
    bot: list[float] = []
    overhead: list[float] = []
    cpu: list[float] = []
    ratios: list[float] = []
    off_rts: list[float] = []
    off_cpu: list[float] = []
    per_round = max(100, turns // rounds)
    for _ in range(rounds):
        off = await refereed("null", {"max_turns": str(per_round)}, legal=False, accounting=False)
        off_rts += off["rts"]
        off_cpu.append(off["cpu_per_turn"])
        a = await raw_pingpong(per_round, use_trio=False)
        raw_one += await raw_pingpong(per_round, use_trio=False, players=1)
        raw_trio += await raw_pingpong(per_round, use_trio=True)
        r = await refereed("null", {"max_turns": str(per_round)}, legal=False)
        raw_sys += a
        rts += r["rts"]
        bot += r["bot"]
        overhead += r["overhead"]
        cpu.append(r["cpu_per_turn"])
        ratios.append(statistics.median(r["rts"]) / statistics.median(a))
        print(
            f"  round {len(ratios)}: raw {us(statistics.median(a))}, "
            f"referee round trip {us(statistics.median(r['rts']))}, ratio {ratios[-1]:.2f}x",
            flush=True,
        )
    med = statistics.median
    print(f"{rounds} interleaved rounds of {per_round} round trips / turns each")
    print("raw msgpack ping-pong over pipes, alternating between two instant bots like a game:")
    print(f"  blocking syscalls (the baseline)          median {us(med(raw_sys))}")
    print(f"  trio streams                              median {us(med(raw_trio))}")
    print(f"  blocking syscalls, a single bot           median {us(med(raw_one))}")
    print(f"referee, null game: round trip per turn    median {us(med(rts))}")
    print(f"  of which the bot (as its clock measures)  median {us(med(bot))}")
    print(
        f"  referee overhead per turn                 median {us(med(overhead))}"
        "  (target <= 100 us)"
    )
    print(f"  referee CPU time per turn                 median {us(med(cpu))}")
    print(
        f"  round trip / raw ping-pong (blocking)     {med(rts) / med(raw_sys):.2f}x "
        f"(median per round {med(ratios):.2f}x; target <= 3x)"
    )
    print(f"  round trip / raw ping-pong (trio)         {med(rts) / med(raw_trio):.2f}x")
    print(f"  accounting off (issue 19): round trip     median {us(med(off_rts))}")
    print(f"    referee CPU time per turn               median {us(med(off_cpu))}")
    print(
        f"  accounting's cost per turn                {us(med(rts) - med(off_rts))}"
        f" = {100 * (med(rts) / med(off_rts) - 1):+.1f}% of the round trip, CPU "
        f"{100 * (med(cpu) / med(off_cpu) - 1):+.1f}% (target <= 10%)"
    )
    for game in real_games:
        r = await refereed(game, {}, legal=True)
        print(
            f"referee, {game} ({r['turns']} turns, {r['reason']}): round trip {us(med(r['rts']))}, "
            f"bot {us(med(r['bot']))}, overhead incl. engine {us(med(r['overhead']))}, "
            f"CPU/turn incl. engine {us(r['cpu_per_turn'])}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000, help="total, over all rounds")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games", default="papagra,wrigglers,stripes,quadraphages,hexaphage")
    parser.add_argument("--c-rounds", type=int, default=5, help="instant C rounds (0: none)")
    parser.add_argument("--only-c", action="store_true", help="only the instant C section")
    args = parser.parse_args()
    games = [g for g in args.games.split(",") if g]
    trio.run(main, 0 if args.only_c else args.turns, args.rounds, games, args.c_rounds)
