"""The arena against fastchess and the raw pipe, side by side, in one run (issue 23).

    FASTCHESS=/path/to/fastchess python benchmarks/versus.py [--rounds 3] [--long-games 6]
        [--short-games 120] [--fc-rounds 20] [--sections per-turn,two,short,record,startup]

Instant bots on both sides, in C: the arena's is benchmarks/instant_bot.c (JSON Lines, or
msgpack with its `msgpack` argument), fastchess's is benchmarks/uci_instant.c, an instant UCI
engine that plays one scripted legal game (its docstring says why that measures fastchess's
own cost per ply honestly). Both are compiled here with `cc -O2` when missing or stale; the
arena plays with its full sandbox (process isolation: rlimits, cgroups, namespaces as the
machine allows), as a tournament plays. Every figure is collected in `--rounds` interleaved
rounds (each tool once per round, alternating) and reported as the median over rounds, with
ratios: the machine is shared, so only same-run ratios mean anything.

The figures (the table of issue 23). "Steady" per game: from the end of the first tenth of a
run's games to the end of its last game, over the games in between (a run's start-up and its
end left out); the end of a game is its commit (the arena's runner) or fastchess's "Finished
game" line, read as it comes (not fastchess's wall time: its main thread looks whether the
games are done once a second, which quantises its run time to seconds).
1. per turn, one CPU, steady: everything pinned to one core; Wrigglers 19x19 (363 turns,
   legal lists on) with JSON Lines and with msgpack: the game's wall time from its first
   completed turn to its last over the turns between (start and end excluded), and the
   referee's own CPU per turn over the same span ("in-game"). fastchess: its marginal cost
   per ply, (steady per game of 364 plies - steady per game of 4 plies) / 360, so its fixed
   cost per game cancels out. The raw pipe: one byte back and forth between two C processes
   on the same core (`instant_bot pingpong`), the floor of any turn.
2. per turn, two games at once, pinned (JSON Lines): a tournament of concurrency 2 with
   `pin_cores` (each slot's worker and bots on a core of their own), the same marginal cost
   per turn, (steady per game of 363 turns - of 4 turns) / 359; fastchess with
   `-concurrency 2 -use-affinity`. (Figure 1 pins fastchess itself, with its engines, to the
   one core.) Raw pipe: the two-core floor (half the one-core round
   trip).
3. short games (4 turns) per second, with sessions (`reuse = true`: bots kept between games,
   as fastchess keeps its engines), concurrency 1 and 2, and the 1 -> 2 ratio: 1 / steady
   per game; pinned, both (`pin_cores`: a slot's worker and its bots on one core;
   fastchess's `-use-affinity`), as each plays fastest. The arena's runs are
   `run_tournament` in this process (its slots play in referee worker processes);
   fastchess's are whole processes. Also the arena's CPU per
   game (this process, the runner; its workers with their bots, reaped at the run's end, so
   their start-up included), and the rate that bounds on the machine's cores: concurrency
   1 -> 2 can gain only while that bound is above twice the rate at concurrency 1.
4. a game's record, from the last turn to the stored result, for 363-turn and 4-turn games
   (from the concurrency-1 runs of 2 and 3), in two parts each timed on one clock: the
   worker's, from the last turn to the record's end (its `duration` less the last turn's
   `t`), and the runner's, from reading the record off the worker's pipe to its commit (the
   benchmark wraps `ProcessPlayer.receive` to note the first); between the two, the record's
   encoding in the worker, the pipe and the runner's decoding, timed apart in this process
   with the 363-turn record built (`to_dict`), encoded as the worker sends it, decoded as the
   runner reads it, compressed as the league stores it (zlib 6) and committed to a results
   file (`Store.record_games`). And whether the runner's part is on the slot's critical path:
   the gap between a game's last turn and the next game's first turn in the same slot (+-1
   ms: from the records' `started_at`, to the millisecond), against it.
5. start-up before the first game: from starting the command to the first move request
   reaching a bot (the bots stamp CLOCK_MONOTONIC: the arena's on its stderr, which the
   record keeps, fastchess's engine in the file INSTANT_STAMP names): `arena tournament run`
   (concurrency 1, reuse) and `arena match`, against fastchess's first `go`. The arena timed
   is what a user gets: the checkout installed into a fresh virtual environment as `pip
   install .` installs it (a wheel, its bytecode compiled; the dependencies are this
   interpreter's, reached through one path line, `installed_arena`), run by that
   environment's python without PYTHONPATH; not this interpreter's own site, which may hold
   an editable install's import hook and other start-up code (a few milliseconds of every
   start), nor a source tree that PYTHONDONTWRITEBYTECODE keeps uncompiled (about a hundred).
   The installs take some seconds per checkout, before the first round. With `--baseline
   DIR` (another checkout of the arena, e.g. `git archive main | tar -x -C DIR`), its
   commands are timed too, from an environment of its own, interleaved, and the table gives
   this checkout's figures against it.
6. the league's slot (section `league`, not in the defaults: it needs PostgreSQL, as
   benchmarks/distributed.py): a league of two copies of the bundled C random bot playing
   Wrigglers 19x19 (up to 400 turns), its games played by one `arena league worker` with one
   slot (server `--no-local-games`), and by the server's own slot (the in-process executor,
   concurrency 1); the figure is the gap in the slot between a game's last turn and its next
   game's first turn (the records' `started_at` and turn times, +-1 ms), median over
   `--league-games` games after a warm-up. With `--baseline`, the same runs with the baseline
   checkout's server and worker, interleaved, and the ratios.
7. the floor: each step of the referee's turn timed alone (the position, the legal list,
   the message, encoding, decoding, apply, clocks, the accounting's reads), against the
   referee's CPU per turn in a game: what pure Python costs, and what the glue adds.

Without FASTCHESS (or with a path that does not run) the fastchess columns are empty and the
raw pipe is the only baseline. fastchess is not part of the arena: build it by hand from a
checkout, e.g. `git clone https://github.com/Disservin/fastchess && make -C fastchess -j2`
(a C++17 compiler), and point FASTCHESS at the `fastchess` binary it makes; nothing of it is
committed here.

Arguments: --rounds (interleaved rounds, 3), --long-games (363-turn games per arena run of
figures 2 and 4, 40), --short-games (games per arena run of figure 3, 600; fastchess plays four
times as many), --fc-rounds (fastchess rounds of 2 games for figures 1 and 2, 20), --sections
(a comma-separated subset of per-turn,two,short,record,startup,floor,league; league is not
in the default), --baseline (figures 5 and 6: another checkout to compare with),
--league-games (games per league run, 30). The defaults take about
2-3 minutes on a quiet 2-core machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's arena

from arena.referee import MatchConfig, TimeControl, bot_from_command, play_match  # noqa: E402
from arena.tournaments.config import config_from_dict  # noqa: E402
from arena.tournaments.progress import Progress  # noqa: E402
from arena.tournaments.runner import run_tournament  # noqa: E402
from arena.tournaments.store import FinishedGame, GameRow, Store  # noqa: E402

HERE = Path(__file__).resolve().parent
LONG_PLIES = 364  # fastchess: -maxmoves 182; the arena's Wrigglers 19x19 game has 363 turns
WRIGGLERS = {"size": 19, "max_turns": 400}

med = statistics.median


def build(name: str) -> Path:
    """Compile benchmarks/<name>.c when missing or older than its source."""
    exe, src = HERE / name, HERE / f"{name}.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["cc", "-O2", "-o", str(exe), str(src)], check=True)
    return exe


def us(x: float | None) -> str:
    return "" if x is None else f"{x * 1e6:.1f} us"


def ratio(a: float | None, b: float | None) -> str:
    return "" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


# --- fastchess ---------------------------------------------------------------------------


class Fastchess:
    """A fastchess binary and the instant UCI engine; `None` figures when it is absent."""

    def __init__(self, path: str | None, engine: Path, cwd: Path) -> None:
        self.path = path
        self.engine = engine
        #: where fastchess runs: it leaves its state there (config.json)
        self.cwd = cwd
        if path:
            try:
                subprocess.run([path, "--version"], capture_output=True, timeout=10, check=False)
            except OSError as e:
                print(f"FASTCHESS={path} does not run ({e.strerror}): no fastchess figures")
                self.path = None

    def argv(self, games: int, plies: int, concurrency: int, affinity: bool) -> list[str]:
        assert self.path is not None
        argv = [self.path]
        for name in ("a", "b"):
            argv += ["-engine", f"cmd={self.engine}", f"name={name}"]
        argv += ["-each", "tc=1000+1", "-rounds", str(max(1, games // 2)), "-games", "2"]
        argv += ["-maxmoves", str(plies // 2), "-concurrency", str(concurrency)]
        argv += ["-ratinginterval", "0"]
        if affinity:
            argv += ["-use-affinity"]
        return argv

    def finishes(
        self, games: int, plies: int, concurrency: int = 1, core: int | None = None
    ) -> list[float] | None:
        """When each game of a fastchess run of `games` games of `plies` plies finished
        (its "Finished game" line read, perf_counter seconds). Not the run's wall time: its
        main thread looks whether the games are done once a second, so that is quantised."""
        if not self.path:
            return None
        pin = None if core is None else (lambda: os.sched_setaffinity(0, {core}))
        argv = self.argv(games, plies, concurrency, affinity=core is None)
        times = []
        with subprocess.Popen(
            argv,
            cwd=self.cwd,
            stdout=subprocess.PIPE,
            preexec_fn=pin,  # a pinned child: the benchmark has no threads
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith(b"Finished game"):
                    times.append(time.perf_counter())
        if proc.returncode or len(times) != games:
            raise SystemExit(f"fastchess failed: {' '.join(argv)}")
        return times

    def first_go(self, stamp: Path) -> float | None:
        """Seconds from starting fastchess (one 4-ply game) to the engine's first `go`."""
        if not self.path:
            return None
        env = {**os.environ, "INSTANT_STAMP": str(stamp)}
        t = time.monotonic_ns()
        subprocess.run(
            self.argv(1, 4, 1, False), cwd=self.cwd, stdout=subprocess.DEVNULL, env=env, check=True
        )
        return (_first_stamp(stamp) - t) * 1e-9


