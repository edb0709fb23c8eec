"""Games played by `arena league worker`s through procrastinate on a real PostgreSQL, with real
processes: a server queueing games (`--no-local-games`) and two workers; one worker SIGKILLed
mid-game and started again, the server killed and started again; afterwards every game is
recorded exactly once, none is lost, the ratings equal a replay of the recorded results and no
bot or slot process is left. And a frozen worker (a network partition) whose stale result
arrives after its game was replayed elsewhere, and is refused.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from arena.league.db import fleet, ledger, schema
from arena.league.ratings import Skill, rate

from .support import BOTS, ROOT, Server, arena, make_league, postgres_database

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

#: fast games: two random bots, ten turns of Stripes
GAMES = '[{ name = "stripes", options = { max_turns = 10 } }]'
STALLED_AFTER = "2"


def wait_until(predicate: Callable[[], Any], what: str, timeout: float = 90.0) -> Any:
    """Poll `predicate` until truthy (the loop bounds the waiting; it synchronises nothing)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class Worker:
    """A real `arena league worker` process; `wrap` is a command it runs under (`nsenter
    --net=...` puts it in another network namespace: tests/league/test_workers_netns.py)."""

    def __init__(
        self,
        url: str,
        name: str,
        tmp: Path,
        log: Path,
        concurrency: int = 2,
        wrap: Sequence[str] = (),
        extra: Sequence[str] = (),
        force: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.log = log
        #: the worker's start-up line: it was started again when the log has one more
        self.starts = self._started_lines()
        self.out = open(log, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                *wrap,
                sys.executable,
                "-m",
                "arena",
                "league",
                "worker",
                "--database",
                url,
                "--name",
                name,
                "--concurrency",
                str(concurrency),
                "--cache",
                str(tmp / f"cache-{name}"),
                "--heartbeat",
                "0.5",
                "--stalled-after",
                STALLED_AFTER,
                "--retry-wait",
                "0.5",
                "--grace",
                "20",
                *extra,
                *(["--force"] if force else []),
            ],
            cwd=ROOT,
            env=_env(env),
            stdout=self.out,
            stderr=self.out,
        )

    def _started_lines(self) -> int:
        if not self.log.exists():
            return 0
        return self.log.read_text(errors="replace").count(f"worker: {self.name} started:")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if sig == signal.SIGTERM:
            # a worker asked to stop while still starting up (imports, registering: seconds
            # on a loaded machine) is ended by the signal, not stopped: stop a started one
            wait_until(
                lambda: self.proc.poll() is not None or self._started_lines() > self.starts,
                f"worker {self.name} to start",
                120,
            )
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            self.out.close()

    def slot_pids(self) -> list[int]:
        return [p for p, env in _environs() if f"ARENA_LEAGUE_WORKER={self.name}" in env]


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    """The worker's environment: this checkout first on PYTHONPATH, after any `extra` path."""
    env = dict(os.environ, **(extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in ((extra or {}).get("PYTHONPATH"), str(ROOT)) if p
    )
    return env


def _environs() -> Iterator[tuple[int, str]]:
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError):
                yield (
                    int(d.name),
                    (d / "environ").read_bytes().replace(b"\0", b"\n").decode(errors="replace"),
                )


def leftovers(tmp: Path, names: list[str]) -> list[str]:
    """Processes of this test still alive: slot processes (by their environment) and bots
    (running from the workers' caches)."""
    found = []
    marks = [f"ARENA_LEAGUE_WORKER={n}" for n in names]
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            env = (d / "environ").read_bytes().decode(errors="replace")
            cwd = ""
            with contextlib.suppress(OSError):
                cwd = os.readlink(d / "cwd")
            mine = str(tmp) in cmd or str(tmp) in cwd or any(m in env for m in marks)
            if mine and not (d / "stat").read_text().split(") ")[1].startswith("Z"):
                found.append(f"{d.name}: {cmd.strip()} (cwd {cwd})")
    return found


def two_bots(tmp: Path) -> list[Path]:
    out = []
    for name in ("ra", "rb"):
        d = tmp / name
        shutil.copytree(BOTS / "random-py", d, ignore=shutil.ignore_patterns("__pycache__"))
        toml = d / "bot.toml"
        text = toml.read_text()
        toml.write_text(text.replace('name = "random-py"', f'name = "{name}"', 1))
        out.append(d)
    return out


@pytest.fixture
def pg_league(tmp_path):
    """A league directory on PostgreSQL with two random bots and no server (the workers play
    its games): (directory, database URL, an engine on it)."""
    with postgres_database() as url:
        d = make_league(
            tmp_path / "league",
            url,
            time_control='"2+0.02"',
            games=GAMES,
            concurrency="2",
            opening_turns="1",
        )
        arena("league", "user", "add", "op", "--admin", "-C", str(d))
        for bot in two_bots(tmp_path):
            arena("league", "bot", "add", str(bot), "--owner", "op", "-C", str(d))
        engine = sa.create_engine(url)
        try:
            yield d, url, engine
        finally:
            engine.dispose()


