"""What the history of runs costs a ``--state`` file, and how fast ``history`` answers.

    python bench/history_cost.py [--pages 10000] [--runs 100] [--changed 50]

Builds the state of a ``--pages`` site (``bench/state_size.py``'s pages, through the
crawler's own state code), adds ``--runs`` run records of a nightly crawl that
changed ``--changed`` URLs (a tenth added, a tenth removed), then times the
``history`` command (a fresh interpreter, as a person runs it) for the table and
for ``--report history.html``. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from state_size import ORIGIN, page_url

from crawler.store.run_history import RunRecord, keep_run

SUMMARY = {"command": "crawl", "seconds": 41.5, "fetched": 0, "listed": 0, "errors": 3,
           "not_modified": 0, "interrupted": None, "published": True, "refused": None,
           "notifications": ["IndexNow: 14 URL(s) sent"], "reports": [], "exit_code": 0,
           "first": False, "findings": {"error": 4, "warning": 120, "notice": 3000}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--changed", type=int, default=50)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    state = folder / "state.db"
    subprocess.run([sys.executable, str(Path(__file__).parent / "state_size.py"), "--pages",
                    str(args.pages), "--links", "20", "--out", str(state)], check=True,
                   capture_output=True)
    before = state.stat().st_size
    tenth = max(args.changed // 10, 1)
    for run in range(args.runs):
        urls = [page_url((run * args.changed + n) % args.pages) for n in range(args.changed)]
        summary = {**SUMMARY, "fetched": args.pages, "listed": args.pages - run % 7,
                   "added": tenth, "removed": tenth, "changed": args.changed}
        keep_run(state, RunRecord(f"2026-08-01T03:{run % 60:02d}:00Z", summary,
                                  {"changed": urls, "added": urls[:tenth],
                                   "removed": urls[-tenth:]}), keep=args.runs)
    with sqlite3.connect(state) as db:
        db.execute("VACUUM")
        record = db.execute("SELECT AVG(LENGTH(summary)), AVG(LENGTH(urls)) FROM runs"
                            ).fetchone()
    timings = {}
    for name, extra in (("table", []), ("html", ["--report", str(folder / "h.html")])):
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "crawler", "history", str(state), "--last",
                        str(args.runs), *extra], check=True, capture_output=True)
        timings[name] = round(time.monotonic() - started, 3)
    print(json.dumps({"pages": args.pages, "runs": args.runs, "origin": ORIGIN,
                      "summary_bytes": round(record[0]), "url_bytes_per_changed_url":
                      round(record[1] / (args.changed + 2 * tenth), 1),
                      "state_bytes_without_runs": before, "history_seconds": timings}))


if __name__ == "__main__":
    main()
