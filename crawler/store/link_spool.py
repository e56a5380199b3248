"""The link graph as the crawl finds it (``--links``), spooled to disk.

One row per link is far more than the records (a million pages of 50 links is
50 million rows), so nothing of it is held in memory: each page's links are
appended to an unnamed temporary file, and read back once, in order, when the
graph is written with the targets' statuses (``crawler.cli.link_graph``).

A page's rows go in as one pickle: the file is this process's own and is read
only by it, and a pickle a page costs a tenth of a CSV row a link to write and
read back (2.6 and 1.0 µs a row as CSV on s10k's 447,000 links).
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Callable, Iterator


class LinkSpool:
    """(source, target, anchor text, rel values, in scope) rows, on disk."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile("w+b")  # noqa: SIM115
        self.count = 0

    def add(self, source: str, edges: list[tuple[str, str, str]],
            contains: Callable[[str], bool]) -> None:
        if edges:
            # a pickle of its own: a Pickler kept across pages would remember every
            # string it wrote (its memo), and grow with the graph
            pickle.dump((source, [(target, text, rel, contains(target))
                                  for target, text, rel in edges]),
                        self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self.count += len(edges)

    def rows(self) -> Iterator[tuple[str, str, str, str, bool]]:
        """Every row in the order found; the spool can be read more than once."""
        self._file.flush()
        self._file.seek(0)
        while True:
            try:
                # an Unpickler of its own too: one kept across pickles numbers their
                # memos on from the last, and reads back the wrong strings
                source, edges = pickle.load(self._file)
            except EOFError:
                break
            for target, text, rel, inside in edges:
                yield source, target, text, rel, inside
        self._file.seek(0, 2)

    def close(self) -> None:
        self._file.close()
