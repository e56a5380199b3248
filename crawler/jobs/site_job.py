"""The job itself: ``crawl --config FILE`` for one site, as RQ's worker runs it.

The crawl runs as a child process of the job's work-horse, so a crawl is a
crawl however it is started (its signals, its exit codes, its one-line errors),
and it is told to stop (SIGTERM: the state keeps what was done) if the horse
dies. What makes a killed job lose nothing is the state file: a job that finds
the state of an interrupted run continues it with ``--resume``; RQ's retry
policy and its handling of abandoned jobs bring the job back on a worker. A
retry after a run that *failed* (the site answered 503, or was unreachable)
starts afresh instead: resuming would keep the failed answers, and ask nothing
again.

Two jobs of one site never write at once: the crawl holds its ``--out``
directory with a lock, and a job that finds it held waits for it instead of
failing.
"""

from __future__ import annotations

import ctypes
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

from crawler.jobs.site_config import read_site

LOCK_HELD = "another sitemap-crawler run is writing into"
EXIT_OUTPUT = 4  # crawler.cli.failure's: the lock is one of the output's failures
LOCK_POLL = 2.0  # seconds between looks at a held lock


class CrawlFailed(Exception):
    """The crawl ended with an error: its one line, and its exit code."""


def run_site(config: str) -> str:
    """Crawl one site; the summary line is the job's result (``jobs`` shows it)."""
    from rq import get_current_job

    site = read_site(config)
    job = get_current_job()
    failed_before = job is not None and job.meta.get("failed_exit") is not None
    deadline = time.monotonic() + site.timeout
    while True:
        args = [sys.executable, "-m", "crawler", "crawl", "--config", str(site.config)]
        if interrupted(site.state) and not failed_before:
            args.append("--resume")
        done = subprocess.run(args, capture_output=True, text=True,
                              preexec_fn=_die_with_parent, check=False)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else ""
        if done.returncode == 0:
            summary = [line for line in lines if line.startswith("crawled ")]
            return summary[-1] if summary else last
        if done.returncode == EXIT_OUTPUT and LOCK_HELD in last and time.monotonic() < deadline:
            time.sleep(LOCK_POLL)  # the same site, crawled by another job: wait our turn
            continue
        if job is not None:  # its retry starts afresh (see above)
            job.meta["failed_exit"] = done.returncode
            job.save_meta()
        raise CrawlFailed(f"exit {done.returncode}: {last}")


def interrupted(state: Path) -> bool:
    """Does the state hold a run that did not publish (one a job was killed in)?"""
    if not state.exists():
        return False
    try:
        with closing(sqlite3.connect(f"file:{state}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'run_state'").fetchone()
    except sqlite3.Error:
        return False  # the crawl will say what is wrong with it
    return row is not None and row[0] != "complete"


def _die_with_parent() -> None:
    """In the child: SIGTERM when the work-horse dies (Linux), so a killed worker
    leaves no crawl running on behind its back."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
