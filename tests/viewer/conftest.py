"""Viewer test fixtures: one headless Chromium for the whole session, driven by selenium.

Chromium runs with the flags that work as root in a container (no sandbox, no GPU, no
background networking) and a fresh profile directory; the page loads are file:// URLs of files
the tests wrote, so nothing needs a network.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def browser(chromium) -> Iterator[object]:
    """One headless Chromium for the whole session's viewer tests."""
    with chromium(1280, 900) as driver:
        yield driver
