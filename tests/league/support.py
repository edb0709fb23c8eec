"""Helpers for the league tests: databases on both backends, leagues in temp dirs, servers.

PostgreSQL: each test module gets a database of its own, uniquely named, created on the server
that .ci/setup-system starts (or env ARENA_TEST_POSTGRES, an admin URL) and dropped afterwards,
since other people's tests share that server. Where the server is unreachable the test skips
locally and, in CI, fails (tests/conftest.py turns the skip into a failure).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
ADMIN_URL = os.environ.get(
    "ARENA_TEST_POSTGRES", "postgresql+psycopg://arena:arena@127.0.0.1:5432/arena"
)
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh, empty PostgreSQL database; its URL. Dropped (forcibly) on exit."""
    name = f"arena_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    except sa.exc.OperationalError as e:
        admin.dispose()
        pytest.skip(f"PostgreSQL not reachable at {ADMIN_URL}: {str(e).splitlines()[0]}")
    url = sa.engine.make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@contextlib.contextmanager
def database_url(backend: str, tmp: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{tmp / 'league.sqlite'}"
    else:
        with postgres_database() as url:
            yield url


def database_fixtures() -> tuple[Any, Any]:
    """The fixtures `url`, a database migrated once a module (the slow part) on each backend,
    and `db`, that database emptied for each test; a module takes them with
    `url, db = database_fixtures()`. (Not a tests/league/conftest.py: the tests of other
    folders import their own conftest by that name.)"""
    from arena.league import migrations
    from arena.league.db.database import Database

    @pytest.fixture(scope="module", params=BACKENDS)
    def url(
        request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[str]:
        with database_url(request.param, tmp_path_factory.mktemp("db")) as url:
            engine = sa.create_engine(url)
            migrations.upgrade(engine)
            engine.dispose()
            yield url

    @pytest.fixture
    def db(url: str) -> Iterator[Any]:
        db = Database(url)
        empty_tables(db)
        yield db
        db.dispose()

    return url, db


def empty_tables(db: Any) -> None:
    """Delete every row of the league's tables (children first), keeping the schema: a test's
    fresh start on a database migrated once for its module."""
    from arena.league.db import schema

    with db.write() as conn:
        for table in reversed(schema.metadata.sorted_tables):
            conn.execute(table.delete())


@contextlib.contextmanager
def league_on(backend: str, root: Path, **settings: Any) -> Iterator[Any]:
    """A League (arena.league.service) on a fresh, migrated database of `backend` ("sqlite": a
    file in `root`; "postgresql": a database of its own), without a server: `settings` are
    league.toml's keys (games: stripes unless given). Its database is closed on exit."""
    from arena.league import migrations
    from arena.league.db.database import Database
    from arena.league.service import League
    from arena.league.settings import settings_from_dict

    with database_url(backend, root) as url:
        engine = sa.create_engine(url)
        migrations.upgrade(engine)
        engine.dispose()
        db = Database(url)
        try:
            yield League(
                settings_from_dict({"database": url, "games": ["stripes"], **settings}, root=root),
                db,
            )
        finally:
            db.dispose()


def sqlite_league(root: Path, **settings: Any) -> contextlib.AbstractContextManager[Any]:
    """`league_on("sqlite", root, **settings)`: the league most page and service tests use."""
    return league_on("sqlite", root, **settings)


def league_fixture(
    *,
    backends: Sequence[Any] = ("sqlite",),
    setup: Callable[[Any], None] | None = None,
    **settings: Any,
) -> Any:
    """The `league` fixture of a test module (`league = league_fixture(...)`): a League made by
    `league_on` for each of `backends` (`BACKENDS`: both), with `setup(league)` run first (the
    users and bots the module's tests share). The one way the league tests define `league`, so
    that the name means one thing: the fixtures that run a league directory as processes are
    named after what they yield (`served`, `server`, `pg_league`)."""
    many = len(backends) > 1

    @pytest.fixture(params=list(backends) if many else None)
    def league(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
        with league_on(request.param if many else backends[0], tmp_path, **settings) as made:
            if setup is not None:
                setup(made)
            yield made

    return league


@contextlib.contextmanager
def page_client(league: Any) -> Iterator[Any]:
    """Starlette's TestClient on trio over the league's pages and API (at http://league.test),
    its lifespan running."""
    from starlette.testclient import TestClient

    from arena.league.web.app import create_app

    with TestClient(create_app(league), base_url="http://league.test", backend="trio") as client:
        yield client


def csrf_of(html: str) -> str:
    """The CSRF token of the first form in a page."""
    m = re.search(r'name="csrf" value="([^"]+)"', html)
    assert m, "no CSRF field in the page"
    return m.group(1)


def login(client: httpx.Client, token: str, next_: str = "/", expect: int = 303) -> httpx.Response:
    """Log in through the /login form (with its CSRF token) as the pages' users do; the answer,
    not followed, whose status must be `expect` (303: logged in and sent to `next_`)."""
    csrf = csrf_of(client.get("/login").text)
    resp = client.post(
        "/login", data={"csrf": csrf, "token": token, "next": next_}, follow_redirects=False
    )
    assert resp.status_code == expect, resp.text
    return resp


def add_bots(db: Any, n: int, variants: list[str]) -> list[int]:
    """n bots (bot0, bot1, ...) of one owner, each an active version validated for `variants`:
    their version ids. The archives are not there (for the store and the scheduler, which play
    no game)."""
    from arena.league.db import roster

    with db.write() as conn:
        user = roster.add_user(conn, "owner", "owner-token")
        ids = []
        for i in range(n):
            v = roster.add_version(
                conn,
                owner_id=user.id,
                bot_name=f"bot{i}",
                archive_sha256="0" * 64,
                path=f"/bots/{i}",
                manifest={"league_name": f"bot{i}"},
            )
            roster.finish_validation(conn, v.id, {"passed": True}, True, variants)
            ids.append(v.id)
    return ids


def arena(
    *args: str, cwd: Path = ROOT, check: bool = True, **kw: Any
) -> subprocess.CompletedProcess:
    """Run `python -m arena ARGS` from this checkout."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "arena", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        **kw,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"arena {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def cli(*args: str) -> str:
    """Run an `arena` command in this process (quicker than a subprocess on a loaded
    machine; the commands that start servers are run as real processes instead); its stdout.
    Raises AssertionError with the one-line error on a non-zero exit."""
    from arena.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    if rc != 0:
        raise AssertionError(f"arena {' '.join(args)} failed ({rc}): {err.getvalue()}")
    return out.getvalue()


def make_league(directory: Path, database: str | None = None, **settings: str) -> Path:
    """`arena league init` with the database URL (default: its SQLite file in the directory),
    then settings overridden line by line."""
    cli("league", "init", str(directory), *(("--database", database) if database else ()))
    path = directory / "league.toml"
    text = path.read_text()
    for key, value in settings.items():
        text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        assert n == 1, key
    path.write_text(text)
    return directory


def add_user(directory: Path, name: str) -> str:
    """`arena league user add NAME`: the new user's API token."""
    return cli("league", "user", "add", name, "-C", str(directory)).strip().splitlines()[-1]


SLOW_BOT = """import time
from protocol.sdk import run_bot

def choose(turn, bot):
    time.sleep({delay})
    return bot.rng.choice(turn["legal"])

raise SystemExit(run_bot(choose))
"""


def add_slow_bots(directory: Path, delay: float, owner: str = "op") -> None:
    """Two house bots, slow-a and slow-b (owned by a new user `owner`), that wait `delay`
    seconds a move and then play at random: a game between them lasts long enough to be
    watched while it is played."""
    add_user(directory, owner)
    for name in ("slow-a", "slow-b"):
        bot = directory.parent / name
        bot.mkdir()
        (bot / "bot.toml").write_text(f'name = "{name}"\ncommand = ["python3", "bot.py"]\n')
        (bot / "bot.py").write_text(SLOW_BOT.format(delay=delay))
        cli("league", "bot", "add", str(bot), "--owner", owner, "-C", str(directory))


class Server:
    """A real `arena league serve` process on a free loopback port."""

    def __init__(self, directory: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        """`env`: added to the server's environment (a PYTHONPATH in it goes first)."""
        self.directory = directory
        added = env or {}
        env = dict(os.environ, **added)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (added.get("PYTHONPATH"), str(ROOT)) if p)
        self.stderr = open(directory / "serve.err", "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "arena",
                "league",
                "serve",
                str(directory),
                "--listen",
                "127.0.0.1:0",
                *extra,
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"on (http://\S+)", line)
        if not m:
            self.kill()
            raise AssertionError(f"server did not start: {line!r}\n{self.log()}")
        self.url = m.group(1)
        spec = httpx.get(f"{self.url}/api/v1/openapi.json", timeout=30).json()
        #: every answer is validated against the server's OpenAPI description
        self.openapi = OpenAPIChecker(spec)
        self.client = httpx.Client(
            base_url=self.url, timeout=30, event_hooks={"response": [self.openapi.hook]}
        )

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def log(self) -> str:
        return (self.directory / "serve.err").read_text(errors="replace")

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.client.get(path, **kw)

    def wait_for(self, predicate, timeout: float = 90.0, what: str = "condition") -> Any:
        """Poll the API until `predicate()` is truthy (the server does the work; no sleep
        stands in for synchronisation: the loop only bounds the waiting)."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited while waiting for {what}:\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}:\n{self.log()[-3000:]}")
            time.sleep(0.2)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=60)
        finally:
            self.stderr.close()
            if self.proc.stdout:
                self.proc.stdout.close()

    def kill(self) -> int:
        return self.stop(signal.SIGKILL)


def driver_fixture(width: int = 1280, height: int = 1000) -> Any:
    """A module-scoped `driver` fixture: one headless Chromium (the suite's `chromium`) for
    the tests of a module; `driver = driver_fixture()` there."""

    @pytest.fixture(scope="module")
    def driver(chromium: Any) -> Iterator[Any]:
        with chromium(width, height) as d:
            yield d

    return driver


#: the phone the pages are checked on: its CSS width and height
PHONE = (390, 844)


def phone_fixture() -> Any:
    """A module-scoped `driver` fixture like `driver_fixture`, emulating a phone (PHONE, a
    mobile viewport: the page's meta viewport applies, and a page wider than the screen makes
    the layout viewport wider, which `document.documentElement.scrollWidth` shows)."""

    @pytest.fixture(scope="module")
    def driver(chromium: Any) -> Iterator[Any]:
        with chromium(1280, 1000) as d:
            width, height = PHONE
            d.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True},
            )
            yield d

    return driver


def wait(driver: Any, condition: Any, timeout: float, what: str) -> Any:
    """WebDriverWait, failing with what the page and the browser said."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition, what)
    except TimeoutException:
        text = driver.find_element("tag name", "body").text[:1500]
        raise AssertionError(
            f"timed out waiting for {what} at {driver.current_url}:\n{text}\n"
            f"console: {driver.get_log('browser')}"
        ) from None


def console_errors(driver: Any) -> list[dict]:
    """SEVERE console entries (a missing favicon included: the league serves one)."""
    logs = driver.get_log("browser")
    return [e for e in logs if e["level"] == "SEVERE"]


def browser_login(driver: Any, server: Server, path: str, token: str) -> None:
    """Open a page that needs a user: sent to the login form, log in with the API token, and
    be back on the page."""
    driver.get(f"{server.url}{path}")
    assert "/login" in driver.current_url, driver.current_url  # the page needs a user
    driver.find_element("id", "token").send_keys(token)
    driver.find_element("id", "login").click()
    # the address changes when the next page starts loading, not when it is there: wait for
    # the page itself (under load, its elements were looked for too early)
    wait(
        driver,
        lambda d: (
            d.current_url.endswith(path)
            and d.execute_script("return document.readyState") == "complete"
        ),
        20,
        f"back on {path}",
    )


class OpenAPIChecker:
    """Validates answers against the server's own OpenAPI description: the status must be
    documented for the path and method, and the JSON body must match its schema."""

    def __init__(self, spec: dict[str, Any]) -> None:
        import jsonschema

        self.spec = spec
        self.routes = []
        for template, ops in spec["paths"].items():
            pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
            self.routes.append((re.compile(pattern), template, ops))
        self.jsonschema = jsonschema
        self.checked = 0

    def check(self, method: str, path: str, status: int, body: Any) -> None:
        matches = [(t, ops) for rx, t, ops in self.routes if rx.match(path)]
        # a literal path wins over a template (/api/v1/bots vs /api/v1/bots/{name})
        matches.sort(key=lambda m: m[0].count("{"))
        assert matches, f"{path} is not in the OpenAPI description"
        template, ops = matches[0]
        op = ops.get(method.lower())
        assert op is not None, f"{method} {template} is not in the OpenAPI description"
        response = op["responses"].get(str(status))
        assert response is not None, f"{method} {template}: status {status} is not documented"
        self.checked += 1
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        if schema is None:
            return
        full = {**schema, "components": self.spec["components"]}
        self.jsonschema.validate(body, full, cls=self.jsonschema.Draft202012Validator)

    def hook(self, response: Any) -> None:
        """An httpx response event hook."""
        response.read()
        if response.headers.get("content-type", "").startswith("application/json"):
            req = response.request
            self.check(req.method, req.url.path, response.status_code, response.json())