def steady(times: list[float] | None) -> float | None:
    """Seconds per game in the steady state: from the end of the first tenth of the games
    to the end of the last, over the games in between (start-up and the first games out)."""
    if not times:
        return None
    times = sorted(times)
    k = max(1, len(times) // 10)
    return (times[-1] - times[k - 1]) / (len(times) - k)


def _first_stamp(stamp: Path) -> int:
    lines = stamp.read_text().split()
    stamp.unlink()
    return min(int(x) for x in lines[1::2])


# --- the arena --------------------------------------------------------------------------


def raw_pipe(exe: Path, n: int = 20000) -> float:
    """Median round trip (seconds) of one byte between two C processes over two pipes."""
    out = subprocess.run([str(exe), "pingpong", str(n)], check=True, capture_output=True)
    return int(out.stdout) * 1e-9


async def one_game(exe: Path, encoding: str) -> tuple[float, float, int]:
    """Seconds per turn of one Wrigglers 19x19 game between two instant C bots (first
    completed turn to last), the referee's CPU seconds per turn over the same span, turns."""
    cpu: list[float] = []
    if encoding == "json":
        command = f"json:{exe}"
    else:
        command = f"{exe} msgpack"
    config = MatchConfig(
        game="wrigglers",
        options=dict(WRIGGLERS),
        bots=(bot_from_command(command), bot_from_command(command)),
        time_control=TimeControl(startup=20.0, base=1000.0),
    )
    record = await play_match(config, lambda event: cpu.append(time.process_time()))
    ts = [t["t"] for t in record.turns]
    n = len(ts) - 1
    return (ts[-1] - ts[0]) / n, (cpu[-1] - cpu[0]) / n, n + 1


def bot_dir(root: Path, exe: Path, encoding: str, stamp: bool = False) -> Path:
    """A bot directory (bot.toml) for the instant C bot in `encoding`; with `stamp`, the bot
    writes the time of its first turn to stderr (instant_bot.c)."""
    d = root / f"instant-{encoding}{'-stamp' if stamp else ''}"
    d.mkdir(exist_ok=True)
    command = [str(exe)] + (["msgpack"] if encoding == "msgpack" else [])
    command += ["stamp"] if stamp else []
    (d / "bot.toml").write_text(
        f'name = "instant-{encoding}"\ncommand = {command!r}\nencoding = "{encoding}"\n'.replace(
            "'", '"'
        )
    )
    return d


class Timer(Progress):
    """Each game's commit time in this process: wall clock (for the records' timestamps) and
    perf_counter (`steady`)."""

    def __init__(self) -> None:
        self.committed: dict[str, float] = {}
        self.ends: list[float] = []
        self.ends_by_id: dict[str, float] = {}
        self.received: dict[str, float] = {}  # see RECEIVED

    def game_finished(self, row: GameRow) -> None:
        self.committed[row.game_id] = time.time()
        self.ends.append(time.perf_counter())
        self.ends_by_id[row.game_id] = self.ends[-1]


def tournament(
    tmp: Path,
    bot: Path,
    games: int,
    turns: int,
    concurrency: int,
    pin: bool = False,
    tag: str = "",
) -> tuple[float, Path, Timer]:
    """Wall seconds of `run_tournament` for `games` games of `turns` turns (two copies of the
    instant bot, sessions on), its results file and its commit times."""
    results = tmp / f"{tag}-{games}-{turns}-{concurrency}-{time.monotonic_ns()}.sqlite"
    config = config_from_dict(
        {
            "name": "versus",
            "reuse": True,
            "pin_cores": pin,
            "seed": 1,
            "rounds": max(1, games // 2),
            "concurrency": concurrency,
            "openings": {"turns": 0},
            "bots": [{"path": str(bot), "name": n} for n in ("a", "b")],
            "games": [{"name": "wrigglers", "options": {"size": 19, "max_turns": turns}}],
            "time_control": {"base": 1000.0, "increment": 1.0},
            "results": str(results),
        },
        base_dir=REPO,
    )
    timer = Timer()
    _note_receipts()
    RECEIVED.clear()  # game ids repeat from run to run
    t = time.perf_counter()
    outcome = trio.run(lambda: run_tournament(config, progress=timer))
    timer.received = dict(RECEIVED)
    elapsed = time.perf_counter() - t
    assert outcome.status == "complete", outcome
    return elapsed, results, timer


def _cpu() -> tuple[float, float]:
    """CPU seconds so far of this process (the runner) and of its reaped children (the
    workers, with their bots, once a run has ended)."""
    import resource

    out = []
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        out.append(r.ru_utime + r.ru_stime)
    return out[0], out[1]


def _wall(iso: str) -> float:
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


#: when this process (the runner) read each game's record from its worker (perf_counter), by
#: game id: `ProcessPlayer.receive` is wrapped to note it (figure 4)
RECEIVED: dict[str, float] = {}


def _note_receipts() -> None:
    from arena.workers.players import ProcessPlayer

    receive = ProcessPlayer.receive
    if getattr(receive, "noted", False):
        return

    async def noted(self: ProcessPlayer) -> dict[str, Any]:
        reply = await receive(self)
        if reply.get("type") == "record":
            RECEIVED[reply["game_id"]] = time.perf_counter()
        return reply

    noted.noted = True  # type: ignore[attr-defined]
    ProcessPlayer.receive = noted  # type: ignore[method-assign]


def record_latencies(results: Path, timer: Timer) -> dict[str, list[float]]:
    """Per game, seconds: from its last turn to its record's end (the worker's own clock,
    `duration` less the last turn's `t`), from the runner's reading of the record to its
    commit (this process's clock), and per slot's consecutive games, from a game's last turn
    to the next game's first turn (concurrency 1; +-1 ms: `started_at` is to the ms)."""
    import json

    with Store(results) as store:
        rows = store.db.execute("SELECT game_id, record FROM games").fetchall()
    games = []
    out: dict[str, list[float]] = {"worker": [], "runner": [], "gap": []}
    for gid, text in rows:
        rec = json.loads(text)
        start = _wall(rec["started_at"])
        games.append((start + rec["turns"][0]["t"], start + rec["turns"][-1]["t"], gid))
        out["worker"].append(rec["duration"] - rec["turns"][-1]["t"])
        out["runner"].append(timer.ends_by_id[gid] - timer.received[gid])
    games.sort()
    out["gap"] = [b[0] - a[1] for a, b in itertools.pairwise(games)]
    return out


def record_pieces(exe: Path, tmp: Path) -> dict[str, float]:
    """Microseconds of each step of a 363-turn record's way to storage, in this process."""
    import orjson

    from arena.workers.wire import decode, encode

    record = trio.run(_a_record, exe)
    out: dict[str, list[float]] = {}
    store = Store(tmp / f"pieces-{time.monotonic_ns()}.sqlite", create=True)
    store.db.execute(
        "INSERT INTO runs (started_at, status, scheduled, pending) VALUES ('', 'x', 0, 0)"
    )

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        t = time.perf_counter()
        value = fn()
        out.setdefault(name, []).append(time.perf_counter() - t)
        return value

    for i in range(15):
        data = timed("to_dict", lambda: record.to_dict(copy=False))
        line = timed("encode (worker)", lambda d=data: encode({"type": "record", "record": d}))
        timed("decode (runner)", lambda ln=line: decode(ln))
        text = orjson.dumps(data)
        timed("zlib 6 (league)", lambda tx=text: zlib.compress(tx, 6))
        g = FinishedGame(f"g{i}", i, 1, "w", 0, 0, 1, data, text.decode())
        timed("commit (results file)", lambda g=g: store.record_games([g], 1))
    store.close()
    return {k: med(v) for k, v in out.items()}


async def _a_record(exe: Path) -> Any:
    command = f"json:{exe}"
    config = MatchConfig(
        game="wrigglers",
        options=dict(WRIGGLERS),
        bots=(bot_from_command(command), bot_from_command(command)),
        time_control=TimeControl(startup=20.0, base=1000.0),
    )
    return await play_match(config)


def arena_first_turn(
    argv: list[str], records: Callable[[], list[Any]], cwd: Path, repo: Path | None = REPO
) -> float | None:
    """Seconds from starting an arena command (of the checkout `repo`, put first on the
    path; None: the arena that argv's interpreter has installed) to the first `turn`
    reaching a bot (the bots' stamps on stderr, read from the game records that `records`
    returns after the run)."""
    env = dict(os.environ)
    if repo is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(repo), env.get("PYTHONPATH")) if p)
    else:
        env.pop("PYTHONPATH", None)
    t = time.monotonic_ns()
    subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=True)
    stamps = [
        int(line.split()[1])
        for record in records()
        for text in record["stderr"]
        for line in text.splitlines()
        if line.startswith("first-turn ")
    ]
    # a kept bot's stderr is read while it plays: a record may end before its stamp was read
    return (min(stamps) - t) * 1e-9 if stamps else None