def q(engine: sa.Engine, sql: str, **params: Any) -> list[Any]:
    with engine.connect() as conn:
        return conn.execute(sa.text(sql), params).all()


def finished(engine: sa.Engine) -> int:
    return q(engine, "SELECT count(*) FROM games WHERE state = 'finished'")[0][0]


def playing(engine: sa.Engine, worker: str) -> list[int]:
    """Games the worker holds an open attempt of, read from the database."""
    rows = q(
        engine,
        "SELECT a.game_id FROM attempts a JOIN games g ON g.id = a.game_id "
        "WHERE a.worker = :w AND a.ended_at IS NULL AND g.state = 'running' "
        "AND g.attempt = a.attempt",
        w=worker,
    )
    return [r[0] for r in rows]


def live_jobs(engine: sa.Engine) -> int:
    return q(engine, "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')")[
        0
    ][0]


def replayed_ratings(engine: sa.Engine) -> dict[int, Skill]:
    """The ratings a replay of the recorded rated results gives, in the order they were
    recorded. Results recorded within the same millisecond are tried in every order."""
    rows = q(
        engine,
        "SELECT finished_at, id, version0, version1, winner FROM games "
        "WHERE state = 'finished' AND rated ORDER BY finished_at, id",
    )
    groups = [list(g) for _, g in itertools.groupby(rows, key=lambda r: r[0])]
    actual = {
        v: Skill(mu, sigma)
        for v, mu, sigma in q(engine, "SELECT version_id, mu, sigma FROM ratings")
    }
    choices = [list(itertools.permutations(g)) if len(g) > 1 else [g] for g in groups]
    best: dict[int, Skill] = {}
    for combo in itertools.islice(itertools.product(*choices), 256):
        skills: dict[int, Skill] = {v: Skill() for v in actual}
        for group in combo:
            for _, _, v0, v1, winner in group:
                pts = 0.5 if winner is None else (1.0 if winner == 0 else 0.0)
                skills[v0], skills[v1] = rate(skills[v0], skills[v1], pts)
        best = skills
        if all(
            abs(skills[v].mu - actual[v].mu) < 1e-6
            and abs(skills[v].sigma - actual[v].sigma) < 1e-6
            for v in actual
        ):
            return skills
    return best


def kill_mid_game(
    engine: sa.Engine, a: Worker, start: Callable[[], Worker]
) -> tuple[tuple[int, int], Worker]:
    """SIGKILL worker `a` in the middle of a game and wait until another worker has replayed
    that game; the game and its lost attempt, and `a` started again (`start()`).

    What a held is read at once after the kill, before a live worker can take its jobs over
    (--stalled-after seconds later, when its slots may still be going down on a loaded
    machine). A game can still end between seeing it in play and the kill, or in the slot
    before it sees its pipe close: an attempt is lost only if it is still open, or was since
    closed as lost, once a's slots are gone. If a lost nothing, it is started and killed
    again."""
    name = a.name
    for _ in range(20):
        wait_until(lambda: playing(engine, name), f"worker {name} to be mid-game")
        a_slots = a.slot_pids()
        a.stop(signal.SIGKILL)
        held = q(
            engine,
            "SELECT game_id, attempt FROM attempts WHERE worker = :w AND ended_at IS NULL",
            w=name,
        )
        # its slot processes see their pipe close and take their bots down with them
        wait_until(
            lambda pids=a_slots: not any(Path(f"/proc/{p}").exists() for p in pids),
            f"{name}'s slots",
        )
        lost = [
            (g, n)
            for g, n in held
            if q(
                engine,
                "SELECT 1 FROM attempts WHERE game_id = :g AND attempt = :n "
                "AND (ended_at IS NULL OR outcome = :lost)",
                g=g,
                n=n,
                lost=fleet.LOST,
            )
        ]
        if lost:
            break
        a = start()
    else:
        raise AssertionError(f"worker {name} never died holding a game")
    game, attempt = lost[0]
    wait_until(
        lambda: q(
            engine,
            "SELECT 1 FROM games WHERE id = :g AND state = 'finished' AND attempt > :n",
            g=game,
            n=attempt,
        ),
        "the lost game to be replayed elsewhere",
    )
    return (game, attempt), start()


