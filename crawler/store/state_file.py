"""The state file itself: its schema and versions, opening it safely, its lock.

A damaged file, another program's, a newer version's or another scope's is
refused, never overwritten; an older version's is migrated. One run at a time
holds it (an exclusive lock the kernel drops with the process). What is kept
in it, and when it is written, is :class:`crawler.store.state.CrawlState`'s.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from pathlib import Path

from crawler.core.errors import ConfigError, StorageError

# 1: the first; 2: each queued URL keeps its redirect chain (queue.chain);
# 3: a page's hreflang alternates and images, and when its content was seen to
#    change, its title and size (pages.alternates, .images, .changes, .title, .bytes)
# 4: the anchor text of each outlink, for audits (pages.anchors)
# 5: what a page says of itself and how it was read (pages.facts: description, h1,
#    words, --extract values, rendering), so a 304 replays it into the report
# 6: a page's rows of the link graph, for --links (pages.edges); pages.facts also
#    keeps its anchors and links into them (--check-fragments) and its count of
#    hreflang alternates past the cap
SCHEMA_VERSION = "6"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_WHAT_TO_DO = "use --state with another file, or delete it to start afresh"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS urls (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS pages (
    url_id INTEGER PRIMARY KEY, run INTEGER NOT NULL, depth INTEGER NOT NULL,
    status INTEGER, content_type TEXT, error TEXT, verdict TEXT NOT NULL,
    etag TEXT, last_modified TEXT, lastmod INTEGER,
    content_hash BLOB, hash_changed_at INTEGER,
    canonical TEXT, redirect_to TEXT, refresh_to TEXT,
    noindex INTEGER NOT NULL, nofollow INTEGER NOT NULL, links_found INTEGER NOT NULL,
    outlinks BLOB, alternates TEXT, images TEXT, changes TEXT, title TEXT, bytes INTEGER,
    anchors BLOB, facts TEXT, edges BLOB
);
CREATE TABLE IF NOT EXISTS skipped (
    url_id INTEGER PRIMARY KEY, depth INTEGER NOT NULL, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS queue (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, url_id INTEGER NOT NULL UNIQUE,
    depth INTEGER NOT NULL, hops INTEGER NOT NULL, chain BLOB);
CREATE TABLE IF NOT EXISTS external (
    url TEXT PRIMARY KEY, checked REAL NOT NULL, status INTEGER, final TEXT,
    hops INTEGER NOT NULL, error TEXT, disallowed INTEGER NOT NULL);
"""
# How a state file of each older schema is brought to the current one.
# (the table it changes, if that table exists yet; the statements)
_MIGRATIONS = {
    "1": ("queue", ["ALTER TABLE queue ADD COLUMN chain BLOB"]),
    "2": ("pages", ["ALTER TABLE pages ADD COLUMN alternates TEXT",
                    "ALTER TABLE pages ADD COLUMN images TEXT",
                    "ALTER TABLE pages ADD COLUMN changes TEXT",
                    "ALTER TABLE pages ADD COLUMN title TEXT",
                    "ALTER TABLE pages ADD COLUMN bytes INTEGER"]),
    "3": ("pages", ["ALTER TABLE pages ADD COLUMN anchors BLOB"]),
    "4": ("pages", ["ALTER TABLE pages ADD COLUMN facts TEXT"]),
    "5": ("pages", ["ALTER TABLE pages ADD COLUMN edges BLOB"]),
}


class StateError(ConfigError):
    """The state file cannot be used for this crawl (other scope, not a state file)."""


def open_state(path: Path, scope_root: str) -> sqlite3.Connection:
    """Check the file before anything is written to it: a damaged file, another
    program's, a newer version's or another scope's is refused, never overwritten;
    an older version's is migrated."""
    def refuse(why: str) -> StateError:
        return StateError(f"--state {path} {why}; {_WHAT_TO_DO}")

    try:
        with open(path, "rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise refuse(f"cannot be read ({exc.strerror})") from None
    if head and head != _SQLITE_MAGIC:
        raise refuse("is not a sitemap-crawler state file (not SQLite)")
    try:
        db = sqlite3.connect(path, isolation_level=None)
        if head:
            if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise refuse("is damaged (truncated or corrupt)")
            tables = {name for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "meta" not in tables:
                raise refuse("is not a sitemap-crawler state file (no meta table)")
            stored = dict(db.execute("SELECT key, value FROM meta"))
            version = stored.get("version", "1")
            if not version.isdigit() or int(version) > int(SCHEMA_VERSION):
                raise refuse(f"was written by a newer version of sitemap-crawler "
                             f"(schema {version}, this one reads {SCHEMA_VERSION})")
            if stored.get("scope", scope_root) != scope_root:
                raise refuse(f"belongs to a crawl of {stored['scope']}, not {scope_root}")
            for step in range(int(version), int(SCHEMA_VERSION)):
                table, statements = _MIGRATIONS[str(step)]
                if table in tables:
                    for statement in statements:
                        db.execute(statement)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                       (("scope", scope_root), ("version", SCHEMA_VERSION)))
    except sqlite3.DatabaseError as exc:
        if storage_failure(exc):
            raise StorageError(f"--state {path} cannot be written: {exc}") from None
        raise refuse(f"is damaged ({exc})") from None
    return db



_STORAGE_CODES = frozenset({8, 10, 13, 14})  # READONLY, IOERR, FULL, CANTOPEN


def other_run(path: Path, kept: dict[str, object], given: dict[str, object]) -> str:
    """Why the run kept in ``path`` is not resumed by this one, option by option."""
    def shown(name: str, value: object) -> str:
        if name == "command":
            return f"'{value}'"
        if value in (None, False, []):
            return f"no {name}"
        if value is True:
            return name
        if isinstance(value, list):
            return " ".join(f"{name} {item}" for item in value)
        return f"{name} {value}"
    names = [name for name in dict.fromkeys([*given, *kept]) if kept.get(name) != given.get(name)]
    was = ", ".join(shown(name, kept.get(name)) for name in names)
    now = ", ".join(shown(name, given.get(name)) for name in names)
    return (f"--resume: the run kept in --state {path} was {was}; this one is {now}. "
            "Resume with the same command and limits, or leave out --resume to start afresh")


def storage_failure(exc: sqlite3.DatabaseError) -> bool:
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _STORAGE_CODES


def hold_lock(path: Path) -> int:
    """An exclusive lock on the state file for this crawl's lifetime (flock, which the
    kernel releases when the process dies, and which SQLite's own locks ignore)."""
    try:
        lock = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StateError(f"--state {path} cannot be opened ({exc.strerror})") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        raise StateError(f"--state {path} is in use by another running crawl; wait for it "
                         "to end, or use --state with another file") from None
    return lock


AUDIT_SNAPSHOT = "audit_snapshot"


def audit_snapshot(path: Path) -> str | None:
    """What the last audit kept of its run in this state (crawler.audit.changes), if any."""
    if not path.exists():
        return None
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        try:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (AUDIT_SNAPSHOT,)
                             ).fetchone()
        except sqlite3.DatabaseError:
            return None
    return row[0] if row else None


def keep_audit_snapshot(path: Path, text: str) -> None:
    """This audit's snapshot, for the next audit with this state to compare with."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                   (AUDIT_SNAPSHOT, text))


def mark_published(path: Path) -> None:
    """The run's sitemaps are in place: nothing is left for ``--resume`` to continue."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("UPDATE meta SET value = 'complete' WHERE key = 'run_state'")
