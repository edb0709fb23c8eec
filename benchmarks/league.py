"""League benchmarks: scheduling overhead, API throughput under load, reads at scale, and how
fast matchmaking settles a new version's rank.

    python benchmarks/league.py [--only throughput|api|scale|settling] [--games N] [--bots N]
                                [--postgres URL] [--seconds S] [--seeds N] [--gap G]

- throughput: instant-reply bots (the C random bot, two copies) on one variant at concurrency
  2, played by `arena tournament run` and by `arena league serve` (house bots); games per second
  of each from the finish times of the games they recorded (first to last, so start-up is left
  out of both), and their ratio (target: the league >= 0.8 of the tournament).
- api: while the league plays those games, a load generator on loopback (its own process,
  `--connections` keep-alive connections) asks for the leaderboard and the game list for
  `--seconds`; requests per second and p50/p99 latency (target: >= 500/s, p99 < 50 ms).
- scale: `--bots` bots and `--games` recorded games generated straight into SQLite and into
  PostgreSQL (server from --postgres or env ARENA_TEST_POSTGRES, a scratch database dropped
  afterwards); the leaderboard and a bot's game list timed through the same view functions the
  API calls (arena/league/db/views.py; target: under 50 ms); then the pages (home, a
  leaderboard sorted two ways, a bot's page, a game's page with its replay, the games list
  and a page of it far back), each rendered through the real app with the read cache emptied
  before every request: median and p99 milliseconds (target: under 100 ms).
- settling: a simulated league (no processes, no database) of `--sim-bots` bots of known
  strength: true skills drawn uniformly, `--gap` OpenSkill units apart on average, results drawn
  from them with the rating model's own win probability (logistic in the skill difference over
  sqrt(2) beta). It is settled first by `--warm` games a bot under the old policy (ratings from
  mu = truth, as a league that has run for long), then a new version of a random bot (true
  skill its predecessor's plus N(0, `--change`), mu inherited, fresh sigma, as the league
  does) enters, and each policy (`halite`, the old one, as the baseline, and `uncertainty`)
  plays `--horizon` league games from that same state with the same new version, through the
  real arena/league/matchmaking.py and arena/league/ratings.py. Printed: the games the new
  version played, and the league's games, until its 95% rank interval (arena/league/ranks.py)
  lies within +-1 place of its true place and stays so to the horizon; median and quartiles
  (nearest rank) over `--seeds` seeds (0..N-1), a run that did not settle within the horizon
  counted as never (and the number of them), and the ratios uncertainty / halite. By two
  definitions: the old one checks the interval only after the new version's own games, so a
  policy that plays it more checks it more often and sees more of the excursions that undo
  "for good" (the `halite` baseline plays it in about 3% of the games, `uncertainty` in 6%);
  the new one checks it after every league game, the same checkpoints for both. Also: in how
  many runs the place can be told to +-1 at all (the interval were the new version's rating
  exact: mu at its true skill, sigma at the table's median; where its neighbours are closer
  than the sigmas OpenSkill keeps can separate, no policy settles it but by luck), the new
  definition's figures over those runs only, and how many runs are within +-1 place after
  100, 250, 1000 and 4000 league games (a snapshot, free of "for good").
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import sqlalchemy as sa  # noqa: E402

from arena.league import migrations  # noqa: E402
from arena.league.db import ledger, schema, views  # noqa: E402
from arena.league.db.database import Database  # noqa: E402
from arena.league.matchmaking import plan_game  # noqa: E402
from arena.league.ranks import RankTable  # noqa: E402
from arena.league.ratings import BETA, MU0, SIGMA0, Skill, rate  # noqa: E402
from arena.league.settings import Matchmaking  # noqa: E402

ADMIN_URL = os.environ.get(
    "ARENA_TEST_POSTGRES", "postgresql+psycopg://arena:arena@127.0.0.1:5432/arena"
)
VARIANTS = ("papagra", "wrigglers", "stripes", "quadraphages", "hexaphage")
ENV = dict(os.environ, PYTHONPATH=str(REPO))


# --- scale ------------------------------------------------------------------------------------


@contextlib.contextmanager
def postgres(admin_url: str) -> Iterator[str]:
    name = f"arena_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield sa.engine.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def generate(db: Database, n_bots: int, n_games: int, seed: int = 1) -> None:
    """Users, bots, active versions with ratings in every variant, and `n_games` finished rated
    games with their seats, written in bulk (COPY on PostgreSQL, executemany on SQLite)."""
    rng = random.Random(seed)
    now = "2026-01-01T00:00:00.000Z"
    with db.write() as conn:
        conn.execute(
            schema.users.insert().values(
                id=1,
                name="bench",
                token_hash="x" * 64,
                is_admin=False,
                disabled=False,
                created_at=now,
            )
        )
        conn.execute(
            schema.bots.insert(),
            [
                {"id": b, "name": f"bot{b}", "owner_id": 1, "disabled": False, "created_at": now}
                for b in range(1, n_bots + 1)
            ],
        )
        conn.execute(
            schema.versions.insert(),
            [
                {
                    "id": b,
                    "bot_id": b,
                    "number": 1,
                    "state": "active",
                    "archive_sha256": "0" * 64,
                    "path": "/x",
                    "manifest": "{}",
                    "created_at": now,
                    "activated_at": now,
                }
                for b in range(1, n_bots + 1)
            ],
        )
        conn.execute(
            schema.ratings.insert(),
            [
                {
                    "version_id": b,
                    "variant": v,
                    "mu": MU0 + rng.gauss(0, 5),
                    "sigma": SIGMA0 / 3,
                    "score": 0.0,
                    "games": 0,
                    "wins": 0,
                    "draws": 0,
                    "losses": 0,
                    "forfeits": 0,
                }
                for b in range(1, n_bots + 1)
                for v in VARIANTS
            ],
        )
        conn.execute(
            schema.ratings.update().values(score=schema.ratings.c.mu - 3 * schema.ratings.c.sigma)
        )

    game_cols = [
        "id",
        "kind",
        "variant",
        "game_name",
        "options",
        "seed",
        "opening",
        "time_control",
        "version0",
        "version1",
        "state",
        "attempt",
        "priority",
        "created_at",
        "claimed_at",
        "finished_at",
        "winner",
        "result",
        "reason",
        "detail",
        "forfeit",
        "loser_seat",
        "score0",
        "score1",
        "turns",
        "duration",
        "rated",
    ]
    seat_cols = [
        "game_id",
        "seat",
        "version_id",
        "bot_id",
        "variant",
        "outcome",
        "mu_before",
        "sigma_before",
        "mu_after",
        "sigma_after",
    ]
    # a random walk stands for each version's rating history (OpenSkill on a million games
    # would take minutes; the pages only read the numbers)
    skill = {(b, v): (MU0, SIGMA0) for b in range(1, n_bots + 1) for v in VARIANTS}

    def step(version: int, variant: str, won: bool) -> tuple[float, float, float, float]:
        mu, sigma = skill[version, variant]
        after = (mu + (0.3 if won else -0.3) * sigma / SIGMA0, max(0.8, sigma * 0.995))
        skill[version, variant] = after
        return (mu, sigma, *after)

    def rows() -> Iterator[tuple[tuple, tuple, tuple]]:
        for gid in range(1, n_games + 1):
            a = rng.randrange(1, n_bots + 1)
            b = rng.randrange(1, n_bots)
            b = b + 1 if b >= a else b
            variant = VARIANTS[gid % 5]
            winner = rng.choice((0, 1, 0, 1, None))
            result = {0: "1-0", 1: "0-1"}.get(winner, "1/2-1/2")  # type: ignore[arg-type]
            out0 = "draw" if winner is None else ("win" if winner == 0 else "loss")
            out1 = "draw" if winner is None else ("win" if winner == 1 else "loss")
            g = (
                gid,
                "rated",
                variant,
                variant,
                "{}",
                gid,
                "[]",
                "{}",
                a,
                b,
                "finished",
                1,
                0,
                now,
                now,
                now,
                winner,
                result,
                "score",
                "",
                False,
                None,
                1,
                2,
                40,
                0.5,
                True,
            )
            h0 = step(a, variant, out0 == "win")
            h1 = step(b, variant, out1 == "win")
            yield g, (gid, 0, a, a, variant, out0, *h0), (gid, 1, b, b, variant, out1, *h1)

    raw = db.engine.raw_connection()
    try:
        cur = raw.cursor()
        if db.is_sqlite:
            cur.execute("BEGIN")
            batch_g, batch_s = [], []
            for g, s0, s1 in rows():
                batch_g.append(g)
                batch_s += [s0, s1]
                if len(batch_g) >= 50_000:
                    _sqlite_flush(cur, game_cols, seat_cols, batch_g, batch_s)
            _sqlite_flush(cur, game_cols, seat_cols, batch_g, batch_s)
            cur.execute("UPDATE tallies SET value = ? WHERE name = 'finished'", (n_games,))
            cur.execute("COMMIT")
            cur.execute("ANALYZE")
        else:
            seats_buf = []
            with cur.copy(f"COPY games ({', '.join(game_cols)}) FROM STDIN") as copy:
                for g, s0, s1 in rows():
                    copy.write_row(g)
                    seats_buf += [s0, s1]
            with cur.copy(f"COPY seats ({', '.join(seat_cols)}) FROM STDIN") as copy:
                for s in seats_buf:
                    copy.write_row(s)
            cur.execute("SELECT setval('games_id_seq', (SELECT max(id) FROM games))")
            cur.execute("UPDATE tallies SET value = %s WHERE name = 'finished'", (n_games,))
            raw.commit()
            cur.execute("ANALYZE")
            raw.commit()
    finally:
        raw.close()


def _sqlite_flush(cur, game_cols, seat_cols, games, seats) -> None:
    cur.executemany(
        f"INSERT INTO games ({', '.join(game_cols)}) VALUES ({', '.join('?' * len(game_cols))})",
        games,
    )
    cur.executemany(
        f"INSERT INTO seats ({', '.join(seat_cols)}) VALUES ({', '.join('?' * len(seat_cols))})",
        seats,
    )
    games.clear()
    seats.clear()


def timed(fn, reps: int = 40) -> tuple[float, float]:
    """(median, worst) milliseconds over `reps` calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def scale(url: str, label: str, n_bots: int, n_games: int) -> None:
    engine = sa.create_engine(url)
    migrations.upgrade(engine)
    engine.dispose()
    db = Database(url)
    try:
        t0 = time.perf_counter()
        generate(db, n_bots, n_games)
        print(
            f"[{label}] generated {n_bots} bots, {n_games:,} games in "
            f"{time.perf_counter() - t0:.0f} s"
        )
        rng = random.Random(2)
        reads = {
            "leaderboard (top 50)": lambda: views.leaderboard(conn, "stripes", limit=50, offset=0),
            "leaderboard (page 19)": lambda: views.leaderboard(
                conn, "stripes", limit=50, offset=900
            ),
            "a bot's games (newest 50)": lambda: views.list_games(
                conn, limit=50, offset=0, bot_id=rng.randrange(1, n_bots + 1)
            ),
            "a bot's wins in a variant": lambda: views.list_games(
                conn,
                limit=50,
                offset=0,
                bot_id=rng.randrange(1, n_bots + 1),
                variant="papagra",
                outcome="win",
            ),
            "all games (newest 50)": lambda: views.list_games(conn, limit=50, offset=0),
            "queue and counts": lambda: (views.queue(conn, limit=50, offset=0), views.counts(conn)),
        }
        with db.read() as conn:
            for name, fn in reads.items():
                median, worst = timed(fn)
                verdict = "ok" if worst < 50 else "OVER 50 ms"
                print(
                    f"[{label}] {name:28s} median {median:6.2f} ms  worst {worst:6.2f} ms  "
                    f"{verdict}"
                )
        time_pages(db, url, label, n_bots, n_games)
    finally:
        db.dispose()


