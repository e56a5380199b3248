"""Never silent: on a terminal the progress line moves every second through every phase,
each naming itself with its counts and an estimate; piped, a line a minute at most.

The terminal is a real pseudo-terminal (``pty``), so rich draws as it would for a
person; the audit is made slow in its external phase (one origin, its links
answered 0.4 s late, at most one a second) so the phase lasts several seconds
with no page arriving at all.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import REPO
from siteserver import RunningServer

from crawler.cli.progress import CrawlDisplay

pytestmark = pytest.mark.timeout(120)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


@pytest.mark.slow(10)
def test_the_external_phase_shows_its_counts_estimate_and_a_ticking_clock(
        tmp_path: Path) -> None:
    other_root = tmp_path / "other"
    other_root.mkdir()
    root = tmp_path / "site"
    root.mkdir()
    with RunningServer(other_root, {"/ext*": {"delay": 0.4}}) as other:
        links = "".join(f'<a href="{other.url}/ext{n}.html">x</a>' for n in range(6))
        (root / "index.html").write_text(f"<!doctype html><title>Home</title>{links}")
        with RunningServer(root) as site:
            screen = _on_a_terminal("audit", site.url + "/", "--report",
                                    str(tmp_path / "r.json"), "--check-external",
                                    "--compare-sitemap", "off", "--external-max-rate", "1")
    lines = [line.strip() for line in _ANSI.sub("\n", screen).split("\n")]
    external = [line for line in lines if " · external links " in line]
    assert external, screen[-2000:]
    clocks = {line.split(" · ")[0] for line in external}
    assert len(clocks) >= 4, external  # it ticked through the phase, second by second
    assert any(re.search(r"external links \d of 6 checked · slowest http://127\.0\.0\.1:"
                         r"\d+: \d left · about 0:0\d left", line) for line in external), external
    assert "external links 0 of 6 checked" in " ".join(external)  # shown from its start


def _on_a_terminal(*args: str) -> str:
    """Run the CLI with its stderr on a pseudo-terminal; what the terminal received."""
    leader, follower = pty.openpty()
    env = {**{k: v for k, v in os.environ.items() if "proxy" not in k.lower()},
           "NO_PROXY": "*", "TERM": "xterm-256color", "COLUMNS": "220"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-m", "crawler", *args], cwd=REPO, env=env,
                               stdout=subprocess.DEVNULL, stderr=follower,
                               stdin=subprocess.DEVNULL)
    os.close(follower)
    received = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other end closed
                return
            if not chunk:
                return
            received.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert process.wait(timeout=90) == 0
    reader.join(timeout=5)
    os.close(leader)
    return received.decode("utf-8", "replace")


class _Lines:
    is_terminal = False

    def __init__(self) -> None:
        self.lines: list[str] = []

    def print(self, *objects: object, markup: bool | None = None) -> None:
        self.lines.append(" ".join(map(str, objects)))


@pytest.mark.parametrize("quiet", [False, True])
def test_piped_the_line_comes_at_most_once_an_interval_and_never_when_quiet(
        quiet: bool) -> None:
    console = _Lines()
    display = CrawlDisplay(quiet=quiet, verbose=False, console=console)
    display.piped_every = 0.2
    with display:
        time.sleep(1.1)
    if quiet:
        assert console.lines == []
        return
    assert 3 <= len(console.lines) <= 5, console.lines  # 1.1 s / 0.2 s, never more
    assert all(line.startswith("0:0") and "starting" in line for line in console.lines)


def test_piped_a_line_every_ten_seconds_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SITEMAP_CRAWLER_PROGRESS_EVERY", raising=False)
    display = CrawlDisplay(quiet=False, verbose=False, console=_Lines())
    assert display.piped_every == 10.0


@pytest.mark.slow(4)
def test_into_a_log_the_progress_comes_every_interval_and_at_each_phase_end(
        tmp_path: Path) -> None:
    """A cron or CI log of an audit: the line every interval while pages are slow, and
    one line as each phase ends (pages, then the live sitemap, then its orphans)."""
    root = tmp_path / "site"
    root.mkdir()
    links = "".join(f'<a href="/slow{n}.html">x</a>' for n in range(6))
    (root / "index.html").write_text(f"<!doctype html><title>Home</title>{links}")
    for n in range(6):
        (root / f"slow{n}.html").write_text(f"<!doctype html><title>Slow {n}</title>")
    env = {**{k: v for k, v in os.environ.items() if "proxy" not in k.lower()},
           "NO_PROXY": "*", "SITEMAP_CRAWLER_PROGRESS_EVERY": "0.5"}
    with RunningServer(root, {"/slow*": {"delay": 0.6}}) as site:
        done = subprocess.run(
            [sys.executable, "-m", "crawler", "audit", site.url + "/", "--concurrency", "1",
             "--no-check-external", "--no-soft-404", "--report", str(tmp_path / "r.json")],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    ticks = [line for line in lines if re.match(r"^\d+:\d\d · pages \d+ of \d+ known", line)]
    assert len(ticks) >= 3, lines  # 3.6 s of slow pages, a line each half second
    ends = [line.split(" · ")[1] for line in lines if " done, " in line]
    assert ends == ["pages done, live sitemap next", "live sitemap done, orphans next"], lines
    assert "\x1b[" not in done.stderr  # plain text: no terminal codes in a log
