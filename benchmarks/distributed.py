"""League games on workers through the procrastinate queue: overhead, scaling, and a model.

    python benchmarks/distributed.py [--games 200] [--window 15] [--skip-e2e]

Needs the PostgreSQL of .ci/setup-system (or ARENA_TEST_POSTGRES, an admin URL); every run
makes its own databases and drops them. It prints:

1. the queue's own cost per game, with no game played (a canned record): create the game and
   defer its job in one transaction, procrastinate's fetch, the worker's claim, the record (with
   the rating update), procrastinate's finish; against the same run's baseline, the in-process
   executor's cost for the same game (create+claim, record). Target: queue overhead < 20 ms.
2. end to end, with instant-reply bots (the C random bot) on short Stripes games: games per
   second of `arena league serve` playing locally (concurrency 1), of one `arena league worker`
   (one slot) and of two workers (one slot each), each over `--window` seconds after a
   warm-up. Then the same with bots that think (a Python bot that spends 20 ms of CPU on each
   move, as an engine searching would): there the workers' work is the games, where with
   instant bots the server and PostgreSQL, on the same two cores, take a large share of each
   game. Target: two workers >= 1.7x one worker (on two otherwise idle cores). Those runs are
   made twice: workers not pinned, and each worker (with its slots and bots) pinned to a core
   of its own, i.e. one worker on one core against two workers on two cores: unpinned, one
   worker alone already spreads over both cores (its two bots start at once, the next game's
   start overlaps the last one's end), so its baseline is partly two cores' work. Each run
   prints the CPU per game of the server, the workers (slots and bots) and PostgreSQL, and
   how many cores were busy.
3. a model of one PostgreSQL and N workers, fed with the measured database cost: games per
   second and the first limit met (worker slots, database CPU, rating-row locks, archive
   downloads), for N from 1 to 2000.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy as sa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from arena.league import queue  # noqa: E402
from arena.league.archives import BlobStore, pack_bot_dir  # noqa: E402
from arena.league.db import ledger, roster  # noqa: E402
from arena.league.db.database import Database  # noqa: E402
from arena.league.migrations import upgrade  # noqa: E402
from arena.league.scheduler import Scheduler  # noqa: E402
from arena.league.settings import settings_from_dict  # noqa: E402
from arena.league.slot import PlayParams, Slot  # noqa: E402

ADMIN = os.environ.get(
    "ARENA_TEST_POSTGRES", "postgresql+psycopg://arena:arena@127.0.0.1:5432/arena"
)
GAMES = '[{ name = "stripes", options = { max_turns = 10 } }]'
RECORD = {
    "result": {"winner": 0, "result": "1-0", "reason": "turn_limit", "scores": [3, 1]},
    "turn_count": 10,
    "duration": 0.01,
}


@contextlib.contextmanager
def database() -> Iterator[str]:
    name = f"arena_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield sa.engine.make_url(ADMIN).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def arena(*args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-m", "arena", *args], cwd=REPO, env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(f"arena {' '.join(args)}: {out.stderr}")
    return out.stdout


# --- 1. the queue's own cost -----------------------------------------------------------------


def ms(xs: list[float]) -> str:
    return f"{1000 * statistics.median(xs):6.2f}"


def queue_overhead(n: int, tmp: Path) -> tuple[float, float]:
    with database() as url:
        settings = settings_from_dict(
            {"database": url, "games": ["stripes"], "matchmaking": {"placement_games": 0}},
            root=tmp / "q",
        )
        db = Database(url)
        upgrade(db.engine)
        queue.install_schema(db.engine)
        with db.write() as conn:
            user = roster.add_user(conn, "op", "t")
            sha = BlobStore(tmp / "blobs").put(pack_bot_dir(REPO / "bots" / "random-py"))
            for name in ("a", "b"):
                v = roster.add_version(
                    conn,
                    owner_id=user.id,
                    bot_name=name,
                    archive_sha256=sha,
                    path=str(REPO / "bots" / "random-py"),
                    manifest={"league_name": name, "limits": {}},
                )
                roster.finish_validation(conn, v.id, {"passed": True}, True, ["stripes"])
        scheduler = Scheduler(db, settings, seed=1)
        params = PlayParams("bench", "process", settings.limits, 3)
        slot = Slot(db, None, "bench")  # type: ignore[arg-type]
        app = queue.deferrer()
        t: dict[str, list[float]] = {k: [] for k in ("defer", "fetch", "claim", "record", "finish")}
        base: dict[str, list[float]] = {"claim": [], "record": []}

        async def consume(job_ids: list[int]) -> None:
            """Procrastinate's side (fetch, finish) and the worker's database work (claim,
            record), one job after the other, as one slot of a worker does them."""
            import procrastinate

            connector = procrastinate.PsycopgConnector(
                conninfo=queue.conninfo(url), kwargs={"options": queue.ASYNC_COMMIT_OPTIONS}
            )
            pq = procrastinate.App(connector=connector)
            async with pq.open_async():
                jm = pq.job_manager
                worker_id = await jm.register_worker()
                for _ in job_ids:
                    t0 = time.perf_counter()
                    job = await jm.fetch_job([queue.QUEUE], worker_id)
                    t1 = time.perf_counter()
                    gid = job.task_kwargs["game_id"]
                    claim, _ = await asyncio.to_thread(slot._claim, gid, params)
                    t2 = time.perf_counter()
                    await asyncio.to_thread(slot._record, claim, RECORD)
                    t3 = time.perf_counter()
                    await jm.finish_job(job, procrastinate.jobs.Status.SUCCEEDED, True)
                    t4 = time.perf_counter()
                    t["fetch"].append(t1 - t0)
                    t["claim"].append(t2 - t1)
                    t["record"].append(t3 - t2)
                    t["finish"].append(t4 - t3)
                await jm.unregister_worker(worker_id)

        for _round in range(2):
            ids = []
            for _ in range(n):
                t0 = time.perf_counter()
                with db.write() as conn:
                    queue.fast_commit(conn)
                    pairing = scheduler._plan(conn)
                    gid = ledger.create_game(conn, scheduler._new_game(pairing))
                    queue.defer_game(app, conn, gid, params.to_dict())
                t["defer"].append(time.perf_counter() - t0)
                ids.append(gid)
            asyncio.run(consume(ids))
            # the in-process executor's database work for the same games
            for _ in range(n):
                t0 = time.perf_counter()
                claim = scheduler._claim_next()
                t1 = time.perf_counter()
                with db.write() as conn:
                    ledger.record_result(conn, claim.game_id, claim.attempt, RECORD)
                t2 = time.perf_counter()
                base["claim"].append(t1 - t0)
                base["record"].append(t2 - t1)
        db.dispose()
    total_q = sum(statistics.median(v) for v in t.values())
    total_b = sum(statistics.median(v) for v in base.values())
    load = os.getloadavg()[0]
    print(f"1. queue cost per game (median of {2 * n}, ms; no game played; load {load:.1f})")
    print(
        f"   queue:      defer {ms(t['defer'])}  fetch {ms(t['fetch'])}  claim {ms(t['claim'])}"
        f"  record {ms(t['record'])}  finish {ms(t['finish'])}  = {1000 * total_q:6.2f} ms"
    )
    print(
        f"   in-process: create+claim {ms(base['claim'])}  record {ms(base['record'])}"
        f"  = {1000 * total_b:6.2f} ms"
    )
    print(
        f"   queue overhead over in-process: {1000 * (total_q - total_b):6.2f} ms/game"
        f" (ratio {total_q / total_b:.2f}); target < 20 ms"
    )
    return total_q, statistics.median(t["record"])


# --- 2. end to end ---------------------------------------------------------------------------


def finished(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM games WHERE state = 'finished'")).scalar()


def rate(
    engine: sa.Engine, warm: int, window: float, roles: dict[int, str]
) -> tuple[float, dict[str, float]]:
    """Games per second over `window` after `warm` games, and the CPU each role (the server,
    the workers with their slots and bots, PostgreSQL) spent per game meanwhile, in ms."""
    deadline = time.monotonic() + 120
    while finished(engine) < warm:
        if time.monotonic() > deadline:
            raise SystemExit("no games are being played (see the logs in the temp dir)")
        time.sleep(0.2)
    n0, t0, c0 = finished(engine), time.monotonic(), cpu_by_role(roles)
    time.sleep(window)
    n, c1 = finished(engine) - n0, cpu_by_role(roles)
    per_game = {k: 1000 * (c1.get(k, 0.0) - c0.get(k, 0.0)) / max(1, n) for k in c1}
    return n / (time.monotonic() - t0), per_game


def cpu_by_role(roles: dict[int, str]) -> dict[str, float]:
    """CPU seconds (user + system, with reaped children) of the process trees rooted at the
    pids in `roles`, summed by role, and of every PostgreSQL process as `postgres`."""
    tick = os.sysconf("SC_CLK_TCK")
    procs: dict[int, tuple[int, float, str]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.find("(") + 1 : stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2 :].split()
        procs[int(entry.name)] = (int(fields[1]), sum(map(int, fields[11:15])) / tick, comm)
    out: dict[str, float] = {}
    for pid, (_, cpu, comm) in procs.items():
        role = "postgres" if comm.startswith("postgres") else None
        p = pid
        while role is None and p in procs and p > 1:
            role = roles.get(p)
            p = procs[p][0]
        if role is not None:
            out[role] = out.get(role, 0.0) + cpu
    return out


THINKING_BOT = """from time import process_time