def real_record(tmp: Path) -> bytes:
    """A real stripes game of two random bots (`arena match --record`), compressed as the
    league stores records: the game pages draw it."""
    out = tmp / "record.json"
    bot = str(REPO / "bots" / "random-py")
    args = ["match", "stripes", bot, bot, "--seed", "7", "--quiet", "--record", str(out)]
    subprocess.run(
        [sys.executable, "-m", "arena", *args],
        check=True,
        env=ENV,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )
    return ledger.compress_record(json.loads(out.read_text()))


def time_pages(db: Database, url: str, label: str, n_bots: int, n_games: int) -> None:
    """Each page through the real app (routing, queries, templates), the read cache emptied
    before every request so that every render is a cold one."""
    from starlette.testclient import TestClient

    from arena.league.service import League
    from arena.league.settings import settings_from_dict
    from arena.league.web.app import create_app

    with tempfile.TemporaryDirectory() as t:
        recent = range(n_games - 49, n_games + 1)
        data = real_record(Path(t))
        with db.write() as conn:
            conn.execute(schema.records.insert(), [{"game_id": g, "data": data} for g in recent])
        settings = settings_from_dict({"database": url, "games": list(VARIANTS)}, root=Path(t))
        league = League(settings, db)
        rng = random.Random(3)
        pages = {
            "home": lambda: "/",
            "leaderboard (by rating)": lambda: "/leaderboard/stripes",
            "leaderboard (by games)": lambda: "/leaderboard/stripes?sort=games&dir=desc",
            "leaderboard (page 9)": lambda: "/leaderboard/stripes?page=9",
            "a bot's page": lambda: f"/bots/bot{rng.randrange(1, n_bots + 1)}",
            "a game's page (replay)": lambda: f"/games/{n_games}",
            "a game's page, first view": lambda: f"/games/{rng.choice(recent)}",
            "games list": lambda: "/games",
            "games list, far back": lambda: f"/games?before={n_games // 3}",
            "a bot's games": lambda: f"/games?bot=bot{rng.randrange(1, n_bots + 1)}",
        }
        with TestClient(create_app(league), backend="trio") as client:
            for name, path in pages.items():

                def get(path=path, fresh="first view" in name) -> None:
                    league.cache.changed()
                    if fresh:  # the replay drawn again (pages.ReplayCache forgotten)
                        client.app.state.replays = None
                    resp = client.get(path())
                    assert resp.status_code == 200, (resp.status_code, resp.text[:300])

                median, p99, cpu = timed_p99(get)
                verdict = "ok" if p99 < 100 else "OVER 100 ms"
                print(
                    f"[{label}] page {name:24s} median {median:6.2f} ms  p99 {p99:6.2f} ms  "
                    f"cpu {cpu:6.2f} ms  {verdict}"
                )


