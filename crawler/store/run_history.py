"""Every run with ``--state``, kept in the state file: what a cron job's logs would
have to be kept for, in a table a person can ask ``sitemap-crawler history``.

A run's record is its summary (when, how long, pages fetched and listed, what was
added, removed and changed, errors, findings by severity and by section, whether
it published or why not, IndexNow and Search Console outcomes, its reports) as
compact JSON, and the URLs it added, removed and changed, compressed. The state
keeps the last ``--keep-runs`` (100): a record costs a few hundred bytes plus a
few bytes a URL that changed, so the file stays bounded however long cron runs.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SCHEMA = """CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, started TEXT NOT NULL, summary TEXT NOT NULL,
    urls BLOB)"""
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


@dataclass(slots=True)
class RunRecord:
    """One run, as the history keeps it."""

    started: str  # ISO 8601, UTC
    summary: dict[str, Any]
    urls: dict[str, list[str]] = field(default_factory=dict)  # kind -> URLs it names
    id: int | None = None


def keep_run(path: Path, run: RunRecord, keep: int) -> None:
    """Add ``run`` to the history in ``path`` and drop all but the last ``keep``."""
    packed = zlib.compress(_COMPACT.encode(run.urls).encode("utf-8")) if run.urls else None
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute(_SCHEMA)
        db.execute("INSERT INTO runs (started, summary, urls) VALUES (?, ?, ?)",
                   (run.started, _COMPACT.encode(run.summary), packed))
        db.execute("DELETE FROM runs WHERE id <= (SELECT MAX(id) FROM runs) - ?", (keep,))


def last_runs(path: Path, count: int, *, with_urls: bool = False) -> list[RunRecord]:
    """The last ``count`` runs, oldest first; their URLs only when asked (a table does
    not need them)."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        try:
            rows = db.execute(
                "SELECT id, started, summary, " + ("urls" if with_urls else "NULL")
                + " FROM runs ORDER BY id DESC LIMIT ?", (count,)).fetchall()
        except sqlite3.OperationalError:  # a state no run with history has written to
            return []
    return [RunRecord(started, json.loads(summary),
                      json.loads(zlib.decompress(urls)) if urls else {}, run_id)
            for run_id, started, summary, urls in reversed(rows)]