def installed_arena(repo: Path, venv: Path) -> Path:
    """A fresh virtual environment with the checkout `repo` installed as a user's `pip
    install .` installs it (a wheel built from the checkout, its bytecode compiled), and the
    python that runs it. Its dependencies are this interpreter's (trio and the rest, the
    same versions): one path line in a .pth file, which runs no code, rather than a second
    install of all of them. Not this interpreter's own site, which may hold an editable
    install's import hook and other start-up code a user's environment does not."""
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(repo)],
        check=True,
        capture_output=True,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    deps = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    (Path(site) / "zz-benchmark-dependencies.pth").write_text("\n".join(sorted(deps)) + "\n")
    return python


# --- the table ---------------------------------------------------------------------------


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str, str]] = []

    def add(self, figure: str, arena: str, fastchess: str = "", ratio_fc: str = "", raw: str = ""):
        self.rows.append((figure, arena, fastchess, ratio_fc, raw))
        print(f"  {figure}: arena {arena}; fastchess {fastchess or '-'}; {ratio_fc} {raw}")

    def print(self) -> None:
        head = ("figure", "arena", "fastchess", "arena / fastchess", "vs the raw pipe")
        print()
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in self.rows:
            print("| " + " | ".join(row) + " |")


def per_turn_section(args: Any, fc: Fastchess, exe: Path, table: Table) -> None:
    core = min(os.sched_getaffinity(0))
    everything = os.sched_getaffinity(0)
    figures: dict[str, list[float]] = {}

    def keep(name: str, value: float | None) -> None:
        if value is not None:
            figures.setdefault(name, []).append(value)

    n = args.fc_rounds * 2
    os.sched_setaffinity(0, {core})
    try:
        # a game not counted: this process's bot spawner starts during its first game, on the
        # game's core (it inherits the pinning), which doubled that game's time per turn
        trio.run(one_game, exe, "json")
    finally:
        os.sched_setaffinity(0, everything)
    for r in range(args.rounds):
        os.sched_setaffinity(0, {core})  # the bots inherit it
        try:
            keep("raw", raw_pipe(exe))
            order = ("json", "msgpack") if r % 2 == 0 else ("msgpack", "json")
            for enc in order:
                per, cpu, _ = trio.run(one_game, exe, enc)
                keep(enc, per)
                keep(enc + " cpu", cpu)
        finally:
            os.sched_setaffinity(0, everything)
        long = steady(fc.finishes(n, LONG_PLIES, core=core))
        short = steady(fc.finishes(n, 4, core=core))
        if long is not None and short is not None:
            keep("fc", (long - short) / (LONG_PLIES - 4))
        print(
            f"  round {r + 1}: raw {us(figures['raw'][-1])}, json {us(figures['json'][-1])}, "
            f"msgpack {us(figures['msgpack'][-1])}, fastchess "
            f"{us(figures['fc'][-1]) if 'fc' in figures else '-'}",
            flush=True,
        )
    m = {k: med(v) for k, v in figures.items()}
    fcp = m.get("fc")
    for enc, label in (("json", "JSON Lines"), ("msgpack", "msgpack")):
        table.add(
            f"per turn, one CPU, steady (Wrigglers 19x19, 363 turns; {label})",
            f"{us(m[enc])} (in-game CPU {us(m[enc + ' cpu'])})",
            f"{us(fcp)}/ply" if fcp else "",
            ratio(m[enc], fcp),
            f"raw pipe {us(m['raw'])}: {ratio(m[enc], m['raw'])}"
            + (f" (fastchess {ratio(fcp, m['raw'])})" if fcp else ""),
        )


