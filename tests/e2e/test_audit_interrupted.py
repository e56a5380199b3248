"""An audit stopped at any phase (Ctrl-C, SIGTERM) writes its reports from what it knew,
says which phase it did not finish, and exits 130 — over a socket, a real signal each.

Each phase is made slow on purpose (a delayed route), the signal is sent once the
server has seen the phase begin, and the reports are read back.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _site(tmp_path: Path, other: str = "") -> Path:
    root = tmp_path / "site"
    root.mkdir(exist_ok=True)
    pages = "".join(f'<a href="/p{n}.html">page {n}</a>\n' for n in range(12))
    links = "".join(f'<a href="{other}/ext{n}.html">elsewhere {n}</a>\n' for n in range(8)
                    ) if other else ""
    (root / "index.html").write_text(f"<!doctype html><title>Home</title><h1>Home</h1>"
                                     f"{pages}{links}")
    for n in range(12):
        (root / f"p{n}.html").write_text(f"<!doctype html><title>Page {n}</title><p>{n}</p>")
    return root


def _stop_when(seen: Callable[[], bool], *args: str, how: int = signal.SIGINT
               ) -> subprocess.CompletedProcess[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "crawler", "audit", *args], cwd=REPO, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**{k: v for k, v in os.environ.items() if "proxy" not in k.lower()},
             "NO_PROXY": "*"})
    deadline = time.monotonic() + 60
    while not seen():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)  # well inside the phase
    process.send_signal(how)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_interrupted_while_fetching_pages_the_pages_read_are_reported(tmp_path: Path) -> None:
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    with RunningServer(_site(tmp_path), {"/p*": {"delay": 1.5}}) as site:
        done = _stop_when(lambda: any(path.startswith("/p") for path in site.paths()),
                          site.url + "/", "--report", str(report), "--report", str(page),
                          "--no-check-external", "--concurrency", "2")
    assert done.returncode == 130, done.stderr
    assert "interrupted (pages: " in done.stderr and done.stderr.count("\n") == 1
    assert done.stderr.count("interrupted") == 1, done.stderr  # said once
    document = json.loads(report.read_text())
    stopped = document["interrupted"]
    assert re.fullmatch(r"pages: \d+ of \d+ fetched", stopped), stopped
    fetched, seen = (int(word) for word in stopped.split()[1:4:2])
    assert site.url + "/" in {row["url"] for row in document["urls"]}  # what was read
    html = page.read_text()
    assert "Interrupted:" in html
    live = document["findings"]["orphans"]
    assert live["not_checked"] == "not reached: the run was interrupted"
    # a check that did not see every page is never "clean": checked so far
    titles = document["findings"]["titles"]
    assert titles["so_far"] == f"{fetched:,} of {seen:,} pages", titles
    clean = html[html.index('class="clean"'):].split("</p>")[0] if 'class="clean"' in html else ""
    assert "titles" not in clean and "broken links" not in clean, clean
    text = re.sub(r"<[^>]+>", "", html)
    assert f"Checked so far ({fetched:,} of {seen:,} pages), nothing found yet:" in text
    _look_at(page, f"{fetched:,} of {seen:,} pages")


def _look_at(page_file: Path, so_far: str) -> None:
    """The stopped audit as a person opens it: the banner first, nothing called clean
    that was only checked so far."""
    from browser import browser_page

    with browser_page() as page:
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(page_file.as_uri())
        banner = page.locator("#interrupted")
        assert banner.is_visible() and banner.inner_text().startswith("Interrupted: pages: ")
        fix_first = page.locator("#fix-first").inner_text()
        assert f"Checked so far ({so_far}), nothing found yet:" in fix_first
        shots = REPO / ".pytest_cache" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "audit-interrupted.png"))


def test_terminated_while_reading_the_live_sitemap(tmp_path: Path) -> None:
    root = _site(tmp_path)
    (root / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/'
        'schemas/sitemap/0.9"><url><loc>http://127.0.0.1:{{PORT}}/</loc></url></urlset>')
    report = tmp_path / "r.md"
    with RunningServer(root, {"/sitemap.xml": {"delay": 20}}) as site:
        done = _stop_when(lambda: "/sitemap.xml" in site.paths(), site.url + "/",
                          "--report", str(report), "--no-check-external",
                          how=signal.SIGTERM)
    assert done.returncode == 130, done.stderr
    text = report.read_text()
    assert "**Interrupted:** live sitemap: stopped while it was read" in text
    assert "Not checked (not reached: the run was interrupted)" in text


def test_interrupted_while_checking_external_links_says_how_far_it_got(
        tmp_path: Path) -> None:
    other_root = tmp_path / "other"
    other_root.mkdir()
    report = tmp_path / "r.json"
    with RunningServer(other_root, {"/ext*": {"delay": 0.4}}) as other, RunningServer(
            _site(tmp_path, other.url)) as site:
        done = _stop_when(
            lambda: sum(path.startswith("/ext") for path in other.paths()) >= 2,
            site.url + "/", "--report", str(report), "--check-external",
            "--compare-sitemap", "off", "--external-max-rate", "2")
    assert done.returncode == 130, done.stderr
    document = json.loads(report.read_text())
    stopped = document["interrupted"]
    assert stopped.startswith("external links: ") and stopped.endswith(" of 8 checked"), stopped
    checked = int(stopped.split()[2])
    assert 1 <= checked < 8
    found = document["findings"]
    broken = found["broken-external-links"]["items"]  # every page there is a 404
    unchecked = found["unchecked-external-links"]["items"]
    assert len(broken) == checked and len(unchecked) == 8 - checked  # none dropped
    assert len(document["urls"]) >= 13  # the pages, all read before the phase began
