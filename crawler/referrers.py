"""Who links to each in-scope URL: a count and the first five pages, in ints.

An audit's first question is "which pages link to this broken URL?". Keeping
every link as a pair of strings would cost more than the crawl itself, so a
URL keeps one small list: how many pages link to it, then the record indices
(ints) of the first five, in the order the crawl met them; and the anchor
text of the first link, kept apart.
"""

from __future__ import annotations

FOUND_ON = 5


class Referrers:
    def __init__(self) -> None:
        self._pages: dict[str, list[int]] = {}  # url -> [count, page index, ...]
        self._anchors: dict[str, str] = {}

    def add(self, url: str, page: int, anchor: str | None) -> None:
        entry = self._pages.get(url)
        if entry is None:
            self._pages[url] = [1, page]
            if anchor:
                self._anchors[url] = anchor
            return
        entry[0] += 1
        if len(entry) <= FOUND_ON:
            entry.append(page)

    def count(self, url: str) -> int:
        entry = self._pages.get(url)
        return entry[0] if entry else 0

    def first(self, url: str) -> list[int]:
        entry = self._pages.get(url)
        return entry[1:] if entry else []

    def anchor(self, url: str) -> str | None:
        return self._anchors.get(url)