def check_every_game_once(
    engine: sa.Engine, lost: tuple[int, int], killed: str, at_least: int
) -> None:
    """After the workers drained the queue: every game finished and recorded exactly once,
    the killed worker's `lost` attempt (game, attempt) voided against it, unrated, and the
    ratings equal a replay of the recorded results."""
    game, attempt = lost
    states = dict(q(engine, "SELECT state, count(*) FROM games GROUP BY state"))
    assert set(states) == {"finished"}, states  # none lost, none stuck
    assert states["finished"] >= at_least
    n_records = q(engine, "SELECT count(*) FROM records")[0][0]
    assert n_records == states["finished"]  # recorded exactly once
    # the killed attempt: voided as the worker's fault, logged against that worker, unrated
    voids = q(engine, "SELECT game_id, attempt, kind FROM voids")
    assert (game, attempt, "worker_lost") in voids
    assert {k for _, _, k in voids} == {"worker_lost"}
    outcome = q(
        engine,
        "SELECT worker, outcome FROM attempts WHERE game_id = :g AND attempt = :n",
        g=game,
        n=attempt,
    )
    assert outcome == [(killed, fleet.LOST)]
    # every rated game counted once in both ratings, and they equal a replay of the results
    games_per_version = dict(q(engine, "SELECT version_id, games FROM ratings"))
    assert sum(games_per_version.values()) == 2 * states["finished"]
    replay = replayed_ratings(engine)
    for v, mu, sigma in q(engine, "SELECT version_id, mu, sigma FROM ratings"):
        assert replay[v].mu == pytest.approx(mu, abs=1e-6)
        assert replay[v].sigma == pytest.approx(sigma, abs=1e-6)


def test_workers_survive_kills_and_record_every_game_once(pg_league, tmp_path):
    d, url, engine = pg_league
    tag = uuid.uuid4().hex[:6]
    names = [f"wa-{tag}", f"wb-{tag}"]
    server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
    a = Worker(url, names[0], tmp_path, tmp_path / "wa.log")
    b = Worker(url, names[1], tmp_path, tmp_path / "wb.log")
    try:
        wait_until(lambda: finished(engine) >= 8, "the first games")
        # SIGKILL worker a in the middle of a game; its job stalls, b takes it over
        lost, a = kill_mid_game(
            engine, a, lambda: Worker(url, names[0], tmp_path, tmp_path / "wa.log")
        )
        wait_until(lambda: finished(engine) >= 25, "more games")

        # the server is killed; the workers go on with the games queued, then it comes back.
        # Killed while jobs wait untaken: games queued but not begun cannot all end between
        # the kill and the count (under load, a queue that was only in play had drained by
        # then, and no game was left to record without the server)
        wait_until(
            lambda: (
                q(engine, "SELECT count(*) FROM procrastinate_jobs WHERE status = 'todo'")[0][0]
                >= 4
            ),
            "jobs waiting for the workers",
        )
        server.kill()
        before = finished(engine)
        wait_until(lambda: finished(engine) >= before + 2, "games recorded without the server")
        server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
        status = server.get("/api/v1/workers").json()
        assert {w["name"] for w in status["items"]} >= set(names)
        wait_until(lambda: finished(engine) >= 50, "50 games", timeout=90)
    finally:
        server.stop()
    # with the server gone nothing new is queued: the workers drain what is
    wait_until(lambda: live_jobs(engine) == 0, "the queue to drain")
    for w in (a, b):
        assert w.stop() == 0
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)
    check_every_game_once(engine, lost, names[0], 50)


def test_worker_slots_keep_session_processes_when_the_league_allows(pg_league, tmp_path):
    """`reuse = true`: a worker's slot keeps each version's process between its games (the
    random bots offer sessions); every game is recorded in full, and stopping the worker
    leaves no bot process."""
    d, url, engine = pg_league
    toml = d / "league.toml"
    toml.write_text(toml.read_text().replace("reuse = false", "reuse = true", 1))
    name = f"ws-{uuid.uuid4().hex[:6]}"
    server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
    w = Worker(url, name, tmp_path, tmp_path / "ws.log", concurrency=1)
    try:
        wait_until(lambda: finished(engine) >= 6, "six games")
    finally:
        server.stop()
    wait_until(lambda: live_jobs(engine) == 0, "the queue to drain")
    assert w.stop() == 0
    assert not leftovers(tmp_path, [name]), leftovers(tmp_path, [name])
    records = [ledger.decompress_record(r) for (r,) in q(engine, "SELECT data FROM records")]
    assert len(records) >= 6
    assert all(rec["turns"] and all(e["kept"] for e in rec["exits"]) for rec in records)
    session_games = sorted(r["session_game"] for rec in records for r in rec["ready"])
    assert session_games[0] == 1 and session_games[-1] >= 4, session_games