def timed_p99(fn, reps: int = 60) -> tuple[float, float, float]:
    """(median, 99th percentile) wall milliseconds over `reps` calls, after two warm-up calls,
    and the median CPU milliseconds of this process (every thread: the app, its database
    threads, the client), which the other work on a shared machine does not inflate."""
    fn()
    fn()
    times, cpu = [], []
    for _ in range(reps):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return statistics.median(times), p99, statistics.median(cpu)


# --- throughput -------------------------------------------------------------------------------


def build_instant_bot(tmp: Path) -> Path:
    """The C random bot, built once (both runs use the same binary)."""
    import shutil

    d = tmp / "random-c"
    shutil.copytree(REPO / "bots" / "random-c", d)
    from arena.referee import load_bot

    load_bot(d).ensure_built()
    return d


def tournament_rate(bot: Path, games: int, tmp: Path, game: str, tc: str) -> float:
    tmp = Path(tempfile.mkdtemp(dir=tmp))
    config = tmp / "t.toml"
    rounds = max(1, games // 2)
    config.write_text(
        f'name = "bench"\nrounds = {rounds}\nconcurrency = 2\nresults = "t.sqlite"\n'
        f'time_control = "{tc}"\ngames = ["{game}"]\n'
        f'bots = [{{ path = "{bot}", name = "a" }}, {{ path = "{bot}", name = "b" }}]\n'
    )
    subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "run", str(config), "--quiet"],
        check=True,
        env=ENV,
        cwd=REPO,
    )
    engine = sa.create_engine(f"sqlite:///{tmp / 't.sqlite'}")
    with engine.connect() as conn:
        stamps = sorted(r[0] for r in conn.exec_driver_sql("SELECT finished_at FROM games"))
    engine.dispose()
    return _rate(stamps)


