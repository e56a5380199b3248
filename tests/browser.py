"""Headless Chromium (Debian's ``chromium``) driven by Playwright, to look at what a person sees.

``.ci/run`` installs Chromium and sets ``SITEMAP_CRAWLER_REQUIRE_BROWSER=1``, so in
CI a missing browser fails the run; on a developer's machine without it, the
browser tests are skipped with the command that installs it.

One Chromium serves every look a test process takes: it is started at the first
look and ends with the test session, and each look connects to it over the
DevTools protocol with a context of its own (its own cookies, storage and
viewport). Starting a Chromium cost about a second of CPU for each of some
twenty looks. Playwright itself is started for each look, not kept: while it
runs, its synchronous API holds the thread's event loop, and the tests that run
asyncio in-process would fail.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
_SHARED: dict[str, Any] = {}  # "process", "profile", "endpoint": the running Chromium


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("SITEMAP_CRAWLER_REQUIRE_BROWSER"):
            pytest.fail("Chromium is required here (SITEMAP_CRAWLER_REQUIRE_BROWSER) but "
                        "not installed")
        pytest.skip("no Chromium: apt-get install chromium (CI installs it)")
    return found


def _endpoint() -> str:
    """The DevTools address of this test process's Chromium, started if it is not
    running (on a port of its own choosing, on 127.0.0.1)."""
    process = _SHARED.get("process")
    if process is not None and process.poll() is None:
        return str(_SHARED["endpoint"])
    close_shared_browser()  # one that died: its profile too
    executable = chromium_path()
    profile = Path(tempfile.mkdtemp(prefix="test-chromium-"))
    process = subprocess.Popen(
        [executable, *CHROMIUM_FLAGS, "--remote-debugging-port=0",
         f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _SHARED.update(process=process, profile=profile)
    active = profile / "DevToolsActivePort"  # the port, once it listens
    deadline = time.monotonic() + 60
    while not (active.exists() and active.read_text().strip()):
        if process.poll() is not None or time.monotonic() > deadline:
            close_shared_browser()
            raise AssertionError(f"Chromium did not start (exit {process.returncode})")
        time.sleep(0.05)
    _SHARED["endpoint"] = f"http://127.0.0.1:{active.read_text().split()[0]}"
    return str(_SHARED["endpoint"])


def close_shared_browser() -> None:
    """Ends this test process's Chromium (the test session's end calls it)."""
    process, profile = _SHARED.pop("process", None), _SHARED.pop("profile", None)
    _SHARED.pop("endpoint", None)
    if process is not None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    if profile is not None:
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def browser_page() -> Iterator[Any]:
    """A fresh page in a context of its own (nothing shared with an earlier look),
    closed afterwards."""
    from playwright.sync_api import sync_playwright

    endpoint = _endpoint()
    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(endpoint)
        context = browser.new_context(viewport={"width": 1100, "height": 800})
        try:
            yield context.new_page()
        finally:
            with contextlib.suppress(Exception):
                context.close()


@contextmanager
def page_without_xslt(*, javascript: bool = True) -> Iterator[Any]:
    """A page in a Chromium of its own with XSLT turned off (``--disable-features=XSLT``,
    what Chrome's 2026 releases do by default), and JavaScript on or off."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(),
            args=[flag for flag in CHROMIUM_FLAGS if flag != "--headless"]
            + ["--disable-features=XSLT"])
        try:
            context = browser.new_context(viewport={"width": 1100, "height": 800},
                                          java_script_enabled=javascript)
            yield context.new_page()
        finally:
            browser.close()
