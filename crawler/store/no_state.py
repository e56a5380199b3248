"""The state of a run without ``--state``: it remembers nothing.

It answers what the crawl asks of a state file as a first run would (nothing
resumed, no page seen before, no validators, no link checked), and forgets what
it is told. So the engine asks one state the same questions, whether or not the
user gave a file: no branch on whether there is one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.core.records import SkippedUrl
    from crawler.frontier.job import Job
    from crawler.store.stored import ResumePoint, StoredPage


class NoState:
    """A state that remembers nothing (:class:`crawler.store.state.CrawlState`'s
    questions, answered as for a first run)."""

    remembers = False  # no page can be replayed from it (a 304 needs a stored page)

    def __init__(self) -> None:
        self.extra_meta: Callable[[], dict[str, str]] | None = None

    def begin(self, *, resume: bool,
              settings: dict[str, object] | None = None) -> ResumePoint | None:
        return None

    def finish(self) -> None:
        pass

    def close(self) -> None:
        pass

    def checkpoint(self) -> None:
        pass

    def enqueue(self, job: Job) -> None:
        pass

    def skip(self, item: SkippedUrl) -> None:
        pass

    def previous(self, url: str, *, with_links: bool = True) -> StoredPage | None:
        return None

    def validators(self, url: str, *, images: bool = False, fragments: bool = False,
                   edges: bool = False) -> dict[str, str]:
        return {}

    def external_checks(self, newer_than: float) -> dict[str, tuple]:  # type: ignore[type-arg]
        return {}

    def keep_external_checks(self, rows: Iterable[tuple]) -> None:  # type: ignore[type-arg]
        pass
