"""Fair clocks (issue 19): false time forfeits under load, and the flags that must stay.

    python benchmarks/fairness.py [--quick] [--games N] [--clocks wall,cpu]

Real tournaments (the tournament runner, its referee worker processes, bots in the process
sandbox) of two bots built from one script, `bench_bot.py`, written to a temporary directory.
Every reply the bot makes is a decision of its own: it sleeps, or computes, for a set share of
the `deadline` the referee sent it, and writes a stamp (its reply number, the game turn, the time
it used by its own wall clock from reading the request to writing the reply, the deadline) on
stderr, which the record keeps.

**The on-time workload.** Both bots answer every request after sleeping 95% of its deadline
(move_time 30 ms, margin 10 ms), on Stripes and Wrigglers (default options, 2 random opening
turns), 60 games a run (15 rounds of 2 bots x 2 games x 2 seats), at four loads: concurrency 2
alone; concurrency 2 beside a CPU hog (a process spinning on one core); concurrency 4 and 8
(oversubscribed, `oversubscribe = true`: the operator insists). A **false time forfeit** is a
`time_forfeit` of one of these bots: by construction neither is ever late (it asks for 95% of
its deadline), so every one is the host's doing; the column `woke late` counts those whose
stamp for the lost turn shows the bot's own wall time past `deadline + margin` with next to no
CPU used (the host ran it late when its sleep ended); the others were made late outside the
bot's own measure (the request's delivery, or the reply's reading by the referee). Printed per
run: turns played, false forfeits (and per 1,000 turns), voids for a host stall
(the fair referee's `HostStall`, replayed), other voids, and the load average.

**The flags that must stay.** One bot as above against a late bot, which answers its first
replies as the on-time bot does and from game turn LATE_FROM on is late by its own doing: it
computes (busy CPU, by its own thread's CPU time) until 10% of its deadline past
`deadline + margin`; or sleeps as long (the wall clock must flag it); or, under the CPU clock,
sleeps 10% past the wall cap. Printed per run: late replies and the share flagged (target
100%), and false forfeits of its punctual replies or of its opponent.

Each part runs with the wall clock and, where the referee has one (`TimeControl.clock`), the
CPU clock. The figures are counts of one run each; the machine's load average (1 min) at the
start and end of each run is printed beside them, since the machine is shared.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import trio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from arena.oversubscription import available_cpus  # noqa: E402
from arena.referee.clock import TimeControl  # noqa: E402
from arena.tournaments.config import config_from_dict  # noqa: E402
from arena.tournaments.progress import Progress  # noqa: E402
from arena.tournaments.runner import run_tournament  # noqa: E402
from arena.tournaments.store import Store  # noqa: E402

MOVE_TIME, MARGIN = 0.030, 0.010
#: the game turn from which the late bot is late (its earlier replies are on time)
LATE_FROM = 12
GAMES = ("stripes", "wrigglers")

BOT = r'''"""The fairness benchmark's bot: MODE [ARG...] (see benchmarks/fairness.py)."""
import sys
import time

from protocol.sdk import run_bot

MODE, ARGS = sys.argv[1], [float(a) for a in sys.argv[2:]]
replies = 0


def choose(turn, bot):
    global replies
    t0, c0 = time.monotonic(), time.thread_time()
    replies += 1
    deadline = turn["deadline"]
    late = MODE != "sleep" and turn["turn"] >= ARGS[0]
    if MODE == "sleep" or not late:
        time.sleep(0.95 * deadline)
    elif MODE == "busy":  # ARGS: late_from, margin
        target = deadline + ARGS[1] + 0.1 * deadline
        while time.thread_time() - c0 < target:
            pass
    elif MODE == "nap":  # ARGS: late_from, margin
        time.sleep(deadline + ARGS[1] + 0.1 * deadline)
    elif MODE == "nap-cap":  # ARGS: late_from, wall cap factor, margin
        time.sleep(1.1 * (ARGS[1] * deadline + ARGS[2]))
    action = bot.rng.choice(turn["legal"])
    used, cpu = time.monotonic() - t0, time.thread_time() - c0
    sys.stderr.write(
        f"stamp {replies} {turn['turn']} {int(late)} {used:.6f} {cpu:.6f} {deadline:.6f}\n"
    )
    sys.stderr.flush()
    return action