from protocol.sdk import run_bot


def choose(turn, bot):
    until = process_time() + 0.02  # an engine searching for 20 ms of CPU
    while process_time() < until:
        pass
    return bot.rng.choice(turn["legal"])


raise SystemExit(run_bot(choose, name="thinker", version="1.0"))
"""


def bot_dir(tmp: Path, name: str, thinking: bool) -> Path:
    """A league bot: the bundled C random bot renamed, or a Python bot that thinks."""
    bot = tmp / name
    if bot.exists():
        return bot
    if thinking:
        bot.mkdir()
        (bot / "bot.py").write_text(THINKING_BOT)
        (bot / "bot.toml").write_text(
            f'name = "{name}"\ncommand = ["python3", "bot.py"]\nencoding = "msgpack"\n'
        )
    else:
        shutil.copytree(REPO / "bots" / "random-c", bot)
        t = (bot / "bot.toml").read_text()
        (bot / "bot.toml").write_text(re.sub(r'(?m)^name = ".*"', f'name = "{name}"', t))
    return bot


def league(tmp: Path, url: str, concurrency: int, thinking: bool = False) -> Path:
    d = tmp / f"league-{uuid.uuid4().hex[:6]}"
    arena("league", "init", str(d), "--database", url)
    toml = d / "league.toml"
    text = toml.read_text()
    for key, value in {
        "games": GAMES,
        "time_control": '"5+0.05"',
        "concurrency": str(concurrency),
    }.items():
        text = re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
    toml.write_text(text)
    arena("league", "user", "add", "op", "--admin", "-C", str(d))
    for name in ("ta", "tb") if thinking else ("ca", "cb"):
        bot = bot_dir(tmp, name, thinking)
        arena("league", "bot", "add", str(bot), "--owner", "op", "-C", str(d))
    return d


def start(args: list[str], log: Path, core: int | None = None) -> subprocess.Popen:
    """`arena ARGS` in the background; with `core`, it and all it starts run on that core."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [sys.executable, "-m", "arena", *args],
        cwd=REPO,
        env=env,
        stdout=open(log, "ab"),
        stderr=subprocess.STDOUT,
        preexec_fn=None if core is None else (lambda: os.sched_setaffinity(0, {core})),
    )


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def end_to_end(
    tmp: Path, window: float, thinking: bool = False, pinned: bool = False
) -> dict[str, float]:
    """Games per second of each run; with `pinned`, worker i runs on core i (one worker on
    one core against two workers on two), the server and PostgreSQL anywhere."""
    out: dict[str, float] = {}
    runs = [("1 worker x 1 slot", 1), ("2 workers x 1 slot", 2)]
    if not thinking:
        runs.insert(0, ("in-process, concurrency 1", 0))
    cores = sorted(os.sched_getaffinity(0))
    for label, workers in runs:
        with database() as url:
            d = league(tmp, url, 1, thinking)
            engine = sa.create_engine(url)
            serve = ["league", "serve", str(d), "--listen", "127.0.0.1:0"]
            if workers:
                serve.append("--no-local-games")
            procs = [start(serve, tmp / "serve.log")]
            for i in range(workers):
                procs.append(
                    start(
                        [
                            "league",
                            "worker",
                            "--database",
                            url,
                            "--name",
                            f"bench-{i}",
                            "--cache",
                            str(tmp / f"cache-{i}"),
                            "--grace",
                            "5",
                        ],
                        tmp / f"worker-{i}.log",
                        core=cores[i % len(cores)] if pinned else None,
                    )
                )
            roles = {procs[0].pid: "server"} | {p.pid: "workers" for p in procs[1:]}
            try:
                out[label], cpu = rate(engine, 5, window, roles)
            finally:
                stop(procs)
                engine.dispose()
        busy = sum(cpu.values()) * out[label] / 1000
        spent = ", ".join(f"{k} {v:.1f}" for k, v in sorted(cpu.items()))
        print(
            f"   {label:28s} {out[label]:6.2f} games/s; CPU ms per game: {spent}"
            f" ({busy:.2f} cores busy)"
        )
    return out