def _rate(stamps: list[str]) -> float:
    from datetime import datetime

    t = [datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() for s in stamps]
    return (len(t) - 1) / (t[-1] - t[0])


class League:
    """A league directory with two copies of the instant bot, served by a real process."""

    def __init__(self, tmp: Path, bot: Path, game: str, tc: str, url: str | None) -> None:
        self.dir = tmp / "league"
        args = ["league", "init", str(self.dir)] + (["--database", url] if url else [])
        self._arena(*args)
        text = (self.dir / "league.toml").read_text()
        text = re.sub(r"(?m)^games = .*$", f'games = ["{game}"]', text)
        text = re.sub(r"(?m)^time_control = .*$", f'time_control = "{tc}"', text)
        text = re.sub(r"(?m)^opening_turns = .*$", "opening_turns = 0", text)
        (self.dir / "league.toml").write_text(text)
        self._arena("league", "user", "add", "op", "-C", str(self.dir))
        for name in ("a", "b"):
            copy = tmp / name
            import shutil

            shutil.copytree(bot, copy)
            manifest = copy / "bot.toml"
            manifest.write_text(
                re.sub(r"(?m)^name = .*$", f'name = "{name}"', manifest.read_text())
            )
            self._arena("league", "bot", "add", str(copy), "--owner", "op", "-C", str(self.dir))
        self.url = url or f"sqlite:///{self.dir / 'league.sqlite'}"

    def _arena(self, *args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "arena", *args],
            check=True,
            env=ENV,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
        )

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "arena",
                "league",
                "serve",
                str(self.dir),
                "--listen",
                "127.0.0.1:0",
            ],
            env=ENV,
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            yield re.search(r"on (http://\S+)", line).group(1)  # type: ignore[union-attr]
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)

    def finished_stamps(self) -> list[str]:
        engine = sa.create_engine(self.url)
        with engine.connect() as conn:
            stamps = sorted(
                r[0]
                for r in conn.execute(
                    sa.select(schema.games.c.finished_at).where(schema.games.c.state == "finished")
                )
            )
        engine.dispose()
        return stamps

    def finished(self) -> int:
        engine = sa.create_engine(self.url)
        with engine.connect() as conn:
            n = conn.execute(
                sa.select(sa.func.count()).where(schema.games.c.state == "finished")
            ).scalar_one()
        engine.dispose()
        return n