raise SystemExit(run_bot(choose, name="bench", sessions=False))
'''

STAMP = re.compile(r"^stamp (\d+) (\d+) ([01]) ([0-9.]+) ([0-9.]+) ([0-9.]+)$", re.M)


def has_cpu_clock() -> bool:
    return "clock" in {f.name for f in dataclasses.fields(TimeControl)}


def wall_cap_factor() -> float:
    """The CPU clock's wall-clock cap as a multiple of the deadline (docs/protocol.md §4)."""
    from arena.referee import clock

    return float(getattr(clock, "DEFAULT_WALL_CAP", 3.0))


def make_bot(directory: Path) -> Path:
    bot = directory / "bench-bot"
    bot.mkdir(exist_ok=True)
    (bot / "bot.toml").write_text('name = "bench"\ncommand = ["python3", "bot.py"]\n')
    (bot / "bot.py").write_text(BOT)
    return bot


@contextmanager
def hog(on: bool):
    """A process spinning on a core beside the run (or nothing)."""
    if not on:
        yield
        return
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


@dataclasses.dataclass
class Load:
    label: str
    concurrency: int
    hog: bool = False


LOADS = (
    Load("conc 2", 2),
    Load("conc 2 + hog", 2, hog=True),
    Load("conc 4 (forced)", 4),
    Load("conc 8 (forced)", 8),
)


@dataclasses.dataclass
class Figures:
    games: int = 0
    turns: int = 0
    false_forfeits: int = 0
    #: false forfeits whose stamp for the lost turn shows the bot itself woke late: its own
    #: wall time (from reading the request to writing the reply) past deadline + margin,
    #: with next to no CPU used (the host did not run it when its sleep ended)
    woke_late: int = 0
    stall_voids: int = 0
    other_voids: int = 0
    late_replies: int = 0
    late_flagged: int = 0
    seconds: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)
    status: str = ""


def tournament(
    bot: Path,
    results: Path,
    load: Load,
    clock: str,
    rounds: int,
    late: list[str] | None = None,
) -> dict[str, Any]:
    tc: dict[str, Any] = {"move_time": MOVE_TIME, "margin": MARGIN, "startup": 20.0}
    if clock != "wall":
        tc["clock"] = clock
    punctual = {"path": str(bot), "name": "ontime", "args": ["sleep"]}
    other = {"path": str(bot), "name": "late", "args": late} if late else {**punctual}
    if not late:
        other["name"] = "ontime-2"
    return {
        "name": results.stem,
        "seed": 19,
        "rounds": rounds,
        "concurrency": load.concurrency,
        "oversubscribe": True,  # the operator insists at 4 and 8 on 2 cores
        "max_attempts": 20,  # host stalls are voided and replayed: never give a game up
        "bots": [punctual, other],
        "games": list(GAMES),
        "time_control": tc,
        "results": str(results),
    }


def run(data: dict[str, Any], load: Load) -> tuple[Store, Figures]:
    config = config_from_dict(data, base_dir=REPO)
    fig = Figures()
    start_load = os.getloadavg()[0]
    with hog(load.hog):
        t = time.perf_counter()
        outcome = trio.run(lambda: run_tournament(config, progress=Progress()))
        fig.seconds = time.perf_counter() - t
    fig.load = (start_load, os.getloadavg()[0])
    fig.status = outcome.status
    return Store(Path(data["results"])), fig


def count(store: Store, fig: Figures, late_name: str | None) -> Figures:
    for v in store.voids():
        if "HostStall" in v["reason"] or "host_stall" in v["reason"]:
            fig.stall_voids += 1
        else:
            fig.other_voids += 1
    for row in store.games():
        fig.games += 1
        record = store.record(row.game_id)
        opening = len(record.get("opening") or [])
        fig.turns += int(record.get("turn_count") or 0) - opening
        names = [b["name"] for b in sorted(record["bots"], key=lambda b: b["seat"])]
        result = record["result"]
        failure = result.get("failure") or {}
        lost_seat = failure.get("seat") if result["reason"] == "time_forfeit" else None
        late_seat = names.index(late_name) if late_name in names else None
        if late_seat is not None:
            # the late bot's late replies: those recorded, and the one that lost on time
            fig.late_replies += sum(
                1 for t in record["turns"] if t["seat"] == late_seat and t["turn"] >= LATE_FROM
            )
        if lost_seat is None:
            continue
        last = record["turns"][-1] if record["turns"] else None
        if last is not None and last["seat"] == lost_seat and not last["actions"]:
            lost_turn = last["turn"]  # the turn it lost on, recorded empty
        else:
            lost_turn = int(record.get("turn_count") or 0) + 1
            if lost_seat == late_seat and lost_turn >= LATE_FROM:
                fig.late_replies += 1  # the reply it lost on was not recorded as a turn
        if lost_seat == late_seat and lost_turn >= LATE_FROM:
            fig.late_flagged += 1
            continue
        fig.false_forfeits += 1
        stderr = (record.get("stderr") or ["", ""])[lost_seat]
        for _, turn, _, used, cpu, deadline in STAMP.findall(stderr):
            own = float(used) > float(deadline) + MARGIN and float(cpu) < float(deadline) / 2
            if int(turn) == lost_turn and own:
                fig.woke_late += 1
    return fig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a short run: 12 games a load")
    ap.add_argument("--games", type=int, default=60, help="games per on-time run (60)")
    ap.add_argument("--late-games", type=int, default=16, help="games per late-bot run (16)")
    ap.add_argument("--clocks", default=None, help="wall,cpu (default: what the referee has)")
    ap.add_argument("--loads", default=None, help="indices of the loads to run (0,1,2,3)")
    args = ap.parse_args()
    if args.quick:
        args.games, args.late_games = 12, 8
    clocks = args.clocks.split(",") if args.clocks else ["wall"]
    if args.clocks is None and has_cpu_clock():
        clocks.append("cpu")
    loads = [LOADS[int(i)] for i in args.loads.split(",")] if args.loads else list(LOADS)
    per_round = 2 * len(GAMES) * 1  # two bots: one pair, both seats, each game
    rounds = max(1, round(args.games / per_round))
    late_rounds = max(1, round(args.late_games / per_round))
    cap = wall_cap_factor()
    print(
        f"fair clocks: move_time {MOVE_TIME * 1000:g} ms, margin {MARGIN * 1000:g} ms, "
        f"{' and '.join(GAMES)}; {available_cpus()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f} at start; referee CPU clock: "
        f"{'yes' if has_cpu_clock() else 'no (this referee has only the wall clock)'}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        bot = make_bot(Path(tmp))
        print(
            f"\non-time bots (sleep 95% of every deadline), {rounds * per_round} games a run; "
            "a false forfeit is a time_forfeit of one of them"
        )
        head = (
            f"{'clock':<5} {'load':<16} {'games':>5} {'turns':>6} {'false':>5} {'per 1k':>6} "
            f"{'woke late':>9} {'stall voids':>11} {'other voids':>11} {'secs':>6} "
            f"{'loadavg':>11}"
        )
        print(head)
        for clock in clocks:
            for i, load in enumerate(loads):
                path = Path(tmp) / f"ontime-{clock}-{i}.sqlite"
                store, fig = run(tournament(bot, path, load, clock, rounds), load)
                with store:
                    count(store, fig, None)
                per_k = 1000 * fig.false_forfeits / fig.turns if fig.turns else 0.0
                print(
                    f"{clock:<5} {load.label:<16} {fig.games:>5} {fig.turns:>6} "
                    f"{fig.false_forfeits:>5} {per_k:>6.2f} {fig.woke_late:>9} "
                    f"{fig.stall_voids:>11} {fig.other_voids:>11} {fig.seconds:>6.1f} "
                    f"{fig.load[0]:>5.2f}>{fig.load[1]:<5.2f}",
                    flush=True,
                )
        print(
            f"\nlate bot against an on-time bot, {late_rounds * per_round} games a run; late "
            f"from game turn {LATE_FROM}: busy = computes until deadline + margin + 10% of the "
            f"deadline (its CPU time), nap = sleeps as long, nap-cap = sleeps 10% past the "
            f"wall cap ({cap:g} x deadline + margin)"
        )
        print(
            f"{'clock':<5} {'late bot':<8} {'load':<16} {'late':>5} {'flagged':>7} "
            f"{'rate':>7} {'false':>5} {'stall voids':>11} {'secs':>6} {'loadavg':>11}"
        )
        modes = {
            "wall": [
                ("busy", ["busy", str(LATE_FROM), str(MARGIN)]),
                ("nap", ["nap", str(LATE_FROM), str(MARGIN)]),
            ],
            "cpu": [
                ("busy", ["busy", str(LATE_FROM), str(MARGIN)]),
                ("nap-cap", ["nap-cap", str(LATE_FROM), str(cap), str(MARGIN)]),
            ],
        }
        for clock in clocks:
            for mode, late in modes[clock]:
                for i, load in enumerate(loads):
                    path = Path(tmp) / f"late-{clock}-{mode}-{i}.sqlite"
                    data = tournament(bot, path, load, clock, late_rounds, late)
                    store, fig = run(data, load)
                    with store:
                        count(store, fig, "late")
                    rate = (
                        f"{100 * fig.late_flagged / fig.late_replies:6.1f}%"
                        if fig.late_replies
                        else "    n/a"  # every game ended (or was voided) before its turn
                    )
                    print(
                        f"{clock:<5} {mode:<8} {load.label:<16} {fig.late_replies:>5} "
                        f"{fig.late_flagged:>7} {rate} {fig.false_forfeits:>5} "
                        f"{fig.stall_voids:>11} {fig.seconds:>6.1f} "
                        f"{fig.load[0]:>5.2f}>{fig.load[1]:<5.2f}",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
