"""Tournament throughput and per-game overhead, with baselines measured in the same run.

    python benchmarks/tournament.py [--rounds N] [--bot bots/random-c]

A round robin of instant-reply bots (three copies of the C random bot) on Papagra with three
turn limits, so game lengths are known and spread out. It prints:

- games per second at concurrency 1 and 2 and their ratio (target: >= 1.7 on 2 cores), for
  that mix and, separately, for long games only (max_turns 200), where the per-turn work
  dominates instead of the per-game start and end;
- the fixed cost per game (bot start, handshake, end, everything between two games of a slot),
  as the intercept of a least-squares fit of each game's time from its dispatch to the next
  game's dispatch against its number of turns at concurrency 1; the same fit with each game
  timed until it is committed to SQLite (which adds the group commit's wait, overlapping the
  next game), and the CPU per game at concurrency 1 (runner; workers with their bots), which
  bounds the speed-up on 2 cores: 2 x wall / CPU;
- the same bot processes plainly started and stopped (spawn both, close stdin, wait), the
  floor any arena pays, and the arena's fixed cost over that floor;
- a gauntlet (one challenger against four opponents) and a round robin (five bots) of the
  same size, 200 short games each at concurrency 2, alternating (each first in every other
  repetition): the median time per game of each and their ratio (target: the gauntlet no
  slower per game, ratio <= 1.0 within noise).

- sessions (issue 13): 4-turn games, concurrency 1, with `reuse` off and on, alternating, for
  the C bot (`--session-rounds`, 16 by default: 96 games, so that the three processes a run
  starts weigh little in the steady state) and the Python random bot: ms per game and the
  speed-up (target >= 10x for C); for the C bot also from the end of the first round on, when
  every bot process of a run with sessions has been started (the steady state itself), and
  again with `pin_cores = true` (a kept bot then answers on its referee's core);
- start-up: the imports of `arena --help` and of what `arena match` needs (python -X
  importtime, sum of top-level modules but `site`, with bytecode cached; target < 80 ms), and
  of trio alone in the same run (the part no arena module can shed).

    python benchmarks/tournament.py --formats-only     # just the gauntlet/round-robin part
    python benchmarks/tournament.py --sessions-only    # just sessions and start-up
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from arena.referee import load_bot  # noqa: E402
from arena.tournaments.config import config_from_dict  # noqa: E402
from arena.tournaments.progress import Progress  # noqa: E402
from arena.tournaments.runner import run_tournament  # noqa: E402
from arena.tournaments.store import GameRow  # noqa: E402

TURN_LIMITS = (4, 32, 128)


class Timer(Progress):
    """Wall time of every game as the runner sees it: from dispatch to committed."""

    def __init__(self) -> None:
        self.t0: dict[str, float] = {}
        self.ends: list[float] = []
        self.games: list[tuple[int, float]] = []  # (turns, seconds)
        self.turns: dict[str, int] = {}
        #: CPU seconds of the run: this process (the runner), and its reaped children (the
        #: workers, with the bots and the spawner each reaped)
        self.cpu_runner = self.cpu_children = 0.0

    def dispatch_intervals(self) -> list[tuple[int, float]]:
        """(turns, seconds from the game's dispatch to the next game's): at concurrency 1,
        everything a slot spends per game, what it does between two games included, but not
        the commit's wait, which overlaps the next game."""
        order = sorted(self.t0, key=self.t0.__getitem__)
        return [
            (self.turns[a], self.t0[b] - self.t0[a])
            for a, b in itertools.pairwise(order)
            if a in self.turns
        ]

    def game_started(self, game_id: str) -> None:
        self.t0[game_id] = time.perf_counter()

    def game_finished(self, row: GameRow) -> None:
        now = time.perf_counter()
        self.ends.append(now)
        self.games.append((row.turns or 0, now - self.t0[row.game_id]))
        self.turns[row.game_id] = row.turns or 0


def tournament(
    bot: str,
    rounds: int,
    concurrency: int,
    results: Path,
    limits: tuple[int, ...] = TURN_LIMITS,
    reuse: bool = False,
    pin_cores: bool = False,
) -> tuple[float, Timer, int]:
    config = config_from_dict(
        {
            "name": f"bench-{concurrency}",
            "reuse": reuse,
            "pin_cores": pin_cores,
            "seed": 1,
            "rounds": rounds,
            "concurrency": concurrency,
            "bots": [{"path": bot, "name": n} for n in ("a", "b", "c")],
            "games": [
                {"name": "papagra", "options": {"max_turns": t}, "label": f"papagra{t}"}
                for t in limits
            ],
            "time_control": {"base": 60.0, "increment": 1.0},
            "results": str(results),
        },
        base_dir=REPO,
    )
    timer = Timer()
    before = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    outcome = trio.run(lambda: run_tournament(config, progress=timer))
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    timer.cpu_runner, timer.cpu_children = (
        (a.ru_utime + a.ru_stime) - (b.ru_utime + b.ru_stime)
        for a, b in zip(after, before, strict=True)
    )
    assert outcome.status == "complete", outcome
    return elapsed, timer, outcome.played


