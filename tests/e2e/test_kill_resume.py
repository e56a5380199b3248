"""Kill -9 at any moment, resume, and end exactly where an uninterrupted crawl ends.

A crawl of a paginated site (each page links only to the next, the shape that
loses whole chains when a page is committed without its links) is SIGKILLed at
random moments — while crawling, committing or publishing — and resumed with
``--resume`` until it completes. The sitemap must equal the uninterrupted
run's byte for byte, and no page committed to the state before a kill may be
downloaded again. Seeded, so a failure can be replayed:

    KILL_SEED=7 python -m pytest tests/e2e/test_kill_resume.py     # replay one seed
    KILL_COUNT=500 python -m pytest -m marathon tests/e2e/test_kill_resume.py  # the long run
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO
from siteserver import RunningServer

PAGES = 300
SEED = int(os.environ.get("KILL_SEED", "20261123"))


def chain_site(root: Path, pages: int = PAGES) -> Path:
    """Pages p000..p299, each linking only to the next; every 25th also to a side page."""
    root.mkdir(parents=True)
    (root / "index.html").write_text('<html><body><a href="p000.html">start</a></body></html>')
    for n in range(pages):
        links = f'<a href="p{n + 1:03d}.html">next</a>' if n + 1 < pages else ""
        if n % 25 == 0:
            links += f'<a href="side/s{n:03d}.html">side</a>'
        (root / f"p{n:03d}.html").write_text(f"<html><body><h1>Page {n}</h1>{links}</body></html>")
    (root / "side").mkdir()
    for n in range(0, pages, 25):
        (root / "side" / f"s{n:03d}.html").write_text(f"<p>side {n}</p>")
    return root


def committed_pages(state: Path, origin: str) -> set[str]:
    """Paths whose page the state file holds as done in its current run."""
    if not state.exists():
        return set()
    with sqlite3.connect(f"file:{state}?mode=ro", uri=True) as db:
        try:
            run = db.execute("SELECT value FROM meta WHERE key = 'run'").fetchone()
            rows = db.execute("SELECT u.url FROM pages p JOIN urls u ON u.id = p.url_id "
                              "WHERE p.run = ?", (run[0] if run else "0",)).fetchall()
        except sqlite3.OperationalError:  # killed before the schema was written
            return set()
    return {url.removeprefix(origin) for (url,) in rows}


def run_state(state: Path) -> str | None:
    if not state.exists():
        return None
    with sqlite3.connect(f"file:{state}?mode=ro", uri=True) as db:
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'run_state'").fetchone()
        except sqlite3.OperationalError:
            return None
    return row[0] if row else None


def outputs(out: Path) -> dict[str, bytes]:
    # sitemap.html says when it was written, the one file two runs cannot share
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())
            if not p.name.startswith(".") and p.name != "sitemap.html"}


def kill_and_resume(tmp_path: Path, kills: int, seed: int,
                    options: tuple[str, ...] = ()) -> dict[str, int]:
    """Cycles of (crawl, kill, resume…, complete) on one server until ``kills`` kills
    were made; every cycle's result is compared with one uninterrupted crawl
    (made without ``options``)."""
    rng = random.Random(seed)
    site_dir = chain_site(tmp_path / "site")
    routes = {"/p*": {"delay": 0.004}}  # about 2-3 s a crawl: room for kills at any point
    figures = {"kills": 0, "runs": 0, "cycles": 0, "pages": PAGES, "redownloaded": 0}
    with RunningServer(site_dir, routes) as site:
        base = ["crawl", site.url + "/", "--concurrency", "2", "--quiet"]
        reference = subprocess.run(
            [sys.executable, "-m", "crawler", *base, "--out", str(tmp_path / "ref"),
             "--state", str(tmp_path / "ref.db")], cwd=REPO, capture_output=True, text=True,
            timeout=120)
        assert reference.returncode == 0, reference.stderr
        expected = outputs(tmp_path / "ref")
        while figures["kills"] < kills:
            figures["cycles"] += 1
            cycle = tmp_path / f"cycle-{figures['cycles']}"
            out, state = cycle / "out", cycle / "state.db"
            args = [*base, *options, "--out", str(out), "--state", str(state)]
            done_before: set[str] = set()
            runs = 0
            while True:
                mark = len(site.log)
                process = subprocess.Popen([sys.executable, "-m", "crawler", *args,
                                            *(["--resume"] if runs else [])],
                                           cwd=REPO, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True)
                runs += 1
                figures["runs"] += 1
                if figures["kills"] < kills:
                    # Anywhere in a run: start-up (~0.5 s), the crawl, a commit (every
                    # 2 s), publishing. Runs that live past a commit make progress.
                    time.sleep(rng.uniform(0.2, 4.0))
                    if process.poll() is None:
                        process.kill()
                        figures["kills"] += 1
                _stdout, stderr = process.communicate(timeout=120)
                again = {hit.path for hit in site.log[mark:]} & done_before
                figures["redownloaded"] += len(again)
                assert not again, (f"seed {seed}, cycle {figures['cycles']}, run {runs}: "
                                   f"committed pages fetched again: {sorted(again)[:5]}")
                if process.returncode == 0 or run_state(state) == "complete":
                    break  # done, or killed after publishing and marking the run done
                assert process.returncode == -9, f"seed {seed}, run {runs}: {stderr}"
                done_before |= committed_pages(state, site.url)
            assert outputs(out) == expected, f"seed {seed}, cycle {figures['cycles']}: differ"
    return figures


@pytest.mark.slow(22)
@pytest.mark.timeout(900)
def test_kills_then_the_same_sitemap(tmp_path: Path) -> None:
    """Four kills (at random moments of seeded runs: start-up, crawl, commit, publish)
    keep the suite inside its five minutes; the marathon (below) is the long run, and
    KILL_COUNT sets another number here."""
    kills = int(os.environ.get("KILL_COUNT", "4"))
    figures = kill_and_resume(tmp_path, kills, SEED)
    assert figures["kills"] >= kills and figures["redownloaded"] == 0


@pytest.mark.slow(31)
@pytest.mark.timeout(900)
def test_kills_with_two_workers_then_the_same_sitemap(tmp_path: Path) -> None:
    """The coordinator killed under its worker processes: they leave with it (their
    socket closes), and the resumed runs end on the one-worker crawl's sitemap."""
    figures = kill_and_resume(tmp_path, 2, SEED + 1, ("--workers", "2"))
    assert figures["kills"] >= 2 and figures["redownloaded"] == 0


@pytest.mark.marathon
@pytest.mark.timeout(7200)
def test_marathon(tmp_path: Path) -> None:
    """The long run (``-m marathon``): KILL_COUNT kills (default 500), figures printed."""
    figures = kill_and_resume(tmp_path, int(os.environ.get("KILL_COUNT", "500")), SEED)
    print(f"\nkill marathon, seed {SEED}: {figures}", flush=True)
    assert figures["redownloaded"] == 0
