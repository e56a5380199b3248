"""What a run changed in the sitemap, said after it and kept with ``--changes FILE``.

Added and removed are held against the sitemap the last run published in
``--out`` (what search engines were last told: crawler.cli.previous_sitemap's
``PreviousSitemap``); content changes, and a Last-Modified that moved without
them or stayed despite them, are what ``--state`` saw since its last run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.core.records import PageRecord
from sitemap_writer import SitemapEntry

if TYPE_CHECKING:
    from crawler.cli.previous_sitemap import PreviousSitemap

SHOWN = 3  # of each kind, in the summary; --changes holds every one
KINDS = ("added", "removed", "changed", "restamped", "stale")
_WORDS = {"added": "added", "removed": "removed", "changed": "changed content",
          "restamped": "restamped (Last-Modified moved, content did not)",
          "stale": "with a stale Last-Modified (content changed, the header did not)"}


@dataclass(slots=True)
class RunChanges:
    first: bool = False  # no sitemap was published before: nothing to compare with
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # listed, content changed (--state)
    restamped: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {kind: len(getattr(self, kind)) for kind in KINDS}


def run_changes(previous: PreviousSitemap | None, entries: Iterable[SitemapEntry],
                listed: Iterable[PageRecord]) -> RunChanges:
    """The sitemap's changes: against ``previous`` (None or empty: a first run), and
    what the records of the listed pages say they saw change."""
    found = RunChanges(first=previous is None or not previous.exists)
    if found.first:  # a first sitemap: every URL in it is new to it
        found.added = [entry.loc for entry in entries]
    else:
        assert previous is not None
        compared = previous.changes(entries)
        found.added, found.removed = compared.added, compared.removed
    for record in listed:
        if record.content_changed:
            found.changed.append(record.url)
        if record.lastmod_note is not None:
            getattr(found, record.lastmod_note[0]).append(record.url)
    return found


def say_changes(echo: Callable[[str], None], changes: RunChanges, index_url: str,
                base: str) -> None:
    """The summary's lines: what changed, the first few of each, where to publish."""
    counts = changes.counts()
    if changes.first:
        echo(f"since the last run: a first sitemap, {counts['added']:,} added")
    else:
        echo("since the last run: " + ", ".join(
            f"{counts[kind]:,} {_WORDS[kind]}" for kind in KINDS
            if counts[kind] or kind in ("added", "removed", "changed")))
        for kind in KINDS:
            urls = getattr(changes, kind)
            if urls:
                shown = ", ".join(url.removeprefix(base.rstrip("/")) or "/"
                                  for url in urls[:SHOWN])
                more = f" and {len(urls) - SHOWN:,} more" if len(urls) > SHOWN else ""
                echo(f"  {kind}: {shown}{more}")
    echo(f"publish: serve the sitemaps at {index_url} (robots.txt: Sitemap: {index_url})")


def write_changes(path: Path, changes: RunChanges) -> None:
    """Every change: JSON (lists by kind) or CSV (a row a URL: change, url)."""
    if path.suffix.lower() == ".csv":
        import csv  # only for a CSV: not loaded by every run with --state

        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\r\n")
            writer.writerow(["change", "url"])
            for kind in KINDS:
                writer.writerows((kind, url) for url in getattr(changes, kind))
        return
    path.write_text(json.dumps({**asdict(changes), "counts": changes.counts()}, indent=1,
                               ensure_ascii=False) + "\n", encoding="utf-8")
