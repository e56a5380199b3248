"""Which Chromium renders the pages, found before anything is fetched.

A crawl asked to render that cannot must stop at once with one line naming what
to install, not after fetching a thousand pages. Looking is cheap: nothing is
launched here, and Playwright is only checked for, not started.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from crawler.core.errors import ConfigError

BROWSER_ENV = "SITEMAP_CRAWLER_BROWSER"
ON_PATH = ("chromium", "chromium-browser", "google-chrome")
INSTALL = ("install Chromium: 'playwright install chromium', or your system's chromium "
           "package, or name one with --browser PATH")


def require_playwright() -> None:
    """Playwright's Python package is the optional ``render`` extra."""
    if importlib.util.find_spec("playwright") is None:
        raise ConfigError("--render needs Playwright: pip install 'sitemap-crawler[render]', "
                          f"then {INSTALL}")


def find_browser(explicit: str | None, environ: dict[str, str] | os._Environ[str] = os.environ
                 ) -> str:
    """The Chromium to launch: ``--browser``, then ``$SITEMAP_CRAWLER_BROWSER``, then
    Playwright's own download, then ``chromium``, ``chromium-browser`` and
    ``google-chrome`` on ``PATH``."""
    for given, source in ((explicit, "--browser"), (environ.get(BROWSER_ENV), BROWSER_ENV)):
        if given:
            if not _runnable(Path(given)):
                raise ConfigError(f"{source} {given!r} is not an executable file; {INSTALL}")
            return given
    for candidate in playwright_downloads(environ):
        if _runnable(candidate):
            return str(candidate)
    for name in ON_PATH:
        found = shutil.which(name)
        if found is not None:
            return found
    raise ConfigError(f"--render found no Chromium; {INSTALL}")


def playwright_downloads(environ: dict[str, str] | os._Environ[str]) -> list[Path]:
    """The Chromium builds ``playwright install chromium`` leaves, newest first (its
    cache is ``$PLAYWRIGHT_BROWSERS_PATH``, else ``~/.cache/ms-playwright``)."""
    root = Path(environ.get("PLAYWRIGHT_BROWSERS_PATH") or
                Path(environ.get("HOME", "~")).expanduser() / ".cache" / "ms-playwright")
    if not root.is_dir():
        return []
    found: list[Path] = []
    for build in sorted(root.glob("chromium-*"), reverse=True):
        found += [build / "chrome-linux" / "chrome", build / "chrome-linux64" / "chrome",
                  build / "chrome-mac" / "Chromium.app" / "Contents" / "MacOS" / "Chromium"]
    return found


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)
