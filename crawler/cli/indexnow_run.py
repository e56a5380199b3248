"""``--indexnow``: after a run publishes, the URLs added, changed (lastmod moved) or
removed since the sitemap it replaced, sent to IndexNow (crawler.http.indexnow).

"Since the previous run" is read from the sitemap the previous run published in
``--out``, before it is replaced: it is what search engines were last told,
whatever happened to the state in between. Both sides are sorted by URL, so
they are compared in one pass through a temporary SQLite table, never held in
memory. A first run (no sitemap yet) sends nothing, unless ``--indexnow-all``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from crawler.cli import failure
from crawler.cli.failure import EXIT_INDEXNOW, EXIT_USAGE, Failure
from sitemap_writer import INDEX_NAME, SitemapEntry, is_url_shard, read_sitemap

if TYPE_CHECKING:
    from crawler.http.address_rule import NetworkRule


@dataclass(slots=True)
class IndexNowPlan:
    key: str
    endpoint: str
    everything: bool = False
    dry_run: bool = False
    key_location: str | None = None


@dataclass(slots=True)
class Changes:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def urls(self) -> Iterator[str]:
        yield from self.added
        yield from self.changed
        yield from self.removed

    def __len__(self) -> int:
        return len(self.added) + len(self.changed) + len(self.removed)


def indexnow_plan(*, key: str | None, key_env: str | None, endpoint: str, everything: bool,
                  dry_run: bool, key_location: str | None, state: str | None
                  ) -> IndexNowPlan | None:
    """The options checked before any request; None when IndexNow is not asked for."""
    from crawler.http.indexnow import KEY

    if key_env is not None:
        if key is not None:
            raise Failure("--indexnow and --indexnow-env: give the key one way", EXIT_USAGE)
        key = os.environ.get(key_env)
        if not key:
            raise Failure(f"--indexnow-env {key_env}: the variable is not set", EXIT_USAGE)
    if key is None:
        if everything or dry_run or key_location:
            raise Failure("--indexnow-all, --indexnow-dry-run and --indexnow-key-location "
                          "need --indexnow KEY or --indexnow-env NAME", EXIT_USAGE)
        return None
    failure.SECRETS.append(key)  # from here on, no message shows it
    if not KEY.fullmatch(key):
        raise Failure("--indexnow: the key must be 8 to 128 letters, digits or dashes",
                      EXIT_USAGE)
    if state is None:
        raise Failure("--indexnow needs --state FILE: it sends what changed since the "
                      "last run", EXIT_USAGE)
    for option, url in (("--indexnow-endpoint", endpoint),
                        ("--indexnow-key-location", key_location)):
        if url is not None and urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise Failure(f"{option} must be an http(s) URL", EXIT_USAGE)
    return IndexNowPlan(key, endpoint, everything, dry_run, key_location)


class PreviousSitemap:
    """The (loc, lastmod) of the sitemap in ``out`` before this run replaces it: in a
    dict up to :data:`IN_MEMORY` URLs (a lookup a URL in SQLite cost a 10,000-page
    re-crawl 5 % of its CPU), in a temporary SQLite table past them."""

    IN_MEMORY = 200_000

    def __init__(self, out_dir: Path) -> None:
        self.exists = (out_dir / INDEX_NAME).is_file()
        self._file = tempfile.NamedTemporaryFile(suffix=".db", delete=False)  # noqa: SIM115
        self._file.close()
        self.db = sqlite3.connect(self._file.name)
        self.db.execute("CREATE TABLE old (loc TEXT PRIMARY KEY, lastmod TEXT, seen INTEGER)")
        self._memory: dict[str, str | None] | None = {}
        if self.exists:
            self._read(out_dir)

    def _read(self, out_dir: Path) -> None:
        index = read_sitemap((out_dir / INDEX_NAME).read_bytes())
        for loc, _lastmod in index.entries:
            name = loc.rpartition("/")[2]
            if not is_url_shard(name):  # any section's shards, not the News sitemap
                continue
            with contextlib.suppress(OSError):
                shard = read_sitemap((out_dir / name).read_bytes())
                self._keep(shard.entries)
        self.db.commit()

    def _keep(self, entries: list[tuple[str, str | None]]) -> None:
        memory = self._memory
        if memory is not None and len(memory) + len(entries) <= self.IN_MEMORY:
            memory.update(entries)
            return
        if memory:
            entries = [*memory.items(), *entries]
        self._memory = None
        self.db.executemany("INSERT OR REPLACE INTO old VALUES (?, ?, 0)", entries)

    def changes(self, entries: Iterable[SitemapEntry]) -> Changes:
        if self._memory is not None:
            return _changes_in_memory(self._memory, entries)
        found = Changes()
        lookup = self.db.execute
        for entry in entries:
            row = lookup("SELECT lastmod FROM old WHERE loc = ?", (entry.loc,)).fetchone()
            if row is None:
                found.added.append(entry.loc)
                continue
            lookup("UPDATE old SET seen = 1 WHERE loc = ?", (entry.loc,))
            new = _w3c(entry)
            if row[0] is not None and new is not None and row[0] != new:
                found.changed.append(entry.loc)
        found.removed = [loc for (loc,) in lookup("SELECT loc FROM old WHERE seen = 0 "
                                                  "ORDER BY loc")]
        return found

    def close(self) -> None:
        self.db.close()
        with contextlib.suppress(OSError):
            os.unlink(self._file.name)


def _changes_in_memory(old: dict[str, str | None], entries: Iterable[SitemapEntry]
                       ) -> Changes:
    found = Changes()
    seen: set[str] = set()
    for entry in entries:
        if entry.loc not in old:
            found.added.append(entry.loc)
            continue
        seen.add(entry.loc)
        was, new = old[entry.loc], _w3c(entry)
        if was is not None and new is not None and was != new:
            found.changed.append(entry.loc)
    found.removed = sorted(loc for loc in old if loc not in seen)
    return found


def _w3c(entry: SitemapEntry) -> str | None:
    moment = entry.lastmod_utc
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else None


def announce(plan: IndexNowPlan, previous: PreviousSitemap, *,
             entries: Callable[[], Iterable[SitemapEntry]], base_url: str,
             user_agent: str, echo: Callable[[str], None], rule: NetworkRule | None = None
             ) -> int:
    """Send (or with --indexnow-dry-run, print) what changed; the exit code. Both the key
    file and the endpoint are asked under the crawl's network ``rule``."""
    from crawler.http.address_rule import NetworkRule as Rule
    from crawler.http.indexnow import IndexNowError, Submission, key_file_holds_key, submit

    rule = rule or Rule.open()

    if previous.exists:
        changes = previous.changes(entries())
    elif plan.everything:
        changes = Changes(added=[entry.loc for entry in entries()])
    else:
        echo("IndexNow: first run, nothing sent (--indexnow-all sends every URL)")
        return 0
    host = urllib.parse.urlsplit(base_url).hostname or ""
    counts = (f"{len(changes.added):,} added, {len(changes.changed):,} changed, "
              f"{len(changes.removed):,} removed")
    endpoint_host = urllib.parse.urlsplit(plan.endpoint).netloc
    if plan.dry_run:
        for kind, urls in (("added", changes.added), ("changed", changes.changed),
                           ("removed", changes.removed)):
            for url in urls:
                click.echo(f"{kind}\t{url}")
        echo(f"IndexNow dry run: {len(changes):,} URL(s) would be sent to {endpoint_host} "
             f"({counts})")
        return 0
    if not changes:
        echo("IndexNow: nothing changed, nothing sent")
        return 0
    origin = base_url[: base_url.index("/", base_url.index("//") + 2)]
    key_file = plan.key_location or f"{origin}/{plan.key}.txt"
    problem = key_file_holds_key(key_file, plan.key, user_agent, rule)
    if problem is not None:
        return failure.fail(f"IndexNow: nothing sent: {problem} ({key_file}); put a file "
                            "named after the key, holding the key, at the site's root, or "
                            "name it with --indexnow-key-location", EXIT_INDEXNOW)
    try:
        sent = submit(Submission(plan.endpoint, host, plan.key, plan.key_location,
                                 user_agent, rule=rule), changes.urls())
    except IndexNowError as exc:
        return failure.fail(f"IndexNow: {exc} ({exc.sent:,} of {len(changes):,} URL(s) sent)",
                            EXIT_INDEXNOW)
    echo(f"IndexNow: {sent} URL(s) sent to {endpoint_host} ({counts})")
    return 0
