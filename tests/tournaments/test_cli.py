"""The CLI: kill -9 in the middle of a real run and resume; status, report, record, errors."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.tournaments.store import Store

from .test_runner import game_signature
from .tournament_helpers import BOTS, REPO, write_config

CONFIG = """
name = "{name}"
seed = 5
rounds = 3
concurrency = 2
bots = ["{py}", "{c}"]
games = ["wrigglers", "quadraphages"]
time_control = {{ base = 20.0, increment = 0.2, startup = 20.0 }}
results = "{name}.sqlite"
"""


def _arena(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
        **kw,
    )


def _count(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    except sqlite3.OperationalError:  # schema not created yet
        return 0


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (workers, bots), from /proc."""
    parent: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        for child, ppid in parent.items():
            if ppid == p and child not in out:
                out.add(child)
                todo.append(child)
    return out


def wait_gone(pids: set[int], timeout: float = 20.0) -> set[int]:
    """Poll until none of `pids` is alive (zombies count as gone); the ones still alive."""
    deadline = time.monotonic() + timeout
    while True:
        alive = set()
        for p in pids:
            try:
                state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                alive.add(p)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _start_and_wait(cfg: Path, results: Path, n: int) -> subprocess.Popen:
    """Start a run and return once the database holds at least `n` games."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "run", str(cfg), "--plain"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while _count(results) < n:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"run ended or stalled before {n} games: {proc.stderr.read()}")
        time.sleep(0.02)  # polling the database, not synchronising by sleeping
    return proc


def _write(tmp_path: Path, name: str) -> Path:
    return write_config(
        tmp_path,
        CONFIG.format(name=name, py=BOTS / "random-py", c=BOTS / "random-c"),
        f"{name}.toml",
    )


@pytest.mark.slow
def test_kill_9_and_resume_equals_uninterrupted(tmp_path: Path) -> None:
    total = 12
    ref_cfg = _write(tmp_path, "ref")
    done = _arena("tournament", "run", str(ref_cfg), "--quiet")
    assert done.returncode == 0, done.stderr

    cfg = _write(tmp_path, "killed")
    results = tmp_path / "killed.sqlite"
    proc = _start_and_wait(cfg, results, 2)
    below = descendants(proc.pid)
    assert below, "the runner has worker and bot processes"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # the workers see their pipe close, abandon their games, kill their bots and exit
    assert wait_gone(below) == set()
    at_kill = _count(results)
    assert 2 <= at_kill < total

    status = _arena("tournament", "status", str(results))
    assert status.returncode == 0 and f"{at_kill}/{total}" in status.stdout

    resumed = _arena("tournament", "run", str(cfg), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    with Store(results) as s, Store(tmp_path / "ref.sqlite") as ref:
        assert s.count_games() == total
        assert game_signature(s) == game_signature(ref)
        runs = s.runs()
        assert [r["status"] for r in runs] == ["killed", "complete"]
        assert runs[1]["pending"] == total - at_kill == runs[1]["played"]


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_resumes(tmp_path: Path) -> None:
    cfg = _write(tmp_path, "sigint")
    results = tmp_path / "sigint.sqlite"
    proc = _start_and_wait(cfg, results, 1)
    below = descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err
    assert "Traceback" not in err
    assert wait_gone(below) == set()
    stopped_at = _count(results)
    with Store(results) as s:
        assert [r["status"] for r in s.runs()] == ["stopped"]
    resumed = _arena("tournament", "run", str(cfg), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    with Store(results) as s:
        assert s.count_games() == 12
        assert s.runs()[1]["played"] == 12 - stopped_at


@pytest.mark.slow
def test_status_report_record(tmp_path: Path) -> None:
    text = CONFIG.format(name="rep", py=BOTS / "random-py", c=BOTS / "random-c")
    cfg = write_config(tmp_path, text.replace("rounds = 3", "rounds = 1"), "rep.toml")
    run = _arena("tournament", "run", str(cfg), "--plain")
    assert run.returncode == 0, run.stderr
    assert "[4/4" in run.stdout and "Standings" in run.stdout

    status = _arena("tournament", "status", str(cfg))
    assert status.returncode == 0 and "4/4 (complete)" in status.stdout

    rep = _arena("tournament", "report", str(cfg), "--format", "json")
    data = json.loads(rep.stdout)
    assert data["progress"]["played"] == 4
    assert sum(s["points"] for s in data["standings"]) == 4
    assert len(data["ratings"]["players"]) == 2

    out = tmp_path / "standings.csv"
    assert (
        _arena("tournament", "report", str(cfg), "--format", "csv", "-o", str(out)).returncode == 0
    )
    assert out.read_text().startswith("scope,rank,bot,elo")
    games = _arena(
        "tournament", "report", str(tmp_path / "rep.sqlite"), "--format", "csv", "--games"
    )
    gid = games.stdout.splitlines()[1].split(",")[0]

    record_file = tmp_path / "game.json"
    rec = _arena("tournament", "record", str(cfg), gid, "-o", str(record_file))
    assert rec.returncode == 0, rec.stderr
    assert json.loads(record_file.read_text())["match_id"] == f"rep/{gid}"

    # both ways of replaying a tournament game show the same game
    from_file = _arena("replay", str(record_file), "--no-board")
    direct = _arena("replay", str(cfg), gid, "--no-board")
    assert from_file.returncode == 0 and direct.returncode == 0, direct.stderr
    assert direct.stdout == from_file.stdout and "turn 3:" in direct.stdout
    missing = _arena("replay", str(cfg), "no-such-game")
    assert missing.returncode == 2 and "no recorded game 'no-such-game'" in missing.stderr


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("rounds = 0\n", "key 'rounds': must be at least 1"),
        ('bots = ["nowhere"]\n', "key 'bots[0]': no bot manifest"),
        ('[time_control]\nbase = "fast"\n', "key 'time_control.base'"),
    ],
)
def test_bad_config_is_one_line(tmp_path: Path, text: str, needle: str) -> None:
    if "bots" not in text:
        text = f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]\n' + text
    result = _arena("tournament", "run", str(write_config(tmp_path, text)))
    assert result.returncode == 2
    assert result.stderr.startswith("arena: error: ") and needle in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_status_of_missing_results(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]\n')
    result = _arena("tournament", "status", str(cfg))
    assert result.returncode == 2 and "no results yet" in result.stderr


def test_unwritable_results_file_is_one_line_before_any_game(tmp_path: Path) -> None:
    """An immutable results file (root ignores modes, so chattr +i; else 0444) and a results
    directory that cannot be created are one-line errors, with no game played."""
    import os

    bots = f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]\ngames = ["stripes"]\n'
    cfg = write_config(tmp_path, bots + 'results = "r.sqlite"\n')
    assert _arena("tournament", "run", str(cfg), "--quiet").returncode == 0
    write_config(tmp_path, bots + 'results = "r.sqlite"\nrounds = 2\n')
    results = tmp_path / "r.sqlite"
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(results)], check=True)
    else:
        results.chmod(0o444)
    try:
        result = _arena("tournament", "run", str(cfg), "--quiet")
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(results)], check=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"arena: error: {results}: cannot write the results file")
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert _count(results) == 2

    (tmp_path / "file").write_text("")
    cfg2 = write_config(tmp_path, bots + 'results = "file/r.sqlite"\n', "t2.toml")
    result = _arena("tournament", "run", str(cfg2), "--quiet")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("arena: error: ") and "results file" in result.stderr


def test_concurrency_flag_is_checked_as_a_flag(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]\n')
    bad = _arena("tournament", "run", str(cfg), "-j", "-2")
    assert bad.returncode == 2 and "argument -j/--concurrency" in bad.stderr, bad.stderr
    assert str(cfg) not in bad.stderr  # the flag is wrong, not the file


def test_changed_config_names_every_change(tmp_path: Path) -> None:
    bots = f'bots = ["{BOTS / "random-py"}", "{BOTS / "strong"}"]\nresults = "r.sqlite"\n'
    first = write_config(tmp_path, bots + 'games = ["stripes", "wrigglers"]\n', "old.toml")
    changed = write_config(
        tmp_path,
        f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-js"}"]\nresults = "r.sqlite"\n'
        'games = [{ name = "wrigglers", options = { size = 13 } }, "papagra"]\n'
        'time_control = "5+0.05"\n',
        "new.toml",
    )
    from arena.tournaments.config import load_config
    from arena.tournaments.runner import load_bot_specs

    cfg = load_config(first)
    names = [s.name for s in load_bot_specs(cfg)]
    with Store(tmp_path / "r.sqlite", create=True) as s:
        pairs = [(names[0], names[1])]
        s.bind(cfg.identity(names), cfg.to_dict(), names, pairs, cfg.fingerprint(names))
    result = _arena("tournament", "run", str(changed), "--quiet")
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("arena: error: ") and "Traceback" not in line
    for change in (
        "bot 'strong' removed",
        "game 'stripes' removed",
        """game 'wrigglers': options changed from {} to {"size":13}""",
        "time_control.base changed from 10.0 to 5.0",
        "time_control.increment changed from 0.1 to 0.05",
    ):
        assert change in line, line
    assert "time_control.startup" not in line  # unchanged fields are not named


HOLD_THE_LOCK = """
import sys, time
from arena.tournaments.store import Store
store = Store(sys.argv[1], create=True)
store.lock_for_writing()
store.bind({}, {"name": "held", "games": [], "rounds": 1}, ["a", "b"], [("a", "b")], "fp")
store.start_run(2, 2)
print("running", flush=True)
time.sleep(600)
"""


def _run_line(status: str) -> str:
    (line,) = [x for x in status.splitlines() if x.startswith("run 1 ")]
    return line


def test_status_says_killed_as_soon_as_the_run_is_gone(tmp_path: Path) -> None:
    results = tmp_path / "held.sqlite"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(results)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "running\n"
        alive = _arena("tournament", "status", str(results))
        assert alive.returncode == 0, alive.stderr
        assert _run_line(alive.stdout).split()[3] == "running"
    finally:
        holder.kill()
        holder.wait()
    dead = _arena("tournament", "status", str(results))
    assert dead.returncode == 0, dead.stderr
    assert _run_line(dead.stdout).split()[3] == "killed"
    report = json.loads(_arena("tournament", "report", str(results), "--format", "json").stdout)
    assert [r["status"] for r in report["runs"]] == ["killed"]


def test_report_on_a_file_that_is_not_sqlite(tmp_path: Path) -> None:
    junk = tmp_path / "results.sqlite"
    junk.write_bytes(b"\x00\x01 definitely not a database")
    result = _arena("tournament", "report", str(junk))
    assert result.returncode == 2
    assert "not a results file (not an SQLite database" in result.stderr
    assert "TOML" not in result.stderr
    other = tmp_path / "results.bin"
    other.write_bytes(b"\xff\xfe binary")
    result = _arena("tournament", "status", str(other))
    assert result.returncode == 2
    assert "neither a tournament config" in result.stderr and "nor a results file" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_a_bot_that_cannot_start_stops_the_run_before_any_game_or_is_dropped(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bot.toml").write_text('name = "broken"\ncommand = ["./missing"]\n')
    cfg = write_config(
        tmp_path,
        f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}", "{broken}"]\n'
        'games = ["stripes"]\nresults = "r.sqlite"\n',
    )
    refused = _arena("tournament", "run", str(cfg), "--quiet")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith("arena: error: bot broken: cannot start ./missing")
    assert "--drop-broken" in refused.stderr
    assert _count(tmp_path / "r.sqlite") == 0

    dropped = _arena("tournament", "run", str(cfg), "--quiet", "--drop-broken")
    assert dropped.returncode == 1, dropped.stderr
    assert "dropped broken: bot broken: cannot start ./missing" in dropped.stderr
    assert "incomplete: 2 games played this run, 4 missing" in dropped.stderr
    assert _count(tmp_path / "r.sqlite") == 2  # only random-py against random-c


def test_docker_isolation_for_bots_without_an_image_is_one_line(tmp_path: Path) -> None:
    """Once an ExceptionGroup traceback, with the run marked failed in the results file."""
    cfg = write_config(
        tmp_path,
        f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]\ngames = ["stripes"]\n'
        'isolation = "docker"\nresults = "r.sqlite"\n',
    )
    result = _arena("tournament", "run", str(cfg), "--quiet")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("arena: error: bot random-py: docker mode needs an image")
    assert not (tmp_path / "r.sqlite").exists()  # no run was started, none marked failed


#: a PostgreSQL URL nothing listens on (port 1): refused at once
NOWHERE = "postgresql+psycopg://nobody@127.0.0.1:1/none"


def _one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("arena: error: "), result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    return result.stderr


@pytest.mark.parametrize("where", ["flag", "config"])
def test_workers_refuse_a_command_bot_before_anything(tmp_path: Path, where: str) -> None:
    """A bot given as a command has no directory to send to a league's workers: one line,
    exit 2, before the results file is made or the database is reached."""
    text = (
        f'bots = [{{ path = "{BOTS / "random-py"}" }}, '
        f'{{ command = "python3 {BOTS / "random-py" / "bot.py"}", name = "cmd" }}]\n'
        'games = ["stripes"]\nresults = "r.sqlite"\n'
    )
    if where == "config":
        text += f'database = "{NOWHERE}"\n'
    extra = ["--database", NOWHERE] if where == "flag" else []
    err = _one_line(_arena("tournament", "run", str(write_config(tmp_path, text)), *extra))
    assert "bot 'cmd': a bot given as a command cannot be sent to workers" in err
    assert not (tmp_path / "r.sqlite").exists()


def test_workers_database_must_be_postgresql(tmp_path: Path) -> None:
    bots = f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]\nresults = "r.sqlite"\n'
    cfg = write_config(tmp_path, bots + 'database = "sqlite:///x.sqlite"\n')
    err = _one_line(_arena("tournament", "run", str(cfg)))
    assert "key 'database': expected a PostgreSQL URL" in err and str(cfg) in err
    cfg = write_config(tmp_path, bots + "database = 5\n")
    assert "key 'database'" in _one_line(_arena("tournament", "run", str(cfg)))
    cfg = write_config(tmp_path, bots)
    err = _one_line(_arena("tournament", "run", str(cfg), "--database", "sqlite:///x.sqlite"))
    assert err.startswith("arena: error: --database: expected a PostgreSQL URL")
    assert not (tmp_path / "r.sqlite").exists() and not (tmp_path / "x.sqlite").exists()


def test_workers_database_unreachable_is_one_line(tmp_path: Path) -> None:
    """A database nobody answers at: one line naming the problem, no game played."""
    bots = f'bots = ["{BOTS / "random-py"}", "{BOTS / "random-c"}"]\nresults = "r.sqlite"\n'
    cfg = write_config(tmp_path, bots + 'games = ["stripes"]\n')
    err = _one_line(_arena("tournament", "run", str(cfg), "--database", NOWHERE))
    assert "cannot use the database" in err
    assert _count(tmp_path / "r.sqlite") == 0


def _processes_with(mark: str) -> list[int]:
    """Live processes whose environment holds `mark` (the run's, its workers' and bots')."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if mark.encode() in (d / "environ").read_bytes():
                    found.append(int(d.name))
            except OSError:
                continue
    return found


def test_workers_started_ahead_end_with_a_run_refused_before_any_game(tmp_path: Path) -> None:
    """`tournament run` starts its worker processes before it checks the bots and opens the
    results file (arena/workers/prelaunch.py): a run refused there leaves none behind, and a
    run that plays uses them (its games are played, none voided)."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bot.toml").write_text('name = "broken"\ncommand = ["./missing"]\n')
    cfg = write_config(
        tmp_path,
        f'bots = ["{BOTS / "random-c"}", "{broken}"]\ngames = ["stripes"]\n'
        'results = "r.sqlite"\nconcurrency = 2\noversubscribe = true\n',
    )
    mark = f"ARENA_TEST_MARK={os.urandom(8).hex()}"
    env = {**os.environ, mark.split("=")[0]: mark.split("=")[1]}
    refused = _arena("tournament", "run", str(cfg), "--quiet", env=env)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith("arena: error: bot broken: cannot start ./missing")
    assert _processes_with(mark) == []

    good = write_config(
        tmp_path,
        f'bots = ["{BOTS / "random-c"}", "{BOTS / "random-py"}"]\ngames = ["stripes"]\n'
        'results = "g.sqlite"\nconcurrency = 2\noversubscribe = true\n',
        "g.toml",
    )
    played = _arena("tournament", "run", str(good), "--quiet", env=env)
    assert played.returncode == 0, played.stderr
    assert "complete: 2 games played this run, 0 missing, 0 voided attempts" in played.stderr
    assert _processes_with(mark) == []


def test_run_forks_its_workers_after_importing_trio_once(tmp_path: Path) -> None:
    """`tournament run` forks its worker processes once it has imported what they run
    (arena/workers/prelaunch.py): the referee, the sandbox and trio are imported once in the
    whole run, not once more by every worker's own interpreter; the run plays, and neither
    its workers nor their bots outlive it."""
    cfg = write_config(
        tmp_path,
        f'bots = ["{BOTS / "random-c"}", "{BOTS / "random-py"}"]\ngames = ["stripes"]\n'
        'results = "f.sqlite"\nconcurrency = 2\noversubscribe = true\nrounds = 2\n',
    )
    mark = f"ARENA_TEST_MARK={os.urandom(8).hex()}"
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", mark.split("=")[0]: mark.split("=")[1]}
    played = _arena("tournament", "run", str(cfg), "--quiet", env=env)
    assert played.returncode == 0, played.stderr[-3000:]
    assert "complete: 4 games played this run, 0 missing, 0 voided attempts" in played.stderr
    imported = [
        line.rsplit("|", 1)[1].strip()
        for line in played.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    assert imported.count("arena.cli") == 1  # the listing covers the run's interpreters
    assert imported.count("trio") == 1
    assert imported.count("arena.workers.child") == 1
    assert _processes_with(mark) == []