def test_a_stale_attempt_arriving_late_is_refused(pg_league, tmp_path):
    """Worker a is frozen mid-game (SIGSTOP on it and its slot: a partition); its job stalls and
    worker b replays the game as attempt 2. Thawed, a finishes attempt 1 and tries to record it:
    zero rows updated, nothing written, counted as stale against a. Taken for dead by the
    queue meanwhile, a registers again and goes on playing, with no traceback in its log."""
    d, url, engine = pg_league
    tag = uuid.uuid4().hex[:6]
    names = [f"fa-{tag}", f"fb-{tag}"]
    server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
    a = Worker(url, names[0], tmp_path, tmp_path / "fa.log", concurrency=1)
    b: Worker | None = None
    pids: list[int] = []
    try:
        frozen: list[int] = []
        while not frozen:
            game = wait_until(lambda: playing(engine, names[0]), "worker a to be mid-game")[0]
            pids = [a.proc.pid, *a.slot_pids()]
            for p in pids:
                os.kill(p, signal.SIGSTOP)
            if game in playing(engine, names[0]):
                frozen = pids
            else:  # it finished in between: thaw and try the next game
                for p in pids:
                    os.kill(p, signal.SIGCONT)
        # b starts once a's heartbeat is older than --stalled-after: procrastinate then prunes
        # a's registration, and a, thawed, must register again to go on
        wait_until(
            lambda: (
                not q(
                    engine,
                    "SELECT 1 FROM procrastinate_workers "
                    "WHERE last_heartbeat > now() - make_interval(secs => :s)",
                    s=float(STALLED_AFTER) + 0.5,
                )
            ),
            "a's heartbeat to be stale",
        )
        b = Worker(url, names[1], tmp_path, tmp_path / "fb.log")
        wait_until(
            lambda: q(
                engine,
                "SELECT 1 FROM attempts WHERE game_id = :g AND attempt = 2 "
                "AND outcome = 'recorded'",
                g=game,
            ),
            "worker b to replay and record the game",
        )
        for p in frozen:
            with contextlib.suppress(ProcessLookupError):  # one that was exiting when frozen
                os.kill(p, signal.SIGCONT)
        wait_until(
            lambda: q(
                engine,
                "SELECT 1 FROM attempts WHERE game_id = :g AND attempt = 1 AND outcome = 'stale'",
                g=game,
            ),
            "worker a's late result to be refused",
        )
        # a, taken for dead meanwhile, registers again and goes on playing
        wait_until(
            lambda: q(
                engine,
                "SELECT 1 FROM attempts WHERE worker = :w AND game_id > :g "
                "AND outcome = 'recorded'",
                w=names[0],
                g=game,
            ),
            "worker a to record a game after its thaw",
        )
        assert "registered again" in a.log.read_text()
    finally:
        for p in pids:  # never leave a stopped process behind, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGCONT)
        server.stop()
        codes = [w.stop() for w in (a, b) if w is not None]
    assert codes == [0, 0], (codes, a.log.read_text()[-3000:])
    # procrastinate could not save the status of a's job, finished by b: one line (when asyncio
    # drops the failed task, at the latest on exit), no traceback
    assert "its status was not saved here" in a.log.read_text()
    assert "Traceback" not in a.log.read_text()
    with engine.connect() as conn:
        g = conn.execute(sa.select(schema.games).where(schema.games.c.id == game)).one()
        assert g.state == "finished" and g.attempt == 2
        assert (
            conn.execute(
                sa.select(sa.func.count())
                .select_from(schema.records)
                .where(schema.records.c.game_id == game)
            ).scalar()
            == 1
        )
        ws = {r.name: r for r in conn.execute(sa.select(schema.workers))}
        assert ws[names[0]].stale == 1
        kinds = [
            (v.attempt, v.kind)
            for v in conn.execute(sa.select(schema.voids).where(schema.voids.c.game_id == game))
        ]
        assert kinds == [(1, "worker_lost")]
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)


TOURNAMENT = """
name = "remote"
seed = 3
rounds = 4
concurrency = 4
bots = [{{ path = "{a}" }}, {{ path = "{b}" }}]
games = [{{ name = "stripes", options = {{ max_turns = 10 }} }}]
time_control = {{ base = 20.0, increment = 0.2, startup = 20.0 }}
results = "remote.sqlite"
"""


def test_tournament_played_by_workers(tmp_path):
    """`arena tournament run --database URL`: two league workers play a local round robin;
    every game is committed once into the results file, the report works, a second run
    plays nothing, and no process is left."""
    from arena.tournaments.store import Store

    bots = two_bots(tmp_path)
    cfg = tmp_path / "remote.toml"
    cfg.write_text(TOURNAMENT.format(a=bots[0], b=bots[1]))
    names = ["tw-a", "tw-b"]
    with postgres_database() as url:
        make_league(tmp_path / "league", url)
        workers = [Worker(url, n, tmp_path, tmp_path / f"{n}.log") for n in names]
        engine = sa.create_engine(url)
        try:
            run = arena("tournament", "run", str(cfg), "--database", url, "--plain", check=False)
            assert run.returncode == 0, run.stderr
            assert "complete: 8 games played this run" in run.stderr + run.stdout
            with Store(tmp_path / "remote.sqlite") as s:
                rows = s.games()
                assert len(rows) == 8 and len({r.game_id for r in rows}) == 8
                assert s.runs()[0]["played"] == 8
            outcomes = q(engine, "SELECT kind, worker FROM tournament_results")
            assert len(outcomes) == 8 and {k for k, _ in outcomes} == {"record"}
            # the bots travelled by content hash, one blob each
            assert q(engine, "SELECT count(*) FROM tournament_blobs")[0][0] == 2

            again = arena("tournament", "run", str(cfg), "--database", url, "--plain", check=False)
            assert again.returncode == 0, again.stderr
            assert "0 games played this run" in again.stderr + again.stdout
            assert q(engine, "SELECT count(*) FROM tournament_results")[0][0] == 8

            report = arena("tournament", "report", str(cfg), check=False)
            assert report.returncode == 0 and "Standings" in report.stdout, report.stderr
        finally:
            for w in workers:
                w.stop()
            engine.dispose()
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)


