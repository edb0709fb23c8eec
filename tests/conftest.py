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