def two_section(args: Any, fc: Fastchess, exe: Path, tmp: Path, table: Table, keep: dict) -> None:
    bot = bot_dir(tmp, exe, "json")
    g = args.long_games
    arena: list[float] = []
    fcs: list[float] = []
    raws: list[float] = []
    for r in range(args.rounds):
        raws.append(raw_pipe(exe))
        long = steady(tournament(tmp, bot, g, 363, 2, pin=True, tag="two")[2].ends)
        short = steady(tournament(tmp, bot, g, 4, 2, pin=True, tag="two")[2].ends)
        assert long is not None and short is not None
        arena.append((long - short) / 359)
        n = args.fc_rounds * 2
        fl = steady(fc.finishes(n, LONG_PLIES, concurrency=2))
        fs = steady(fc.finishes(n, 4, concurrency=2))
        if fl is not None and fs is not None:
            fcs.append((fl - fs) / (LONG_PLIES - 4))
        print(
            f"  round {r + 1}: arena {us(arena[-1])}, fastchess {us(fcs[-1]) if fcs else '-'}",
            flush=True,
        )
    # the 363-turn games of concurrency 1, for the record's figures
    for _ in range(args.rounds):
        _, results, timer = tournament(tmp, bot, g, 363, 1, tag="long1")
        keep.setdefault("long", []).append((results, timer))
    a, f, raw = med(arena), (med(fcs) if fcs else None), med(raws) / 2
    table.add(
        "per turn, two games at once, pinned (JSON Lines)",
        us(a),
        us(f),
        ratio(a, f),
        f"raw pipe on two cores {us(raw)}: {ratio(a, raw)}",
    )