# --- 3. the model ----------------------------------------------------------------------------


# One game costs the database `db_ms` of work spread over four short transactions (measured
# above, client side: an upper bound of the server's CPU). A rated game also holds the two
# versions' rating rows locked for `lock_ms` (the record transaction): games of one version
# record one at a time, so the most active version caps the league at 1000 / lock_ms games
# per second divided by its share of games (2 / versions with even matchmaking: every game
# has two seats). A new version is downloaded once by every worker (then cached).
def model(db_ms: float, lock_ms: float) -> None:
    game_s = 10.0  # a real game at 5+0.05 with two bots thinking
    slots = 8  # per worker machine
    pg_cores = 8
    versions = 200
    archive_mb, new_versions_per_hour, server_mbit = 5.0, 20.0, 1000.0
    print(
        f"3. model: {db_ms:.1f} ms of database work per game, rating rows locked {lock_ms:.1f}"
        f" ms; games of {game_s:g} s, {slots} slots per worker, PostgreSQL on {pg_cores} cores,"
        f" {versions} active versions, {new_versions_per_hour:g} new {archive_mb:g} MB"
        f" versions/h, a {server_mbit:g} Mbit/s server"
    )
    limits = {
        "database CPU": pg_cores * 1000.0 / db_ms,
        "rating-row locks": 1000.0 / lock_ms * versions / 2,
    }
    print(f"   {'workers':>8} {'games/s':>9}  limit")
    for n in (1, 2, 10, 50, 100, 200, 500, 1000, 2000):
        offered = n * slots / game_s
        # every worker fetches every new version once: MB/s the server must send
        download = n * archive_mb * new_versions_per_hour / 3600 * 8  # Mbit/s
        bound = {"worker slots": offered, **limits}
        if download > server_mbit:
            bound["archive downloads"] = offered * server_mbit / download
        name, value = min(bound.items(), key=lambda kv: kv[1])
        print(f"   {n:8d} {value:9.1f}  {name}")
    knee = limits["database CPU"] * game_s / slots
    print(
        f"   it bends near {knee:.0f} workers, when the database's CPU is the limit"
        f" ({limits['database CPU']:.0f} games/s); rating-row locks allow"
        f" {limits['rating-row locks']:.0f} games/s with {versions} versions, but a version"
        " in 10% of all games caps the league at"
        f" {1000.0 / lock_ms / 0.1:.0f} games/s; downloads of new versions cost"
        f" {archive_mb * new_versions_per_hour / 3600 * 8:.3f} Mbit/s per worker"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200, help="games per round of part 1")
    ap.add_argument("--window", type=float, default=15.0, help="seconds measured per run")
    ap.add_argument("--skip-e2e", action="store_true", help="parts 1 and 3 only")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        total, lock = queue_overhead(args.games, Path(tmp))
        if not args.skip_e2e:
            print(f"2. end to end, instant-reply C bots, short Stripes games ({args.window:g} s)")
            r = end_to_end(Path(tmp), args.window)
            one, two = r["1 worker x 1 slot"], r["2 workers x 1 slot"]
            local = r["in-process, concurrency 1"]
            print(f"   two workers / one worker: {two / one:.2f}x (target >= 1.7)")
            if one and local:
                print(
                    f"   per-game time, 1 worker vs in-process: {1000 / one:.1f} vs"
                    f" {1000 / local:.1f} ms (queue path adds {1000 / one - 1000 / local:.1f} ms)"
                )
            for pinned in (False, True):
                how = "one core per worker" if pinned else "not pinned"
                print(
                    f"   the same with bots that think 20 ms of CPU per move, {how}"
                    f" ({args.window:g} s)"
                )
                r = end_to_end(Path(tmp), args.window, thinking=True, pinned=pinned)
                one, two = r["1 worker x 1 slot"], r["2 workers x 1 slot"]
                print(f"   two workers / one worker: {two / one:.2f}x (target >= 1.7)")
        model(1000 * total, 1000 * lock)


if __name__ == "__main__":
    main()
