"""The history of runs a state file keeps: bounded, and cheap a run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from crawler.store.run_history import RunRecord, keep_run, last_runs

SUMMARY = {"command": "crawl", "seconds": 412.5, "fetched": 10000, "listed": 9874,
           "errors": 12, "not_modified": 9500, "interrupted": None, "published": True,
           "refused": None, "notifications": ["IndexNow: 14 URL(s) sent (3 added, 9 changed, "
                                              "2 removed) to api.indexnow.org"],
           "reports": ["/srv/reports/2026-11-29.html"], "exit_code": 0, "first": False,
           "added": 3, "removed": 2, "changed": 9, "restamped": 0, "stale": 0,
           "findings": {"error": 4, "warning": 120, "notice": 3000},
           "by_section": {name: {"pages": 2000, "error": 1, "warning": 30, "notice": 700}
                          for name in ("docs", "blog", "shop", "help", "other")}}


def _urls(n: int) -> list[str]:
    return [f"https://www.example.com/docs/15/sql-command-{i:05d}.html" for i in range(n)]


def _rows_bytes(path: Path) -> list[int]:
    with sqlite3.connect(path) as db:
        return [len(summary) + len(urls or b"") for summary, urls in db.execute(
            "SELECT summary, urls FROM runs ORDER BY id")]


def test_a_run_costs_under_a_kilobyte_plus_a_few_bytes_a_changed_url(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    keep_run(path, RunRecord("2026-11-29T03:00:00Z", SUMMARY), keep=100)
    keep_run(path, RunRecord("2026-11-30T03:00:00Z", SUMMARY,
                             {"changed": _urls(1000), "added": _urls(10)}), keep=100)
    quiet, busy = _rows_bytes(path)
    assert quiet < 1024, quiet
    assert (busy - quiet) / 1010 < 16, (busy - quiet) / 1010  # bytes a changed URL


def test_the_history_keeps_the_last_runs_oldest_first(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    for day in range(1, 8):
        keep_run(path, RunRecord(f"2026-11-{day:02d}T03:00:00Z", {"listed": day},
                                 {"added": [f"https://x.test/{day}"]}), keep=5)
    runs = last_runs(path, 100, with_urls=True)
    assert [run.summary["listed"] for run in runs] == [3, 4, 5, 6, 7]
    assert runs[-1].urls == {"added": ["https://x.test/7"]}
    assert [run.urls for run in last_runs(path, 2)] == [{}, {}]  # not read unless asked