def short_section(args: Any, fc: Fastchess, exe: Path, tmp: Path, table: Table, keep: dict):
    bot = bot_dir(tmp, exe, "json")
    g = args.short_games
    rates: dict[tuple[str, int], list[float]] = {}
    cpu: dict[tuple[str, int], list[float]] = {}
    for r in range(args.rounds):
        for conc in (1, 2) if r % 2 == 0 else (2, 1):
            before = _cpu()
            _, results, timer = tournament(tmp, bot, g, 4, conc, pin=True, tag="short")
            after = _cpu()
            rates.setdefault(("arena", conc), []).append(1 / (steady(timer.ends) or 1))
            for who, a, b in zip(("runner", "workers"), after, before, strict=True):
                cpu.setdefault((who, conc), []).append((a - b) / g)
            if conc == 1:
                keep.setdefault("short", []).append((results, timer))
            f = steady(fc.finishes(g * 4, 4, conc))
            if f is not None:
                rates.setdefault(("fc", conc), []).append(1 / f)
        print(
            "  round "
            + str(r + 1)
            + ": "
            + ", ".join(f"{who} c{c} {v[-1]:.0f}/s" for (who, c), v in sorted(rates.items())),
            flush=True,
        )
    m = {k: med(v) for k, v in rates.items()}
    for conc in (1, 2):
        a, f = m[("arena", conc)], m.get(("fc", conc))
        table.add(
            f"short games (4 turns) per second, sessions, concurrency {conc}",
            f"{a:.0f}",
            f"{f:.0f} (engines kept)" if f else "",
            ratio(f, a) + (" (fastchess / arena)" if f else ""),
        )
    for conc in (1, 2):
        runner, workers = med(cpu[("runner", conc)]), med(cpu[("workers", conc)])
        table.add(
            f"short games: the arena's CPU per game, concurrency {conc}",
            f"{1000 * (runner + workers):.2f} ms: the runner {1000 * runner:.2f} ms, its "
            f"workers with their bots {1000 * workers:.2f} ms (each worker's start-up "
            f"included); on {os.cpu_count()} cores at most "
            f"{(os.cpu_count() or 1) / (runner + workers):.0f} games/s",
        )
    a1, a2 = m[("arena", 1)], m[("arena", 2)]
    f1, f2 = m.get(("fc", 1)), m.get(("fc", 2))
    table.add(
        "short games, concurrency 1 -> 2",
        f"{a2 / a1:.2f}x",
        f"{f2 / f1:.2f}x" if f1 and f2 else "",
    )


