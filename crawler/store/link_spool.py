"""The link graph as the crawl finds it (``--links``), spooled to disk.

One row per link is far more than the records (a million pages of 50 links is
50 million rows), so nothing of it is held in memory: each page's links are
appended to an unnamed temporary file as CSV, and read back once, in order, when
the graph is written with the targets' statuses (``crawler.cli.link_graph``).
"""

from __future__ import annotations

import csv
import tempfile
from collections.abc import Callable, Iterator


class LinkSpool:
    """(source, target, anchor text, rel values, in scope) rows, on disk."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile("w+", encoding="utf-8", newline="")  # noqa: SIM115
        self._writer = csv.writer(self._file)
        self.count = 0

    def add(self, source: str, edges: list[tuple[str, str, str]],
            contains: Callable[[str], bool]) -> None:
        self._writer.writerows((source, target, text, rel, "1" if contains(target) else "")
                               for target, text, rel in edges)
        self.count += len(edges)

    def rows(self) -> Iterator[tuple[str, str, str, str, bool]]:
        """Every row in the order found; the spool can be read more than once."""
        self._file.flush()
        self._file.seek(0)
        for source, target, text, rel, inside in csv.reader(self._file):
            yield source, target, text, rel, inside == "1"
        self._file.seek(0, 2)

    def close(self) -> None:
        self._file.close()