def format_run(bot: str, fmt: str, results: Path, games: int = 200) -> tuple[float, int]:
    """Seconds and games for `games` short Papagra games of five bots in format `fmt`:
    a round robin has 10 pairings, a gauntlet of one challenger 4, so rounds make up the size."""
    pairings = {"round-robin": 10, "gauntlet": 4}[fmt]
    config = config_from_dict(
        {
            "name": f"bench-{fmt}",
            "seed": 1,
            "format": fmt,
            "rounds": games // (2 * pairings),
            "concurrency": 2,
            "bots": [{"path": bot, "name": n} for n in ("new", "a", "b", "c", "d")],
            "games": [{"name": "papagra", "options": {"max_turns": 16}}],
            "time_control": {"base": 60.0, "increment": 1.0},
            "results": str(results),
        },
        base_dir=REPO,
    )
    t = time.perf_counter()
    outcome = trio.run(lambda: run_tournament(config))
    elapsed = time.perf_counter() - t
    assert outcome.status == "complete" and outcome.played == games, outcome
    return elapsed, outcome.played


def compare_formats(bot: str, repeat: int, tmp: str) -> None:
    per_game: dict[str, list[float]] = {"round-robin": [], "gauntlet": []}
    for rep in range(repeat):
        # alternating, and each format first in every other repetition, so a trend in the
        # machine's load hits both alike
        order = ("round-robin", "gauntlet") if rep % 2 == 0 else ("gauntlet", "round-robin")
        for fmt in order:
            elapsed, played = format_run(bot, fmt, Path(tmp) / f"{fmt}-{rep}.sqlite")
            per_game[fmt].append(elapsed / played)
            print(
                f"  run {rep + 1}, {fmt:<11}: {played} games in {elapsed:6.2f} s "
                f"= {1000 * elapsed / played:6.1f} ms per game"
            )
    rr, g = statistics.median(per_game["round-robin"]), statistics.median(per_game["gauntlet"])
    print(
        f"gauntlet vs round robin, 200 games at concurrency 2 (median of {repeat}): "
        f"{1000 * g:.1f} vs {1000 * rr:.1f} ms per game, ratio {g / rr:.2f} (target <= 1.0)"
    )


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares seconds = a + b * turns -> (a, b)."""
    xs = [float(x) for x, _ in points]
    ys = [y for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return my - b * mx, b


def plain_start_stop(bot: str, n: int) -> float:
    """Seconds to start the game's two bot processes and see them exit on closed stdin."""
    spec = load_bot(bot)
    spec.ensure_built()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        procs = [
            subprocess.Popen(
                list(spec.command),
                cwd=spec.workdir,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(2)
        ]
        for p in procs:
            p.stdin.close()  # type: ignore[union-attr]
        for p in procs:
            p.wait()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def sandbox_description() -> str:
    """What the process isolation mode confines the bots with on this machine."""
    from arena.sandbox.process import ProcessLauncher

    return ProcessLauncher.describe()


def engine_setup(n: int = 20) -> float:
    """Seconds to create the game and its first position: part of every game's fixed cost."""
    from arena.games import make_game

    times = []
    for _ in range(n):
        t = time.perf_counter()
        make_game("papagra", {"max_turns": 4}).new_initial_state()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def compare_sessions(
    bot: str, repeat: int, tmp: str, rounds: int, pin_cores: bool = False, today: bool = False
) -> None:
    """4-turn games at concurrency 1 with and without `reuse`, alternating; steady state
    (first game's dispatch to last commit, as the Timer sees it). With `today`, also the ratio
    to the issue's figure for instant C bots before sessions."""
    per_game: dict[bool, list[float]] = {False: [], True: []}
    after_start: dict[bool, list[float]] = {False: [], True: []}
    for rep in range(repeat):
        for reuse in (False, True):
            path = Path(tmp) / f"sess-{Path(bot).name}-{reuse}-{pin_cores}-{rep}.sqlite"
            timer = tournament(bot, rounds, 1, path, limits=(4,), reuse=reuse, pin_cores=pin_cores)[
                1
            ]
            per_game[reuse].append(steady_per_game(timer))
            if rounds > 1:
                after_start[reuse].append(per_game_after(timer, 6))
    off, on = min(per_game[False]), min(per_game[True])
    pinned = ", pin_cores = true (the slot's worker and bots on one core)" if pin_cores else ""
    print(
        f"{Path(bot).name}, 4-turn games ({rounds} rounds of 6), concurrency 1{pinned}: "
        f"{1000 * off:.2f} ms/game without "
        f"sessions, {1000 * on:.2f} ms/game with (reuse = true): {off / on:.1f}x faster "
        f"(target >= 10x for instant C bots; best of {repeat})"
    )
    if today:
        # the issue's own "today": a reference from another day, not a same-run baseline
        print(
            f"  against the issue's 'today' (53 games/s at concurrency 1 = {1000 / 53:.1f} "
            f"ms/game on this machine kind when the issue was opened, not measured in this "
            f"run): {1 / 53 / on:.1f}x faster with sessions"
        )
    if rounds > 1:
        # with sessions, the first round starts the three bot processes that every later
        # game reuses: this is the steady state itself
        off, on = min(after_start[False]), min(after_start[True])
        print(
            f"  after the first round (every bot process started): {1000 * off:.2f} ms/game "
            f"without sessions, {1000 * on:.2f} ms/game with: {off / on:.1f}x faster"
        )


def per_game_after(timer: Timer, first: int) -> float:
    """Seconds per game from the commit of game `first` to the last commit."""
    ends = sorted(timer.ends)
    return (ends[-1] - ends[first - 1]) / max(1, len(ends) - first)


def steady_per_game(timer: Timer) -> float:
    """Seconds per game from the first game's dispatch to the last game's commit."""
    starts = sorted(timer.t0.values())
    ends = sorted(timer.ends)
    return (ends[-1] - starts[0]) / max(1, len(ends))


def import_ms(*argv: str, pycache: str) -> tuple[float, float]:
    """Milliseconds of imports of a Python run (sum of top-level modules' cumulative times,
    `python -X importtime`): the arena's own (with trio and the standard library it pulls in)
    and, apart, `site` (the interpreter's start-up and the .pth hooks of whatever is installed
    in site-packages, the same for any Python program).

    Bytecode is cached in `pycache` as an installed package has it: a checkout run with
    PYTHONDONTWRITEBYTECODE=1 would otherwise compile every arena module on every start."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONPYCACHEPREFIX": pycache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    total = site = 0
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        top = len(parts) == 3 and parts[2][1:2] != " " and parts[1].strip().isdigit()
        if line.startswith("import time:") and top:
            if parts[2].strip() == "site":
                site += int(parts[1])
            else:
                total += int(parts[1])
    return total / 1000, site / 1000


def startup_figures(repeat: int = 5) -> None:
    match_code = "import arena.cli; import arena.cli.match; import arena.referee.match, trio"
    runs = {
        "help": ("-m", "arena", "--help"),
        "match": ("-c", match_code),
        # the floor of anything that runs a game: trio alone, in the same run
        "trio": ("-c", "import trio"),
    }
    with tempfile.TemporaryDirectory() as pycache:
        for argv in runs.values():
            import_ms(*argv, pycache=pycache)  # writes the bytecode cache
        # alternating, so that a change in the machine's load hits both alike
        figures: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
        for _ in range(repeat):
            for name, argv in runs.items():
                figures[name].append(import_ms(*argv, pycache=pycache))
    med = {k: statistics.median(a for a, _ in v) for k, v in figures.items()}
    site = statistics.median(s for v in figures.values() for _, s in v)
    print(
        f"imports: arena --help {med['help']:.1f} ms, arena match (CLI + referee + trio) "
        f"{med['match']:.1f} ms (medians of {repeat}; target < 80 ms), of which trio alone "
        f"(imported by itself in the same run) {med['trio']:.1f} ms; besides, site "
        f"(interpreter start-up and site-packages' .pth hooks) {site:.1f} ms"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=2, help="runs per concurrency, alternating")
    ap.add_argument("--bot", default=str(REPO / "bots" / "random-c"))
    ap.add_argument(
        "--session-rounds",
        type=int,
        default=16,
        help="rounds of the sessions comparison (3 bots: 6 games a round; steady state)",
    )
    ap.add_argument("--formats-only", action="store_true", help="only gauntlet vs round robin")
    ap.add_argument("--sessions-only", action="store_true", help="only sessions and start-up")
    args = ap.parse_args()

    if args.sessions_only:
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
        startup_figures()
        with tempfile.TemporaryDirectory() as tmp:
            compare_sessions(args.bot, args.repeat, tmp, args.session_rounds, today=True)
            # a kept bot answers on the core its referee runs on: no wake-up of another core
            # per request (starting bots, the other arm's work, spreads better unpinned)
            compare_sessions(args.bot, args.repeat, tmp, args.session_rounds, pin_cores=True)
            compare_sessions(str(REPO / "bots" / "random-py"), args.repeat, tmp, 1)
        return 0

    if args.formats_only:
        print(
            f"gauntlet vs round robin: 5 x {Path(args.bot).name} (instant replies), papagra "
            f"max_turns 16; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}"
        )
        with tempfile.TemporaryDirectory() as tmp:
            compare_formats(args.bot, args.repeat, tmp)
        return 0

    n_games = 3 * 2 * len(TURN_LIMITS) * args.rounds
    print(
        f"round robin: 3 x {Path(args.bot).name} (instant replies), papagra with max_turns "
        f"{'/'.join(map(str, TURN_LIMITS))}, {args.rounds} rounds = {n_games} games per run; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start"
    )
    best: dict[int, tuple[float, Timer, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        baseline = plain_start_stop(args.bot, 30)
        for rep in range(args.repeat):
            for conc in (1, 2):  # alternating, so a change in machine load hits both alike
                path = Path(tmp) / f"c{conc}-{rep}.sqlite"
                elapsed, timer, played = tournament(args.bot, args.rounds, conc, path)
                print(
                    f"  run {rep + 1}, concurrency {conc}: {played} games in {elapsed:6.2f} s "
                    f"= {played / elapsed:6.2f} games/s"
                )
                if conc not in best or elapsed < best[conc][0]:
                    best[conc] = (elapsed, timer, played)
        long_best: dict[int, float] = {}
        for rep in range(args.repeat):
            for conc in (1, 2):
                path = Path(tmp) / f"long{conc}-{rep}.sqlite"
                elapsed, _, played = tournament(args.bot, 2, conc, path, limits=(200,))
                long_best[conc] = max(long_best.get(conc, 0.0), played / elapsed)
    rates = {c: played / elapsed for c, (elapsed, _, played) in best.items()}
    for conc, rate in rates.items():
        print(f"concurrency {conc}: {rate:6.2f} games/s (best of {args.repeat})")
    print(f"speed-up, concurrency 2 over 1: {rates[2] / rates[1]:.2f} (target >= 1.7 on 2 cores)")
    print(
        f"long games only (papagra max_turns 200, 12 games): {long_best[1]:.2f} -> "
        f"{long_best[2]:.2f} games/s, speed-up {long_best[2] / long_best[1]:.2f}"
    )
    # what a slot spends per game: from its dispatch to the next one's (the commit runs
    # meanwhile, in the runner, and overlaps the next game)
    fixed, per_turn = fit(best[1][1].dispatch_intervals())
    committed, per_turn_c = fit(best[1][1].games)
    print(
        f"per game at concurrency 1: fixed cost {1000 * fixed:.1f} ms + {1000 * per_turn:.2f} ms "
        f"per turn, each game from its dispatch to the next one's (all a slot spends per game, "
        f"between two games included; least squares over {len(best[1][1].games)} games; "
        f"target <= 8 ms with the full sandbox)"
    )
    print(
        f"  the same, each game from its dispatch until it is committed: {1000 * committed:.1f} "
        f"ms + {1000 * per_turn_c:.2f} ms per turn (includes the group commit's wait of up to "
        f"5 ms for other games to share the transaction, which overlaps the next game)"
    )
    elapsed1, timer1, played1 = best[1]
    cpu = timer1.cpu_runner + timer1.cpu_children
    print(
        f"  CPU at concurrency 1: {1000 * cpu / played1:.1f} ms per game (runner "
        f"{1000 * timer1.cpu_runner / played1:.1f} ms, workers with their bots and spawners "
        f"{1000 * timer1.cpu_children / played1:.1f} ms), {cpu / elapsed1:.2f} cores busy per "
        f"second: concurrency 2 can be at most {2 * elapsed1 / cpu:.2f}x faster on 2 cores"
    )
    print(f"  sandbox: {sandbox_description()}")
    print(
        f"  of which the rules engine's setup (make_game + first position): "
        f"{1000 * engine_setup():.1f} ms"
    )
    print(f"plain start + stop of the same two bot processes: {1000 * baseline:.1f} ms")
    print(
        f"arena's fixed cost per game over plain start/stop: {1000 * (fixed - baseline):.1f} ms "
        f"({fixed / baseline:.1f}x the plain start/stop)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        compare_formats(args.bot, args.repeat, tmp)
        compare_sessions(args.bot, args.repeat, tmp, args.session_rounds, today=True)
        compare_sessions(args.bot, args.repeat, tmp, args.session_rounds, pin_cores=True)
    startup_figures()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