def record_section(exe: Path, tmp: Path, table: Table, keep: dict) -> None:
    for kind, turns in (("long", 363), ("short", 4)):
        parts: dict[str, list[float]] = {}
        for results, timer in keep.get(kind, []):
            for k, v in record_latencies(results, timer).items():
                parts.setdefault(k, []).extend(v)
        if not parts:
            continue
        m = {k: med(v) for k, v in parts.items()}
        both = m["worker"] + m["runner"]
        table.add(
            f"a game's record, last turn to stored result ({turns} turns, concurrency 1)",
            f"{1000 * both:.2f} ms = the worker's {1000 * m['worker']:.2f} ms (last turn to "
            f"the record's end) + the runner's {1000 * m['runner']:.2f} ms (record read to "
            f"committed); between them the record's encoding, write and read (below); the "
            f"slot's next game's first turn came {1000 * m['gap']:.1f} ms (+-1) after the last "
            "turn"
            + (
                ": before the commit, which is off the slot's critical path"
                if m["gap"] < m["runner"]
                else " (the worker does not wait for the commit: it plays on once it has "
                "written the record)"
            ),
        )
    pieces = record_pieces(exe, tmp)
    table.add(
        "the 363-turn record's steps, in one process (median of 15)",
        ", ".join(f"{k} {us(v)}" for k, v in pieces.items()),
    )


def floor_section(exe: Path, table: Table) -> None:
    """Where the referee's CPU per turn goes: each step of a turn timed alone, in this
    process, on a real mid-game Wrigglers 19x19 position (the median of many), against the
    referee's whole CPU per turn in a game measured in the same run. What the steps leave
    is the referee's glue: the turn loop, trio's scheduling, the record's entries."""
    import random

    from arena.games import make_game
    from arena.referee.accounting import OwnClock, open_own_schedstat
    from arena.referee.clock import Clocks
    from arena.referee.requests import turn_message
    from protocol.framing import Decoder, Encoder, Fixed
    from protocol.messages import check_reply

    state = make_game("wrigglers", dict(WRIGGLERS)).new_initial_state()
    rng = random.Random(1)
    for _ in range(150):
        state.apply(rng.choice(state.legal_actions()))
    tc = TimeControl(startup=20.0, base=1000.0)
    clocks = Clocks(tc, (tc, tc))
    own = OwnClock(open_own_schedstat())

    board = Fixed(state.describe()["board"])  # as the referee keeps it for a game

    def message() -> dict[str, Any]:
        return turn_message(
            state,
            state.turn_number(),
            0,
            {"seat": 1, "actions": ["k10"]},
            clocks.snapshot(),
            clocks.deadline(0),
            True,
            None,
            board,
        )

    msg = message()
    move = {"type": "move", "actions": [msg["legal"][0]]}
    steps: dict[str, Callable[[], Any]] = {
        "describe (the position)": state.describe,
        "legal_actions": state.legal_actions,
        "the turn message (both, and the rest)": message,
        "clone (to time apply on)": state.clone,
        "clone + apply": lambda: state.clone().apply(move["actions"][0]),
        "clocks (deadline, charge, end_turn, snapshot)": lambda: (
            clocks.deadline(0),
            clocks.charge(0, 1e-5),
            clocks.end_turn(0),
            clocks.snapshot(),
        ),
        "accounting: one read of the referee's schedstat (3 a reply)": own.delay,
        "trio.current_time (4 a turn)": trio.current_time,
        "check_reply": lambda: check_reply(move, "turn"),
    }
    for enc in ("json", "msgpack"):
        encoder, data = Encoder(enc), Encoder(enc).encode(move)
        decoder = Decoder(enc)
        steps[f"encode ({enc})"] = lambda e=encoder: e.encode(msg)
        steps[f"decode a move ({enc})"] = lambda d=decoder, b=data: d.feed(b)

    async def timed() -> dict[str, float]:
        out = {}
        for name, fn in steps.items():
            times = []
            for _ in range(2000):
                t = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t)
            out[name] = med(times)
        return out

    figures = trio.run(timed)
    own.close()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    try:
        games = {enc: trio.run(one_game, exe, enc) for enc in ("json", "msgpack")}
        raw = raw_pipe(exe)  # on the games' one core, as figure 1 measures it
    finally:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    figures["clone + apply"] -= figures["clone (to time apply on)"]
    del figures["clone (to time apply on)"]
    figures["apply (clone + apply less clone)"] = figures.pop("clone + apply")
    shared = (
        figures["the turn message (both, and the rest)"]
        + figures["apply (clone + apply less clone)"]
        + figures["clocks (deadline, charge, end_turn, snapshot)"]
        + 3 * figures["accounting: one read of the referee's schedstat (3 a reply)"]
        + 4 * figures["trio.current_time (4 a turn)"]
        + figures["check_reply"]
    )
    for enc in ("json", "msgpack"):
        steps_sum = shared + figures[f"encode ({enc})"] + figures[f"decode a move ({enc})"]
        cpu = games[enc][1]
        table.add(
            f"the floor: the referee's CPU per turn, one CPU ({enc})",
            f"{us(cpu)} in a game, of which the steps below {us(steps_sum)}, the raw "
            f"pipe's round trip on the core {us(raw)} (its system calls, and the bot's), "
            f"the rest {us(cpu - steps_sum)}: the turn loop, trio, the record",
        )
    table.add(
        "the floor: each step, once (median of 2000)",
        ", ".join(f"{k} {v * 1e6:.2f} us" for k, v in figures.items()),
    )


