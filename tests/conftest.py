"""Suite-wide policy: in CI a missing service is a failure, not a skip. And the one way tests
start a headless Chromium (`chromium` fixture).

Locally a test whose service (Docker, PostgreSQL, Chromium, a C compiler, Node) is missing skips
and says why, so a contributor without them can still run the rest. CI machines install and start
every service in `.ci/setup-system`; there a skip would hide a broken setup step, so the same
skip is reported as a failure with its reason.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: the flags that work as root in a container: no sandbox, no GPU, no background networking
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if _in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every service must be present: {reason}"
    return report


@pytest.fixture(scope="session")
def chromium(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[..., AbstractContextManager[object]]:
    """`with chromium(width, height) as driver:` a selenium WebDriver for Debian's headless
    Chromium with a fresh profile and the browser console kept (goog:loggingPrefs), quit on
    exit. A fixture of any scope wraps it, so each group of tests chooses its browser's life."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        pytest.skip(f"Debian's chromium and chromium-driver are needed: missing {missing}")

    @contextmanager
    def start(width: int = 1280, height: int = 900) -> Iterator[object]:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        profile = tmp_path_factory.mktemp("chromium-profile")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in (*CHROMIUM_FLAGS, f"--window-size={width},{height}"):
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        driver.set_page_load_timeout(60)
        try:
            yield driver
        finally:
            driver.quit()
            shutil.rmtree(profile, ignore_errors=True)

    return start


# -- running the suite on several processes (pytest-xdist: `-n 3 --dist loadfile` in
# pyproject.toml) --------------------------------------------------------------------------
#
# A test file's tests run on one worker, one after another (its module-scoped fixtures, a
# migrated database, a league server, a browser, are made once, as in a run on one process),
# and so do the files of a `SCOPES` entry. The files of `ALONE` run while no other test runs:
# a real-time (SCHED_FIFO) hog and real-time bots pinned to a CPU would starve the other tests,
# which would disturb what they measure. The league's files, the slowest, are handed out
# first, so that no long file starts last.

#: files whose tests run on one worker together: the docker tests of tests/hostile/ build and
#: use one image under a fixed tag
SCOPES = {"tests/hostile/": "tests/hostile/"}
#: files whose tests run alone (they are one scope too)
ALONE = ("tests/referee/test_fair_clocks.py", "tests/referee/test_time_bank.py")
#: files handed out first, in this order (the rest in collection order)
FIRST = ("tests/league/", "tests/test_install.py", "tests/kits/")


def _scope_of(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    if path in ALONE:
        return "alone"
    return next((scope for prefix, scope in SCOPES.items() if path.startswith(prefix)), path)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    if config.getvalue("dist") != "loadfile":
        return None  # the scheduler asked for on the command line
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope_of(nodeid)

    return Scheduling(config, log)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a worker: the files of FIRST first (the scheduler hands scopes out in the order of
    the collection: --no-loadscope-reorder); a stable sort, so each file's tests keep their
    order (and its module-scoped fixtures their single set-up)."""
    if not hasattr(config, "workerinput"):
        return

    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next((i for i, p in enumerate(FIRST) if path.startswith(p)), len(FIRST))

    items.sort(key=rank)


class _AloneLock:
    """A readers-writer lock between the workers of one run: flock on two files in the run's
    base temporary directory (pytest keeps the last few)."""

    def __init__(self, directory: Path) -> None:
        self.gate = os.open(directory / "alone.gate", os.O_RDWR | os.O_CREAT, 0o600)
        self.main = os.open(directory / "alone.lock", os.O_RDWR | os.O_CREAT, 0o600)
        self.alone = False

    def enter(self, alone: bool) -> None:
        import fcntl

        if self.alone and alone:
            return  # still held since the last test that runs alone
        self.release()
        # the gate: a worker waiting for the exclusive lock holds it, and no new shared lock
        # is taken meanwhile (the exclusive one is not starved by the other workers)
        fcntl.flock(self.gate, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        fcntl.flock(self.main, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if alone:
            self.alone = True  # the gate stays closed until the tests that run alone are done
        else:
            fcntl.flock(self.gate, fcntl.LOCK_UN)

    def release(self) -> None:
        import fcntl

        fcntl.flock(self.main, fcntl.LOCK_UN)
        if self.alone:
            fcntl.flock(self.gate, fcntl.LOCK_UN)
            self.alone = False


_alone_lock: _AloneLock | None = None


def _is_alone(item: pytest.Item | None) -> bool:
    return item is not None and item.nodeid.split("::", 1)[0] in ALONE


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Each test of a worker holds the shared lock, each test of ALONE the exclusive one (kept
    from one to the next). Outside the test's timeout (pytest-timeout's wrapper is inside this
    one): a test is not charged for waiting while others run alone."""
    global _alone_lock
    if not hasattr(item.config, "workerinput"):  # one process: nothing runs beside the test
        return (yield)
    if _alone_lock is None:
        # each worker's base temporary directory is one of the run's (.../popen-gwN)
        _alone_lock = _AloneLock(item.config._tmp_path_factory.getbasetemp().parent)
    _alone_lock.enter(_is_alone(item))
    try:
        return (yield)
    finally:
        if not (_is_alone(item) and _is_alone(nextitem)):
            _alone_lock.release()