# --- durability and faults of `arena tournament run --database URL` -----------------------

TJOB = "arena.tournament.play_game"
ARENA = [sys.executable, "-m", "arena"]


class Runner:
    """A real `arena tournament run CONFIG --database URL --plain` process."""

    def __init__(self, cfg: Path, url: str, log: Path) -> None:
        self.log = log
        self.out = open(log, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [*ARENA, "tournament", "run", str(cfg), "--database", url, "--plain"],
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdout=self.out,
            stderr=self.out,
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait(self, timeout: float = 90) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the runner did not finish:\n{self.text()[-3000:]}") from None
        finally:
            self.out.close()

    def stop(self, sig: int) -> int:
        self.proc.send_signal(sig)
        return self.wait()


def tjobs(engine: sa.Engine, *statuses: str) -> int:
    """Tournament jobs in the queue (with these statuses, if given)."""
    sql = "SELECT count(*) FROM procrastinate_jobs WHERE task_name = :t"
    if statuses:
        sql += " AND status::text IN :s"
        stmt = sa.text(sql).bindparams(sa.bindparam("s", expanding=True))
        with engine.connect() as conn:
            return conn.execute(stmt, {"t": TJOB, "s": list(statuses)}).scalar_one()
    return q(engine, sql, t=TJOB)[0][0]


def jobs_ever(engine: sa.Engine) -> tuple[int, bool]:
    """The job id sequence: unchanged means no job was queued since (finished jobs are
    deleted, so counting rows cannot tell)."""
    return tuple(q(engine, "SELECT last_value, is_called FROM procrastinate_jobs_id_seq")[0])


def tconfig(tmp: Path, bots: list[Path], **settings: Any) -> Path:
    """A two-bot round robin of ten-turn Stripes; `rounds` games per pairing and seat."""
    values = {"rounds": 4, "concurrency": 8, "max_attempts": 3, **settings}
    text = TOURNAMENT.replace("rounds = 4\nconcurrency = 4\n", "").format(a=bots[0], b=bots[1])
    text += "".join(f"{k} = {v}\n" for k, v in values.items())
    cfg = tmp / "remote.toml"
    cfg.write_text(text)
    return cfg


def slow_bots(tmp: Path, pause: float = 0.1) -> list[Path]:
    """The two random bots, thinking `pause` seconds per action: games long enough to be
    caught in play."""
    bots = two_bots(tmp)
    for d in bots:
        src = (d / "bot.py").read_text()
        src = src.replace(
            "def choose(turn, bot):", f"def choose(turn, bot):\n    time.sleep({pause})"
        )
        (d / "bot.py").write_text("import time\n" + src)
    return bots


def bots_of(cache: Path) -> list[int]:
    """Bot processes running from a worker's cache (its games in play)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError):
                if os.readlink(d / "cwd").startswith(str(cache)):
                    found.append(int(d.name))
    return found


def test_tournament_runner_killed_or_interrupted_loses_nothing(tmp_path):
    """The runner is SIGKILLed with all its games queued and no worker running, run again and
    interrupted (exit 130) while the games are still queued; a worker then plays them, and a
    last run commits every game from the database: no job queued after the first run, every
    game once at attempt 1, the report works."""
    from arena.tournaments.store import Store

    cfg = tconfig(tmp_path, two_bots(tmp_path))
    names = [f"tk-{uuid.uuid4().hex[:6]}"]
    with postgres_database() as url:
        make_league(tmp_path / "league", url)
        engine = sa.create_engine(url)
        worker = None
        try:
            first = Runner(cfg, url, tmp_path / "run1.log")
            wait_until(lambda: tjobs(engine, "todo") == 8, "the 8 games to be queued", 60)
            assert first.stop(signal.SIGKILL) == -signal.SIGKILL
            queued = jobs_ever(engine)

            second = Runner(cfg, url, tmp_path / "run2.log")
            wait_until(lambda: "8 to play" in second.text(), "the second run to start", 60)
            assert second.stop(signal.SIGINT) == 130, second.text()
            assert "run the same command again to resume" in second.text()
            assert jobs_ever(engine) == queued and tjobs(engine, "todo") == 8

            worker = Worker(url, names[0], tmp_path, tmp_path / "w.log")
            wait_until(
                lambda: q(engine, "SELECT count(*) FROM tournament_results")[0][0] == 8,
                "the worker to play the queued games",
                60,
            )
            wait_until(lambda: tjobs(engine) == 0, "the jobs to end", 30)
            assert worker.stop() == 0
            worker = None

            # no worker now: the last run must find every outcome in the database
            last = Runner(cfg, url, tmp_path / "run3.log")
            assert last.wait(60) == 0, last.text()
            assert "complete: 8 games played this run" in last.text()
            assert jobs_ever(engine) == queued and tjobs(engine) == 0
            with Store(tmp_path / "remote.sqlite") as s:
                rows = s.games()
                assert len(rows) == 8 and len({r.game_id for r in rows}) == 8
                assert {r.attempt for r in rows} == {1}
                assert s.voids() == []
                assert [r["status"] for r in s.runs()] == ["killed", "stopped", "complete"]
            kinds = q(
                engine, "SELECT attempt, kind, count(*) FROM tournament_results GROUP BY 1, 2"
            )
            assert kinds == [(1, "record", 8)]
            report = arena("tournament", "report", str(cfg), check=False)
            assert report.returncode == 0 and "Standings" in report.stdout, report.stderr
        finally:
            if worker is not None:
                worker.stop()
            engine.dispose()
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)


def _caught_mid_game(engine: sa.Engine, worker: Worker, cache: Path) -> str:
    """Wait until `worker`, the only worker and with one slot, plays a game (its bots run);
    the game's id, read from its job."""

    def in_play() -> str | None:
        if not bots_of(cache):
            return None
        rows = q(
            engine,
            "SELECT args->>'game_id' FROM procrastinate_jobs "
            "WHERE task_name = :t AND status = 'doing'",
            t=TJOB,
        )
        return rows[0][0] if len(rows) == 1 else None

    return wait_until(in_play, f"{worker.name} to be mid-game", 60)


def test_tournament_game_of_a_killed_worker_is_replayed(tmp_path):
    """A worker is SIGKILLed in the middle of a tournament game: its slot takes the bots down,
    the job stalls, the live worker retries it after --stalled-after, and the game is
    committed once, at its one attempt (the worker's death is no void and no loss)."""
    from arena.tournaments.store import Store

    cfg = tconfig(tmp_path, slow_bots(tmp_path), rounds=2, concurrency=4)
    tag = uuid.uuid4().hex[:6]
    names = [f"tka-{tag}", f"tkb-{tag}"]
    with postgres_database() as url:
        make_league(tmp_path / "league", url)
        engine = sa.create_engine(url)
        a = Worker(url, names[0], tmp_path, tmp_path / "a.log", concurrency=1)
        b = None
        runner = Runner(cfg, url, tmp_path / "run.log")
        try:
            game = _caught_mid_game(engine, a, tmp_path / f"cache-{names[0]}")
            slots = a.slot_pids()
            assert a.stop(signal.SIGKILL) == -signal.SIGKILL
            wait_until(
                lambda: not any(Path(f"/proc/{p}").exists() for p in slots), "a's slot to exit"
            )
            wait_until(lambda: not bots_of(tmp_path / f"cache-{names[0]}"), "a's bots to exit")
            lost = q(engine, "SELECT 1 FROM tournament_results WHERE game_id = :g", g=game)
            assert not lost, "the killed worker recorded its game"
            b = Worker(url, names[1], tmp_path, tmp_path / "b.log")
            assert runner.wait(90) == 0, runner.text()
            assert "complete: 4 games played this run" in runner.text()
        finally:
            if runner.proc.poll() is None:
                runner.stop(signal.SIGKILL)
            for w in (a, b):
                if w is not None:
                    w.stop()
            try:
                rows = q(engine, "SELECT game_id, attempt, worker FROM tournament_results")
            finally:
                engine.dispose()
    log = (tmp_path / "b.log").read_text()
    assert f"(game {game}) was stalled: retried" in log
    assert "outcome dropped" not in log  # each attempt played once, its outcome the first
    assert len(rows) == 4 and len({(g, n) for g, n, _ in rows}) == 4
    assert (game, 1, names[1]) in rows
    with Store(tmp_path / "remote.sqlite") as s:
        got = s.games()
        assert sorted(r.game_id for r in got) == sorted(g for g, _, _ in rows)
        assert {r.attempt for r in got} == {1} and s.voids() == []
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)


