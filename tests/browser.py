"""Headless Chromium (Debian's ``chromium``) driven by Playwright, to look at what a person sees.

``.ci/run`` installs Chromium and sets ``SITEMAP_CRAWLER_REQUIRE_BROWSER=1``, so in
CI a missing browser fails the run; on a developer's machine without it, the
browser tests are skipped with the command that installs it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("SITEMAP_CRAWLER_REQUIRE_BROWSER"):
            pytest.fail("Chromium is required here (SITEMAP_CRAWLER_REQUIRE_BROWSER) but "
                        "not installed")
        pytest.skip("no Chromium: apt-get install chromium (CI installs it)")
    return found


@contextmanager
def browser_page() -> Iterator[Any]:
    """A fresh page in headless Chromium, closed afterwards."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 800})
            yield page
        finally:
            browser.close()