LOADGEN = r"""
import json, sys, time, trio

async def main(host, port, seconds, connections, paths):
    lat, errors, reconnects = [], 0, 0
    deadline = trio.current_time() + seconds

    async def worker(k):
        # keep-alive, and a new connection whenever the server ends one (Hypercorn closes a
        # connection after keep_alive_max_requests responses, saying `connection: close`)
        nonlocal errors, reconnects
        stream, buf, i = None, b"", k
        while trio.current_time() < deadline:
            if stream is None:
                stream, buf = await trio.open_tcp_stream(host, port), b""
            path = paths[i % len(paths)]
            i += 1
            t0 = time.perf_counter()
            try:
                await stream.send_all(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                while b"\r\n\r\n" not in buf:
                    data = await stream.receive_some(65536)
                    if not data:
                        raise trio.BrokenResourceError("closed before the response")
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                lines = [l.lower() for l in head.split(b"\r\n")]
                length = int([l.split(b":")[1] for l in lines
                              if l.startswith(b"content-length")][0])
                while len(buf) < length:
                    data = await stream.receive_some(65536)
                    if not data:
                        raise trio.BrokenResourceError("closed in the body")
                    buf += data
            except trio.BrokenResourceError:
                errors += 1
                await stream.aclose()
                stream = None
                continue
            buf = buf[length:]
            if not head.startswith(b"HTTP/1.1 200"):
                errors += 1
            lat.append(time.perf_counter() - t0)
            if b"connection: close" in lines:
                await stream.aclose()
                stream = None
                reconnects += 1
        if stream is not None:
            await stream.aclose()

    t0 = trio.current_time()
    async with trio.open_nursery() as n:
        for k in range(connections):
            n.start_soon(worker, k)
    elapsed = trio.current_time() - t0
    print(json.dumps({"n": len(lat), "errors": errors, "reconnects": reconnects,
                      "elapsed": elapsed, "lat": sorted(lat)}))

host, port, seconds, conns = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
trio.run(main, host, port, seconds, conns, sys.argv[5:])
"""


