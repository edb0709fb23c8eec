"""Suite-wide policy: in CI a missing service is a failure, not a skip.

Locally a test whose service (Docker, PostgreSQL, Chromium, a C compiler, Node) is missing skips
and says why, so a contributor without them can still run the rest. CI machines install and start
every service in `.ci/setup-system`; there a skip would hide a broken setup step, so the same
skip is reported as a failure with its reason.
"""

from __future__ import annotations

import os

import pytest


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
