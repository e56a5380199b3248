"""One item of a finding, typed, as every report format reads it.

A finding's items are written as they are found (the JSON report keeps them so,
key for key); the other formats (HTML, Markdown, CSV, JUnit, the terminal)
render from this one type instead of each knowing the keys: which URLs an item
names, what to call it, where to look, and who links to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# the keys a FindingItem reads into fields of its own; the rest are its details
_NAMED = frozenset({"url", "keep", "duplicates", "urls", "sitemap", "origin", "title",
                    "description", "found_on", "linked_from"})


@dataclass(frozen=True, slots=True)
class FindingItem:
    urls: tuple[str, ...]  # the URLs it names: its own, a duplicate group's, a shared title's
    label: str  # what it is called: its URL (or the kept URL), sitemap, title or description
    where: str  # where to look: its first URL, else its sitemap or origin
    found_on: tuple[str, ...]  # the first pages linking to it
    linked_from: int | None  # how many pages link to it
    details: dict[str, Any]  # everything else it says, by name

    @classmethod
    def of(cls, item: dict[str, Any]) -> FindingItem:
        urls = tuple(url for url in dict.fromkeys(
            [item.get("url"), item.get("keep"), *item.get("duplicates", ()),
             *item.get("urls", ())]) if url)
        source = str(item.get("sitemap") or item.get("origin") or "")
        label = (item.get("url") or item.get("keep") or item.get("sitemap")
                 or item.get("title") or item.get("description") or "")
        linked = item.get("linked_from")
        return cls(urls=urls, label=str(label), where=urls[0] if urls else source,
                   found_on=tuple(item.get("found_on") or ()),
                   linked_from=linked if isinstance(linked, int) else None,
                   details={key: value for key, value in item.items() if key not in _NAMED})

    @property
    def reach(self) -> int:
        """Pages it touches: for a link, the pages carrying it; else the URLs it names
        (a sitemap file counts one)."""
        if self.linked_from is not None and self.linked_from > 0:
            return self.linked_from
        return max(1, len(self.urls))


def items_of(finding: dict[str, Any]) -> list[FindingItem]:
    return [FindingItem.of(item) for item in finding["items"]]