def test_tournament_late_outcome_of_a_frozen_worker_is_dropped(tmp_path):
    """A worker is frozen mid-game (SIGSTOP on it and its slot: a partition); its job stalls
    and another worker plays the same attempt; thawed, the first finishes too and its outcome
    is dropped: one row per (game, attempt), the first, and the game once in the results."""
    from arena.tournaments.store import Store

    cfg = tconfig(tmp_path, slow_bots(tmp_path), rounds=1, concurrency=2)
    tag = uuid.uuid4().hex[:6]
    names = [f"tfa-{tag}", f"tfb-{tag}"]
    with postgres_database() as url:
        make_league(tmp_path / "league", url)
        engine = sa.create_engine(url)
        a = Worker(url, names[0], tmp_path, tmp_path / "a.log", concurrency=1)
        b = None
        runner = Runner(cfg, url, tmp_path / "run.log")
        frozen: list[int] = []
        try:
            game = _caught_mid_game(engine, a, tmp_path / f"cache-{names[0]}")
            frozen = [a.proc.pid, *a.slot_pids()]
            for p in frozen:
                os.kill(p, signal.SIGSTOP)
            assert not q(engine, "SELECT 1 FROM tournament_results WHERE game_id = :g", g=game)
            b = Worker(url, names[1], tmp_path, tmp_path / "b.log")
            assert runner.wait(90) == 0, runner.text()
            for p in frozen:
                os.kill(p, signal.SIGCONT)
            frozen = []
            wait_until(
                lambda: f"tournament game {game}: outcome dropped" in a.log.read_text(),
                "the frozen worker's late outcome to be dropped",
                60,
            )
        finally:
            for p in frozen:  # never leave a stopped process behind, whatever failed
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p, signal.SIGCONT)
            if runner.proc.poll() is None:
                runner.stop(signal.SIGKILL)
            for w in (a, b):
                if w is not None:
                    w.stop()
            try:
                rows = q(engine, "SELECT game_id, attempt, worker FROM tournament_results")
            finally:
                engine.dispose()
    assert len(rows) == 2 and (game, 1, names[1]) in rows
    with Store(tmp_path / "remote.sqlite") as s:
        got = s.games()
        assert sorted(r.game_id for r in got) == sorted(g for g, _, _ in rows)
        assert {r.attempt for r in got} == {1} and s.voids() == []
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)


