"""What changed since the last audit: two runs' snapshots compared — pure.

A snapshot is what a report keeps of a run for the next one: each fetched
page's status, indexability, canonical, title, robots directives, lastmod and
sitemap membership, and each finding's items by identity. Comparing two gives:

* ``new-X`` and ``fixed-X`` for every finding X (an item is the same item in both
  runs when its URL, and what makes it a problem, are the same: a broken link
  that went from 404 to 500 is still the same broken link);
* ``added-pages``: pages listable now that were not reached, or failed, before;
* ``removed-pages``: pages that answered before and now fail (with the status
  they answer now: a deleted page still linked is a 404) or are no longer
  reached (status none);
* ``changed``: any other page fetched in both whose compared values differ, old
  and new side by side, one item a value (a page added or removed is that, not
  five changes).

``--fail-on new-broken-links`` then fails a nightly audit on regressions only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from crawler.audit.names import FINDINGS

# what a page is compared on, in the order a "changed" item names them
COMPARED = ("status", "reason", "listed", "canonical", "title", "noindex", "nofollow",
            "lastmod")
# what makes two findings' items the same item (the fields an item has of these)
IDENTITY = ("url", "keep", "title", "description", "origin", "problem", "sitemap", "what",
            "error")
SNAPSHOT_VERSION = 1


@dataclass(slots=True)
class Snapshot:
    start_url: str
    pages: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    items: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    # the live sitemap's lastmod of each URL it dated (--compare-sitemap)
    live: dict[str, str] = field(default_factory=dict)


def item_key(item: dict[str, Any]) -> str:
    return json.dumps([item.get(name) for name in IDENTITY], separators=(",", ":"))


def snapshot(start_url: str, found: dict[str, dict[str, Any]],
             rows: Iterable[dict[str, Any]]) -> Snapshot:
    """A run's snapshot from its findings and its report rows (or a report's own)."""
    taken = Snapshot(start_url)
    for row in rows:
        if row.get("status") is not None or row.get("error") is not None:
            taken.pages[row["url"]] = tuple(row.get(name) for name in COMPARED)
    for name in FINDINGS:
        items = found.get(name, {}).get("items", [])
        taken.items[name] = {item_key(item): item for item in items}
    return taken


def from_report(document: dict[str, Any]) -> Snapshot:
    """The snapshot of a JSON report (what ``--compare-with`` reads)."""
    return snapshot(document["start_url"], document.get("findings", {}),
                    document.get("urls", []))


def dumps(taken: Snapshot) -> str:
    """A snapshot as text, for the state file."""
    return json.dumps({"version": SNAPSHOT_VERSION, "start_url": taken.start_url,
                       "pages": taken.pages, "items": taken.items, "live": taken.live},
                      separators=(",", ":"), ensure_ascii=False)


def loads(text: str) -> Snapshot | None:
    """A snapshot kept in the state, or None if it is of another version."""
    data = json.loads(text)
    if data.get("version") != SNAPSHOT_VERSION:
        return None
    return Snapshot(data["start_url"], {url: tuple(values)
                                        for url, values in data["pages"].items()},
                    data["items"], data.get("live", {}))


def _fails(values: tuple[Any, ...] | None) -> bool:
    """Not reached, or answered with an error: no page for a reader."""
    if values is None:
        return True
    status = values[0]
    return status is None or status >= 400


def compare(before: Snapshot, now: Snapshot) -> dict[str, list[dict[str, Any]]]:
    """The change findings, each a list of items, in the order of ``CHANGES``."""
    listed = COMPARED.index("listed")
    added = [{"url": url, **dict(zip(COMPARED, values, strict=True))}
             for url, values in sorted(now.pages.items())
             if values[listed] and _fails(before.pages.get(url))]
    removed = [{"url": url, **dict(zip(COMPARED, now.pages.get(url) or (None,) * len(COMPARED),
                                       strict=True)), "status_before": values[0]}
               for url, values in sorted(before.pages.items())
               if not _fails(values) and _fails(now.pages.get(url))]
    either = {item["url"] for item in (*added, *removed)}
    changed = []
    for url, values in sorted(now.pages.items()):
        old = before.pages.get(url)
        if old is None or url in either:
            continue
        for name, was, is_now in zip(COMPARED, old, values, strict=True):
            if was != is_now:
                changed.append({"url": url, "field": name, "before": was, "after": is_now})
    found: dict[str, list[dict[str, Any]]] = {
        "added-pages": added, "removed-pages": removed, "changed": changed}
    for name in FINDINGS:
        old_items, new_items = before.items.get(name, {}), now.items.get(name, {})
        found[f"new-{name}"] = [item for key, item in new_items.items() if key not in old_items]
    for name in FINDINGS:
        old_items, new_items = before.items.get(name, {}), now.items.get(name, {})
        found[f"fixed-{name}"] = [item for key, item in old_items.items()
                                  if key not in new_items]
    return found


def lastmods_moved(before: Snapshot, now: Snapshot, changed: Callable[[str], bool | None]
                   ) -> list[dict[str, Any]]:
    """The live sitemap's lastmods that moved since the last audit while the page's
    content did not (``changed``: what ``--state`` saw, None when it cannot say): a
    sitemap stamping its build time on every entry, which search engines learn to
    ignore."""
    return [{"url": url, "lastmod": lastmod, "lastmod_before": before.live[url],
             "problem": "moved-without-change"}
            for url, lastmod in sorted(now.live.items())
            if before.live.get(url) not in (None, lastmod) and changed(url) is False]