def startup_section(args: Any, fc: Fastchess, exe: Path, tmp: Path, table: Table) -> None:
    import json

    bot = bot_dir(tmp, exe, "json", stamp=True)
    figures: dict[str, list[float]] = {}
    checkouts = {"": REPO}
    if args.baseline:
        checkouts["baseline "] = Path(args.baseline).resolve()
    pythons = {
        label: installed_arena(repo, tmp / f"venv-{k}")
        for k, (label, repo) in enumerate(checkouts.items())
    }
    for r in range(args.rounds):
        order = list(enumerate(checkouts.items()))
        for k, (label, _repo) in order if r % 2 == 0 else order[::-1]:
            results = tmp / f"startup-{r}-{k}.sqlite"
            record = tmp / f"startup-{r}-{k}.json"
            toml = tmp / f"startup-{r}-{k}.toml"
            toml.write_text(
                f'name = "startup"\nreuse = true\nrounds = 1\nconcurrency = 1\n'
                f'results = "{results}"\nbots = [{{ path = "{bot}", name = "a" }}, '
                f'{{ path = "{bot}", name = "b" }}]\n'
                "openings = { turns = 0 }\n"
                '[[games]]\nname = "wrigglers"\noptions = { size = 19, max_turns = 4 }\n'
            )

            def from_results(results: Path = results) -> list[Any]:
                with Store(results) as store:
                    rows = store.db.execute("SELECT record FROM games")
                    return [json.loads(t) for (t,) in rows]

            def from_file(record: Path = record) -> list[Any]:
                return [json.loads(record.read_text())]

            arena = [str(pythons[label]), "-m", "arena"]
            match_options = ["-o", "size=19", "-o", "max_turns=4", "--record", str(record)]
            runs = {
                "tournament": ([*arena, "tournament", "run", str(toml)], from_results),
                "match": (
                    [*arena, "match", "wrigglers", str(bot), str(bot), *match_options],
                    from_file,
                ),
            }
            for name, (argv, records) in runs.items():
                first = arena_first_turn(argv, records, tmp, None)
                if first is not None:
                    figures.setdefault(label + name, []).append(first)
        f = fc.first_go(tmp / "stamp")
        if f is not None:
            figures.setdefault("fc", []).append(f)
        print(
            "  round "
            + str(r + 1)
            + ": "
            + ", ".join(f"{k} {1000 * v[-1]:.1f} ms" for k, v in figures.items() if v),
            flush=True,
        )
    m = {k: med(v) for k, v in figures.items()}
    fcs = m.get("fc")
    table.add(
        "start-up before the first game (command start to the first move request)",
        f"{1000 * m['tournament']:.0f} ms (`arena tournament run`); "
        f"{1000 * m['match']:.0f} ms (`arena match`)",
        f"{1000 * fcs:.1f} ms" if fcs else "",
        ratio(m["tournament"], fcs),
    )
    if args.baseline:
        table.add(
            "start-up, the baseline checkout (same run, interleaved)",
            ", ".join(
                f"{1000 * m['baseline ' + name]:.0f} ms (`arena {command}`), this checkout "
                f"{ratio(m[name], m['baseline ' + name])} of it"
                for name, command in (("tournament", "tournament run"), ("match", "match"))
            ),
        )


LEAGUE_GAMES = '[{ name = "wrigglers", options = { size = 19, max_turns = 400 } }]'