def test_tournament_platform_fault_is_a_void_then_unplayable(tmp_path):
    """A bot archive damaged in the database (its bytes no longer match its hash) is refused by
    the worker: each attempt is voided with the reason, played again up to max_attempts, then
    the game is reported unplayable (exit 1); no bot is charged a game. The next run rewrites
    the archive and plays the games as attempt 3."""
    from arena.tournaments.store import Store

    bots = two_bots(tmp_path)
    cfg = tconfig(tmp_path, bots, rounds=1, concurrency=2, max_attempts=2)
    names = [f"tv-{uuid.uuid4().hex[:6]}"]
    with postgres_database() as url:
        make_league(tmp_path / "league", url)
        engine = sa.create_engine(url)
        worker = None
        try:
            runner = Runner(cfg, url, tmp_path / "run1.log")
            wait_until(lambda: tjobs(engine, "todo") == 2, "the games to be queued", 60)
            with engine.begin() as conn:  # before any worker has fetched it
                conn.execute(
                    sa.text(
                        "UPDATE tournament_blobs SET data = 'damaged'::bytea "
                        "WHERE sha256 = (SELECT min(sha256) FROM tournament_blobs)"
                    )
                )
            worker = Worker(url, names[0], tmp_path, tmp_path / "w.log")
            assert runner.wait(90) == 1, runner.text()
            text = runner.text()
            assert "incomplete: 0 games played this run, 2 missing, 4 voided attempts" in text
            line = next(x for x in text.splitlines() if x.startswith("unplayable (voided"))
            assert sorted(line.split(": ", 1)[1].split(", ")) == [
                "r1-stripes-p0-a",
                "r1-stripes-p0-b",
            ]
            with Store(tmp_path / "remote.sqlite") as s:
                assert s.games() == []  # a platform fault is nobody's loss
                voids = s.voids()
            assert sorted((v["game_id"], v["attempt"]) for v in voids) == [
                ("r1-stripes-p0-a", 1),
                ("r1-stripes-p0-a", 2),
                ("r1-stripes-p0-b", 1),
                ("r1-stripes-p0-b", 2),
            ]
            for v in voids:
                assert v["reason"].startswith("SandboxFault: archive "), v
                assert "the database's bytes do not match the hash" in v["reason"], v
            kinds = q(engine, "SELECT kind, count(*) FROM tournament_results GROUP BY 1")
            assert kinds == [("void", 4)]
            status = arena("tournament", "status", str(cfg))
            assert "voided      4 attempts, unplayable: r1-stripes-p0-a, r1-stripes-p0-b" in (
                status.stdout
            )

            again = Runner(cfg, url, tmp_path / "run2.log")
            assert again.wait(90) == 0, again.text()
            assert "complete: 2 games played this run, 0 missing" in again.text()
            with Store(tmp_path / "remote.sqlite") as s:
                rows = s.games()
                assert sorted((r.game_id, r.attempt) for r in rows) == [
                    ("r1-stripes-p0-a", 3),
                    ("r1-stripes-p0-b", 3),
                ]
                assert len(s.voids()) == 4
        finally:
            if worker is not None:
                worker.stop()
            engine.dispose()
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)


