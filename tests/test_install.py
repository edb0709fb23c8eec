"""A normal (non-editable) install runs every command: the wheel `pip install .` would install,
put in a virtual environment of its own (no system site-packages, so nothing that only the
`[test]` extra or the machine brings can stand in for a missing dependency) with the
dependencies pyproject.toml names, and run from a directory with nothing of the repository
beside it. Every module of the package imports there, every command answers `--help`, `arena
rules`, `arena check` and `arena new` find the rules pages, the sparring bot and the starter
kits the wheel carries, and a
distributed league (`serve --no-local-games` and a `worker`, on a real PostgreSQL) plays games
with it. Slow (builds a wheel, makes a venv, installs the dependencies from the package index
pip is configured with: its cache, a local index or the network)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from .league.support import postgres_database

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(
    ".git", "__pycache__", "*.egg-info", "build", ".pytest_cache", ".hypothesis", "results",
    "tests", "benchmarks", "*.sqlite*",
)  # fmt: skip
#: fast games for the distributed league: ten turns of Stripes
GAMES = '[{ name = "stripes", options = { max_turns = 10 } }]'


def run(*argv: str | Path, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, (argv, result.stdout[-2000:], result.stderr[-2000:])
    return result


@dataclass(frozen=True)
class Install:
    wheel: Path
    venv: Path
    #: a directory with nothing of the repository in it, to run the commands from
    home: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def arena(self) -> Path:
        return self.venv / "bin" / "arena"


@pytest.fixture(scope="module")
def install() -> Iterator[Install]:
    # not under pytest's temporary directory, which only its owner may enter: bots of the
    # process sandbox run under uids of their own and need to read the venv's interpreter and
    # the SDK (the Dockerfile's chmod, likewise)
    tmp = Path(tempfile.mkdtemp(prefix="arena-install-"))
    try:
        tmp.chmod(0o755)
        # a copy, so that the in-tree build leaves nothing in the checkout
        src = tmp / "src"
        shutil.copytree(ROOT, src, ignore=SKIP)
        wheels = tmp / "wheels"
        run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, src, cwd=tmp)
        (wheel,) = wheels.glob("arena-*.whl")
        shutil.rmtree(src)
        venv = tmp / "venv"
        run(sys.executable, "-m", "venv", venv, cwd=tmp)
        # the run-time dependencies only, as `pip install .` installs them
        run(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel, cwd=tmp)
        run("chmod", "-R", "a+rX", venv, cwd=tmp)
        home = tmp / "home"
        home.mkdir()
        yield Install(wheel, venv, home)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.slow
def test_wheel_installed_in_a_fresh_venv_has_rules_and_sparring_bot(install: Install) -> None:
    names = set(zipfile.ZipFile(install.wheel).namelist())
    assert {
        "arena/_rules/stripes.md",
        "arena/_sparring/bot.toml",
        "arena/_sparring/bot.py",
    } <= names
    assert "arena/viewer/templates/replay.html" in names
    kit_files = {
        f"arena/_kits/{p.relative_to(ROOT / 'protocol' / 'kits')}"
        for p in (ROOT / "protocol" / "kits").rglob("*")
        if p.is_file()
    }
    assert {"arena/_kits/java/Bot.java", "arena/_kits/rust/src/main.rs"} <= kit_files
    assert kit_files <= names, sorted(kit_files - names)  # every kit file, dot files too
    assert "arena/league/migrations/script.py.mako" in names

    where = run(
        install.python, "-c",
        "import arena.referee.check as c; print(c.__file__, c.CHECK_OPPONENT)",
        cwd=install.home,
    ).stdout.split()  # fmt: skip
    assert all(w.startswith(str(install.venv)) for w in where), where  # not the checkout's copy

    rules = run(install.arena, "rules", "stripes", cwd=install.home)
    assert rules.stdout.startswith("# Stripes!")
    check = run(install.arena, "check", ROOT / "bots" / "random-c", cwd=install.home)
    assert "random-c: all checks passed" in check.stdout, check.stdout
    # `arena new` copies a kit from the installed package, not from the checkout
    run(install.arena, "new", "mybot", "--lang", "go", cwd=install.home)
    assert sorted(p.name for p in (install.home / "mybot").iterdir()) == sorted(
        p.name for p in (ROOT / "protocol" / "kits" / "go").iterdir()
    )


#: the protocol's schema and test vectors as an installed package finds them, and the vectors'
#: generator run there against the files the wheel carries (the engines it was built with)
SHIPPED_DATA = """
import json
from protocol.messages import SCHEMA_PATH
from protocol.vectors import load, path
from protocol.vectors.__main__ import main
schema = json.loads(SCHEMA_PATH.read_text())
print(json.dumps({
    "schema": str(SCHEMA_PATH), "defs": sorted(schema["$defs"]), "vectors": str(path("papagra")),
    "counts": {g: len(load(g)["vectors"]) for g in ("papagra", "hexaphage")},
    "check": main(["--check"]),
}))
"""


@pytest.mark.slow
def test_the_wheel_ships_the_protocol_schema_and_test_vectors(install: Install) -> None:
    names = set(zipfile.ZipFile(install.wheel).namelist())
    shipped = {f"protocol/vectors/{p.name}" for p in (ROOT / "protocol" / "vectors").glob("*.json")}
    assert len(shipped) == 5 and shipped <= names, sorted(shipped - names)
    assert "protocol/schema/protocol.json" in names
    out = json.loads(run(install.python, "-c", SHIPPED_DATA, cwd=install.home).stdout)
    assert out["schema"].startswith(str(install.venv)), out  # not the checkout's copy
    assert out["vectors"].startswith(str(install.venv)), out
    assert {"hello", "turn", "end", "ready", "move", "resign", "log"} <= set(out["defs"])
    assert min(out["counts"].values()) > 10
    assert out["check"] == 0  # the generator runs without the test extra, and agrees


#: every module of the installed package imported, each in turn; the ones that fail, with why
IMPORT_ALL = """
import importlib, json, pkgutil, arena, protocol
failed = {}
for pkg in (arena, protocol):
    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        # __main__ runs the CLI; alembic's env script runs only inside an alembic command (the
        # league test below runs it: init and migrate)
        if m.name.endswith((".__main__", ".migrations.env")):
            continue
        try:
            importlib.import_module(m.name)
        except Exception as e:
            failed[m.name] = f"{type(e).__name__}: {e}"