def league_gaps(tmp: Path, repo: Path, games: int, worker: bool) -> tuple[list[float], int]:
    """One league run with the checkout `repo`: gaps (seconds) in the slot between a game's
    last turn and the next game's first turn, over `games` games after three, and the median
    turns per game. `worker`: one `arena league worker` with one slot plays (the server
    queues); else the server's own slot (the in-process executor, concurrency 1)."""
    import re
    import shutil
    import signal as _signal
    import uuid

    import sqlalchemy as sa

    from arena.league.db.ledger import decompress_record

    sys.path.insert(0, str(HERE))
    from distributed import database  # the PostgreSQL of .ci/setup-system

    env = dict(os.environ, PYTHONPATH=str(repo))

    def arena(*args: str) -> None:
        out = subprocess.run(
            [sys.executable, "-m", "arena", *args], env=env, capture_output=True, text=True
        )
        if out.returncode:
            raise SystemExit(f"arena {' '.join(args)}: {out.stderr}")

    with database() as url:
        d = tmp / f"league-{uuid.uuid4().hex[:6]}"
        arena("league", "init", str(d), "--database", url)
        toml = d / "league.toml"
        text = toml.read_text()
        for key, value in {
            "games": LEAGUE_GAMES,
            "time_control": '"20+0.2"',
            "concurrency": "1",
        }.items():
            text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        toml.write_text(text)
        arena("league", "user", "add", "op", "--admin", "-C", str(d))
        for name in ("ca", "cb"):
            bot = tmp / f"{d.name}-{name}"
            shutil.copytree(REPO / "bots" / "random-c", bot)
            t = (bot / "bot.toml").read_text()
            (bot / "bot.toml").write_text(re.sub(r'(?m)^name = ".*"', f'name = "{name}"', t))
            arena("league", "bot", "add", str(bot), "--owner", "op", "-C", str(d))
        log = open(tmp / f"{d.name}.log", "ab")  # noqa: SIM115
        serve = ["league", "serve", str(d), "--listen", "127.0.0.1:0"]
        argvs = [serve + (["--no-local-games"] if worker else [])]
        if worker:
            name, cache = f"bench-{d.name}", str(tmp / f"cache-{d.name}")
            argvs.append(["league", "worker", "--database", url, "--name", name, "--cache", cache])
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "arena", *argv], env=env, stdout=log, stderr=log
            )
            for argv in argvs
        ]
        engine = sa.create_engine(url)
        try:
            deadline = time.monotonic() + 600
            count = sa.text("SELECT count(*) FROM games WHERE state = 'finished'")
            while True:
                with engine.connect() as conn:
                    if conn.execute(count).scalar() >= games + 3:
                        break
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    raise SystemExit(f"the league did not play (see {log.name})")
                time.sleep(0.2)  # polling the database, not synchronising
            with engine.connect() as conn:
                rows = conn.execute(
                    sa.text(
                        "SELECT r.data FROM records r JOIN games g ON g.id = r.game_id "
                        "WHERE g.state = 'finished'"
                    )
                ).all()
        finally:
            for proc in reversed(procs):
                proc.send_signal(_signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            log.close()
            engine.dispose()
    spans = []
    turns = []
    for (data,) in rows:
        rec = decompress_record(data)
        if not rec["turns"]:
            continue
        start = _wall(rec["started_at"])
        spans.append((start + rec["turns"][0]["t"], start + rec["turns"][-1]["t"]))
        turns.append(len(rec["turns"]))
    spans.sort()
    gaps = [b[0] - a[1] for a, b in itertools.pairwise(spans)][3:]
    return gaps, int(med(turns)) if turns else 0


def league_section(args: Any, tmp: Path, table: Table) -> None:
    checkouts = {"": REPO}
    if args.baseline:
        checkouts["baseline "] = Path(args.baseline).resolve()
    figures: dict[str, list[float]] = {}
    turns: list[int] = []
    for r in range(args.rounds):
        order = list(checkouts.items())
        for label, repo in order if r % 2 == 0 else order[::-1]:
            for kind, worker in (("worker", True), ("server", False)):
                gaps, n = league_gaps(tmp, repo, args.league_games, worker)
                figures.setdefault(label + kind, []).append(med(gaps))
                turns.append(n)
        print(
            f"  round {r + 1}: "
            + ", ".join(f"{k} {1000 * v[-1]:.1f} ms" for k, v in figures.items()),
            flush=True,
        )
    m = {k: med(v) for k, v in figures.items()}
    for kind, what in (
        ("worker", "a league worker's slot (arena/league/slot.py)"),
        ("server", "the server's own slot (the in-process executor)"),
    ):
        base = m.get("baseline " + kind)
        table.add(
            f"the league: {what}, a game's last turn to its next game's first turn "
            f"(Wrigglers 19x19, median {med(turns)} turns)",
            f"{1000 * m[kind]:.1f} ms"
            + (
                f"; the baseline checkout {1000 * base:.1f} ms, this one "
                f"{ratio(m[kind], base)} of it"
                if base is not None
                else ""
            ),
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--long-games", type=int, default=40)
    ap.add_argument("--short-games", type=int, default=600)
    ap.add_argument("--fc-rounds", type=int, default=20)
    ap.add_argument("--sections", default="per-turn,two,short,record,startup,floor")
    ap.add_argument("--baseline", help="another checkout of the arena, to compare with")
    ap.add_argument("--league-games", type=int, default=30)
    args = ap.parse_args()
    sections = set(args.sections.split(","))
    exe = build("instant_bot")
    table = Table()
    keep: dict[str, list[Any]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fc = Fastchess(os.environ.get("FASTCHESS"), build("uci_instant"), tmp)
        print(
            f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; "
            f"fastchess: {fc.path or 'none (set FASTCHESS=/path/to/fastchess)'}; "
            f"{args.rounds} rounds"
        )
        if "per-turn" in sections:
            print("per turn, one CPU:")
            per_turn_section(args, fc, exe, table)
        if "two" in sections or "record" in sections:
            print("per turn, two games at once:")
            two_section(args, fc, exe, tmp, table, keep)
        if "short" in sections or "record" in sections:
            print("short games with sessions:")
            short_section(args, fc, exe, tmp, table, keep)
        if "record" in sections:
            record_section(exe, tmp, table, keep)
        if "startup" in sections:
            print("start-up:")
            startup_section(args, fc, exe, tmp, table)
        if "league" in sections:
            print("the league's slot:")
            league_section(args, tmp, table)
        if "floor" in sections:
            floor_section(exe, table)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    table.print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