def test_tournament_job_ended_without_outcome_is_a_void(tmp_path):
    """A queued attempt whose job ends without an outcome (cancelled by an operator, or deleted;
    a worker of another version that lacks the task fails it the same way) is voided with the
    reason and played again as attempt 2, instead of the runner waiting for ever."""
    from arena.tournaments.store import Store

    cfg = tconfig(tmp_path, two_bots(tmp_path), rounds=1, concurrency=2, max_attempts=2)
    names = [f"tc-{uuid.uuid4().hex[:6]}"]
    with postgres_database() as url:
        make_league(tmp_path / "league", url)
        engine = sa.create_engine(url)
        worker = None
        runner = Runner(cfg, url, tmp_path / "run.log")
        try:
            wait_until(lambda: tjobs(engine, "todo") == 2, "the games to be queued", 60)
            ids = [r[0] for r in q(engine, "SELECT id FROM procrastinate_jobs ORDER BY id")]
            with engine.begin() as conn:  # procrastinate's own cancel: one kept, one deleted
                for job, delete in zip(ids, (False, True), strict=True):
                    conn.execute(
                        sa.text("SELECT procrastinate_cancel_job_v1(:j, false, :d)"),
                        {"j": job, "d": delete},
                    )
            wait_until(
                lambda: (
                    q(
                        engine,
                        "SELECT count(*) FROM procrastinate_jobs WHERE status = 'todo' "
                        "AND (args->>'attempt')::int = 2",
                    )[0][0]
                    == 2
                ),
                "both games to be queued again as attempt 2",
                60,
            )
            worker = Worker(url, names[0], tmp_path, tmp_path / "w.log")
            assert runner.wait(90) == 0, runner.text()
            assert "complete: 2 games played this run, 0 missing, 2 voided" in runner.text()
        finally:
            if runner.proc.poll() is None:
                runner.stop(signal.SIGKILL)
            if worker is not None:
                worker.stop()
            engine.dispose()
    with Store(tmp_path / "remote.sqlite") as s:
        assert {r.attempt for r in s.games()} == {2} and len(s.games()) == 2
        reasons = {v["reason"] for v in s.voids()}
    assert reasons == {
        "WorkerFault: its job is gone without an outcome",
        f"WorkerFault: its job {ids[0]} cancelled without an outcome",
    }
    assert not leftovers(tmp_path, names), leftovers(tmp_path, names)


HOLD = str(Path(__file__).resolve().parent / "record_hold")


def test_a_slot_plays_on_while_a_record_commits_and_a_crash_before_the_commit_replays(
    pg_league, tmp_path
):
    """A slot takes its next game while the last one's record is stored (arena/league/slot.py):
    with one slot, the worker claims and plays another game while the first game's record
    waits before its commit (held there: tests/league/record_hold). The slot is SIGKILLed
    there, between the game's end and its commit: the job is retried, the attempt voided as
    `worker_lost` against this worker and the game replayed; every game is recorded once, the
    ratings equal a replay of the results and no process is left."""
    d, url, engine = pg_league
    hold = tmp_path / "hold"
    hold.mkdir()
    os.mkfifo(hold / "release")
    name = f"wp-{uuid.uuid4().hex[:6]}"
    server = Server(d, "--no-local-games", "--stalled-after", STALLED_AFTER)
    env = {"PYTHONPATH": HOLD, "ARENA_TEST_HOLD_RECORD": str(hold)}
    w = Worker(url, name, tmp_path, tmp_path / "wp.log", concurrency=1, env=env)
    try:
        wait_until((hold / "held").exists, "a record held before its commit")
        # the held game: the worker's first open attempt (its next one may be open already)
        game, attempt = q(
            engine,
            "SELECT game_id, attempt FROM attempts WHERE worker = :w AND ended_at IS NULL "
            "ORDER BY started_at, game_id LIMIT 1",
            w=name,
        )[0]
        # the one slot plays its next game meanwhile
        wait_until(lambda: set(playing(engine, name)) - {game}, "the slot's next game", 60)
        assert q(engine, "SELECT state, attempt FROM games WHERE id = :g", g=game) == [
            ("running", attempt)
        ]
        slots = w.slot_pids()
        assert slots
        for pid in slots:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        wait_until(
            lambda: q(
                engine,
                "SELECT 1 FROM games WHERE id = :g AND state = 'finished' AND attempt > :n",
                g=game,
                n=attempt,
            ),
            "the game replayed",
        )
        wait_until(lambda: finished(engine) >= 6, "six games")
    except BaseException:
        with contextlib.suppress(OSError):  # a holder left waiting (the test failed) goes on
            os.close(os.open(hold / "release", os.O_WRONLY | os.O_NONBLOCK))
        w.stop(signal.SIGKILL)
        raise
    finally:
        server.stop()
    wait_until(lambda: live_jobs(engine) == 0, "the queue to drain")
    assert w.stop() == 0
    assert not leftovers(tmp_path, [name]), leftovers(tmp_path, [name])
    check_every_game_once(engine, (game, attempt), name, 6)