print(json.dumps({"failed": failed, "arena": arena.__file__}))
"""


@pytest.mark.slow
def test_every_module_of_the_installed_package_imports(install: Install) -> None:
    # what any module imports at run time is a dependency, not only a test extra: lazy imports
    # inside functions are in modules that this imports too
    out = json.loads(run(install.python, "-c", IMPORT_ALL, cwd=install.home).stdout)
    assert out["arena"].startswith(str(install.venv))
    assert out["failed"] == {}


#: every command path of the CLI (`league worker`, `tournament run`, ...), walked in argparse
COMMANDS = """
import argparse, json
from arena.cli import build_parser

def walk(parser, path):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path
    for action in subs:
        for name, child in action.choices.items():
            yield from walk(child, [*path, name])

print(json.dumps(list(walk(build_parser(), []))))
"""


@pytest.mark.slow
def test_every_command_of_the_installed_package_answers_help(install: Install) -> None:
    commands = json.loads(run(install.python, "-c", COMMANDS, cwd=install.home).stdout)
    assert ["league", "worker"] in commands and ["league", "serve"] in commands
    assert len(commands) > 15
    for command in commands:
        out = run(install.arena, *command, "--help", cwd=install.home).stdout
        assert out.startswith(f"usage: arena {' '.join(command)}"), (command, out[:300])


class Process:
    """A command of the installed arena, its output (stdout and stderr) kept in a file."""

    def __init__(self, install: Install, log: Path, *args: str) -> None:
        self.log = log
        self.out = open(log, "ab")  # noqa: SIM115
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        self.proc = subprocess.Popen(
            [str(install.arena), *args],
            cwd=install.home,
            env=env,
            stdout=self.out,
            stderr=subprocess.STDOUT,
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float = 120) -> re.Match:
        """Poll the log for `pattern` (bounded; a process that exits first fails the test)."""
        deadline = time.monotonic() + timeout
        while not (m := re.search(pattern, self.text())):
            assert self.proc.poll() is None, f"exited {self.proc.returncode}:\n{self.text()}"
            assert time.monotonic() < deadline, f"no {pattern!r} in time:\n{self.text()}"
            time.sleep(0.1)
        return m

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            self.out.close()


@pytest.fixture
def league_db() -> Iterator[str]:
    with postgres_database() as url:
        yield url


@pytest.mark.slow
@pytest.mark.postgres
def test_distributed_league_plays_from_the_installed_package(
    install: Install, league_db: str
) -> None:
    # init, user and bot add, then the server that plays nothing and a worker that plays
    # everything: games recorded by the worker, both stopped cleanly by SIGTERM
    league = install.home / "league"
    arena = install.arena
    run(arena, "league", "init", league, "--database", league_db, cwd=install.home)
    toml = league / "league.toml"
    toml.write_text(re.sub(r"(?m)^games = .*$", f"games = {GAMES}", toml.read_text()))
    run(arena, "league", "user", "add", "op", "--admin", "-C", league, cwd=install.home)
    for bot in ("random-py", "random-c"):
        add = [arena, "league", "bot", "add", ROOT / "bots" / bot, "--owner", "op", "-C", league]
        run(*add, cwd=install.home)

    server = Process(
        install, league / "serve.log", "league", "serve", str(league),
        "--listen", "127.0.0.1:0", "--no-local-games", "--stalled-after", "5",
    )  # fmt: skip
    worker = Process(
        install, league / "worker.log", "league", "worker", "--database", league_db,
        "--name", "w1", "--concurrency", "2", "--cache", str(install.home / "cache"),
        "--heartbeat", "0.5", "--stalled-after", "5",
    )  # fmt: skip
    engine = sa.create_engine(league_db)
    try:
        url = server.wait_for(r"on (http://\S+)").group(1)
        worker.wait_for(r"w1 started")
        deadline = time.monotonic() + 180
        while (played := _played_by(engine, "w1")) < 2:
            assert worker.proc.poll() is None, worker.text()
            assert server.proc.poll() is None, server.text()
            assert time.monotonic() < deadline, f"{played} game(s):\n{worker.text()}"
            time.sleep(0.2)
        workers = httpx.get(f"{url}/api/v1/workers", timeout=30).json()
        assert "w1" in json.dumps(workers)
        assert httpx.get(f"{url}/", timeout=30).status_code == 200  # the pages' templates
    finally:
        engine.dispose()
        rc_worker, rc_server = worker.stop(), server.stop()
    assert (rc_worker, rc_server) == (0, 0), (worker.text(), server.text())
    assert "Traceback" not in worker.text() + server.text()


def _played_by(engine: sa.Engine, worker: str) -> int:
    """Games finished whose last attempt was the worker's."""
    with engine.connect() as conn:
        return conn.execute(
            sa.text(
                "SELECT count(*) FROM games g JOIN attempts a ON a.game_id = g.id "
                "AND a.attempt = g.attempt WHERE g.state = 'finished' AND a.worker = :w"
            ),
            {"w": worker},
        ).scalar_one()