def load(url: str, seconds: float, connections: int, paths: list[str]) -> dict:
    m = re.match(r"http://([^:/]+):(\d+)", url)
    assert m
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            LOADGEN,
            m.group(1),
            m.group(2),
            str(seconds),
            str(connections),
            *paths,
        ],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    )
    return json.loads(out.stdout)


def throughput_and_api(games: int, seconds: float, connections: int, pg: str | None) -> None:
    game, tc = "stripes", "5+0.05"
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        bot = build_instant_bot(tmp)
        # the machine's speed drifts (other work on it): each league run is sandwiched between
        # two tournament runs and compared with their mean
        t_before = tournament_rate(bot, games, tmp, game, tc)
        for label, url in (("sqlite", None), ("postgresql", pg)):
            if label == "postgresql" and pg is None:
                continue
            with contextlib.ExitStack() as stack:
                db_url = stack.enter_context(postgres(pg)) if url else None
                sub = tmp / label
                sub.mkdir()
                league = League(sub, bot, game, tc, db_url)
                with league.serve() as http:
                    while league.finished() < games:
                        time.sleep(0.5)
                    stamps = league.finished_stamps()[:games]
                    l_rate = _rate(stamps)
                    before = league.finished()
                    res = load(
                        http,
                        seconds,
                        connections,
                        ["/api/v1/leaderboard/stripes", "/api/v1/games?limit=50"],
                    )
                    played = league.finished() - before
                t_after = tournament_rate(bot, games, tmp, game, tc)
                t_rate = (t_before + t_after) / 2
                print(
                    f"[{label}] league {l_rate:.2f} games/s, tournament {t_before:.2f} before "
                    f"and {t_after:.2f} after ({games} games each, {game}, concurrency 2): "
                    f"ratio {l_rate / t_rate:.2f} (target >= 0.80)"
                )
                t_before = t_after
                lat = res["lat"]
                p50 = lat[len(lat) // 2] * 1000
                p99 = lat[int(len(lat) * 0.99)] * 1000
                print(
                    f"[{label}] api under load: {res['n'] / res['elapsed']:.0f} requests/s, "
                    f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, {res['errors']} errors, "
                    f"{res['reconnects']} connections ended by the server, "
                    f"{connections} connections, {seconds:g} s, {played} games played "
                    "meanwhile (target >= 500/s, p99 < 50 ms)"
                )


# --- settling: how many games a new version needs before its rank settles -------------------


@dataclasses.dataclass
class SimLeague:
    """A simulated variant: true skills, ratings, game counts and last game times."""

    true: list[float]
    skills: list[Skill]
    games: list[int]
    last: list[int]
    clock: int = 0

    def copy(self) -> SimLeague:
        return SimLeague(
            list(self.true), list(self.skills), list(self.games), list(self.last), self.clock
        )


@dataclasses.dataclass
class Settling:
    """One run's answer for one policy, by both definitions (module docstring)."""

    #: old definition: (its games, league games) when its interval, checked after each of ITS
    #: games, was within +-1 place for good; None: not within the horizon
    at_own: tuple[int, int] | None
    #: new definition: the same, checked after EVERY league game (the same checkpoints for
    #: every policy)
    at_every: tuple[int, int] | None
    #: league games -> whether the interval was within +-1 place then (CHECKPOINTS)
    within_at: dict[int, bool]
    played: int


CHECKPOINTS = (100, 250, 1000, 4000)


def sim_play(
    league: SimLeague,
    policy: str,
    count: int,
    rng: random.Random,
    results: random.Random,
    watch: int | None = None,
) -> Settling | None:
    """Play `count` games under `policy`. With `watch` (a bot's index): when its rank interval
    settled for good, by both definitions (`Settling`)."""
    mm = Matchmaking(policy=policy)
    scale = math.sqrt(2.0) * BETA
    place = 0
    if watch is not None:
        mine = league.true[watch]
        place = 1 + sum(1 for j, t in enumerate(league.true) if j != watch and t > mine)
    at_own: tuple[int, int] | None = None
    at_every: tuple[int, int] | None = None
    within_at: dict[int, bool] = {}
    played = 0
    for step in range(1, count + 1):
        league.clock += 1
        pool = [
            ledger.Candidate(i, i, s.mu, s.sigma, league.games[i], f"{league.last[i]:012d}")
            for i, s in enumerate(league.skills)
        ]
        pairing = plan_game(rng, mm, ["v"], {}, {"v": pool})
        assert pairing is not None
        a, b = pairing.seats
        p_a = 1.0 / (1.0 + math.exp(-(league.true[a] - league.true[b]) / scale))
        won = 1.0 if results.random() < p_a else 0.0
        league.skills[a], league.skills[b] = rate(league.skills[a], league.skills[b], won)
        for x in (a, b):
            league.games[x] += 1
            league.last[x] = league.clock
        if watch is None:
            continue
        mine_played = watch in (a, b)
        played += mine_played
        within = RankTable([(s.mu, s.sigma) for s in league.skills]).interval(watch).within(place)
        if step in CHECKPOINTS:
            within_at[step] = within
        at_every = (at_every or (played, step)) if within else None
        if mine_played:
            at_own = (at_own or (played, step)) if within else None
    if watch is None:
        return None
    return Settling(at_own, at_every, within_at, played)


def settling_run(
    seed: int, bots: int, gap: float, warm: int, change: float, horizon: int
) -> tuple[bool, dict[str, Settling]]:
    """One seed: whether the new version's place can be told to +-1 at all, and each policy's
    `Settling`, from the same state with the same new version."""
    rng = random.Random(seed)
    true = [rng.uniform(0.0, bots * gap) for _ in range(bots)]
    shift = MU0 - bots * gap / 2.0
    league = SimLeague(true, [Skill(t + shift, SIGMA0 / 4) for t in true], [0] * bots, [0] * bots)
    sim_play(league, "halite", warm * bots // 2, random.Random(seed + 1), random.Random(seed + 2))
    new = rng.randrange(bots)
    new_true = league.true[new] + rng.gauss(0.0, change)
    # can its place be told to +-1 at all? its interval were its rating exact (mu at its true
    # skill, sigma at the table's median: OpenSkill's tau keeps it there), the others' as they
    # stand: when not, no policy settles it but by luck (the neighbours too close in skill
    # for the sigmas the rating model keeps), the same for both
    place = 1 + sum(1 for j, t in enumerate(league.true) if j != new and t > new_true)
    exact = [(s.mu, s.sigma) for s in league.skills]
    exact[new] = (new_true + shift, statistics.median(s for _, s in exact))
    tellable = RankTable(exact).interval(new).within(place)
    out = {}
    for policy in ("halite", "uncertainty"):  # the same state, the same new version
        run = league.copy()
        run.true[new] = new_true
        run.skills[new] = Skill(league.skills[new].mu, SIGMA0)
        run.games[new] = 0
        settled = sim_play(
            run, policy, horizon, random.Random(seed + 3), random.Random(seed + 4), watch=new
        )
        assert settled is not None
        out[policy] = settled
    return tellable, out


def settling(seeds: int, bots: int, gap: float, warm: int, change: float, horizon: int) -> None:
    started = time.perf_counter()
    runs = [settling_run(s, bots, gap, warm, change, horizon) for s in range(seeds)]
    tellable = [i for i, (t, _) in enumerate(runs) if t]
    print(
        f"[settling] {bots} bots {gap:g} apart on average, settled by {warm} games a bot, a new "
        f"version changed by N(0, {change:g}); {horizon} league games a run, seeds 0..{seeds - 1}, "
        f"{time.perf_counter() - started:.0f} s; its place can be told to +-1 at all (its "
        f"interval were its rating exact) in {len(tellable)} of {seeds} runs"
    )
    medians = {}
    for policy in ("halite", "uncertainty"):
        results = [r[policy] for _, r in runs]
        for label, field, subset in (
            ("old definition (checked after its games)", "at_own", range(seeds)),
            ("new definition (checked after every league game)", "at_every", range(seeds)),
            ("new definition, the runs where +-1 can be told", "at_every", tellable),
        ):
            done = [getattr(results[i], field) for i in subset]
            own = [d[0] if d else math.inf for d in done]
            league_games = [d[1] if d else math.inf for d in done]
            never = sum(1 for d in done if d is None)
            medians[policy, field, len(done)] = (
                _rank_quantile(own, 0.5),
                _rank_quantile(league_games, 0.5),
            )
            print(
                f"[settling] {policy:>11}, {label}: its games until its rank interval is "
                f"within +-1 place for good: median {_show(own, 0.5)}, quartiles "
                f"{_show(own, 0.25)}..{_show(own, 0.75)}; league games until then: median "
                f"{_show(league_games, 0.5)}, quartiles {_show(league_games, 0.25)}.."
                f"{_show(league_games, 0.75)}; never within the horizon: {never} of {len(done)}"
            )
        within = ", ".join(
            f"{sum(r.within_at.get(c, False) for r in results)} after {c}"
            for c in CHECKPOINTS
            if c <= horizon
        )
        print(
            f"[settling] {policy:>11}: runs whose interval is within +-1 place after so many "
            f"league games: {within} (of {seeds}); its share of the league's games: "
            f"{statistics.mean(r.played for r in results) / horizon:.0%}"
        )
    for field, n, label in (
        ("at_own", seeds, "old definition"),
        ("at_every", seeds, "new definition"),
        ("at_every", len(tellable), "new definition, the runs where +-1 can be told"),
    ):
        h_own, h_league = medians["halite", field, n]
        u_own, u_league = medians["uncertainty", field, n]
        print(
            f"[settling] uncertainty / halite, {label} (medians; below 1: settles sooner): "
            f"its games {_ratio(u_own, h_own)}, league games {_ratio(u_league, h_league)}"
        )


def _rank_quantile(values: list[float], q: float) -> float:
    """The nearest-rank quantile (works with never-settled runs as infinity)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _show(values: list[float], q: float) -> str:
    x = _rank_quantile(values, q)
    return "never" if math.isinf(x) else f"{x:g}"


def _ratio(new: float, old: float) -> str:
    if math.isinf(new) or math.isinf(old):
        return "n/a (a median never settled)"
    return f"{new / max(old, 1):.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("throughput", "scale", "settling"))
    ap.add_argument("--games", type=int, default=1_000_000, help="scale: recorded games")
    ap.add_argument("--bots", type=int, default=1000, help="scale: bots")
    ap.add_argument("--played", type=int, default=120, help="throughput: games per run")
    ap.add_argument("--seconds", type=float, default=10.0, help="api: load duration")
    ap.add_argument("--connections", type=int, default=8, help="api: concurrent connections")
    ap.add_argument("--postgres", default=ADMIN_URL, help="admin URL ('' to skip PostgreSQL)")
    ap.add_argument("--seeds", type=int, default=16, help="settling: simulated leagues")
    ap.add_argument("--sim-bots", type=int, default=100, help="settling: bots a league")
    ap.add_argument("--gap", type=float, default=5.0, help="settling: mean skill gap")
    ap.add_argument("--warm", type=int, default=50, help="settling: games a bot before")
    ap.add_argument("--change", type=float, default=10.0, help="settling: new version's change")
    ap.add_argument("--horizon", type=int, default=4000, help="settling: league games a run")
    args = ap.parse_args()
    pg = args.postgres or None
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    if args.only in (None, "throughput"):
        throughput_and_api(args.played, args.seconds, args.connections, pg)
    if args.only in (None, "settling"):
        settling(args.seeds, args.sim_bots, args.gap, args.warm, args.change, args.horizon)
    if args.only in (None, "scale"):
        with tempfile.TemporaryDirectory() as t:
            scale(f"sqlite:///{Path(t) / 'scale.sqlite'}", "sqlite", args.bots, args.games)
        if pg:
            with postgres(pg) as url:
                scale(url, "postgresql", args.bots, args.games)


if __name__ == "__main__":
    main()
