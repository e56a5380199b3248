"""The external-links phase (``--check-external``): every link checked once, origins
in parallel, within ``--external-deadline`` (``external.py`` checks each one)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import anyio

from crawler.http.external import Checker, Origin
from crawler.http.external_pace import CONNECTIONS
from crawler.http.link_check import (
    FAILED_TO_ANSWER,
    NOT_CHECKED,
    UNREACHABLE,
    Certificate,
    CheckOptions,
    LinkCheck,
)
from crawler.urls.normalize import origin_of

CachedCheck = Callable[[str], LinkCheck | None]
# after each check: (links checked, links to check, slowest origin, its links left, the
# seconds they take at its pace)
Progress = Callable[[int, int, str, int, float], None]


async def check_links(urls: Iterable[str], config: CheckOptions, *,
                      cached: CachedCheck | None = None,
                      want_ids: frozenset[str] = frozenset(),
                      on_check: Callable[[LinkCheck], None] | None = None,
                      on_progress: Progress | None = None,
                      ) -> tuple[list[LinkCheck], list[Certificate], bool]:
    """Check each URL once: origins in parallel, up to :data:`CONNECTIONS` links of
    one origin at once at its pace, all within ``--external-deadline`` (what it
    leaves is ``not-checked``). ``on_check`` sees each result as it comes (cached
    ones first), so an interrupted phase keeps what it learnt. The last value says
    whether the phase stopped because no origin answered at all."""
    phase = _Phase(config, want_ids, on_check, on_progress)
    phase.sort(urls, cached)
    try:
        await phase.run()
    finally:
        with anyio.CancelScope(shield=True):
            await phase.checker.close()
    return phase.finish()


class _Phase:
    """One run of the checks: the links sorted by origin, what each answered, and
    what the callers are told as it comes."""

    def __init__(self, config: CheckOptions, want_ids: frozenset[str],
                 on_check: Callable[[LinkCheck], None] | None,
                 on_progress: Progress | None) -> None:
        self.config = config
        self.want_ids = want_ids
        self.on_check, self.on_progress = on_check, on_progress
        self.by_origin: dict[str, list[str]] = {}
        self.results: list[LinkCheck] = []
        self.done: set[str] = set()
        self.total = 0
        self.checker = Checker(config)

    def keep(self, found: LinkCheck) -> None:
        self.results.append(found)
        if self.on_check is not None:
            self.on_check(found)

    def sort(self, urls: Iterable[str], cached: CachedCheck | None) -> None:
        """Cached answers kept at once; the others grouped by origin, in order."""
        for url in urls:
            known = cached(url) if cached is not None and url not in self.want_ids else None
            if known is not None:
                self.keep(known)
                continue
            self.by_origin.setdefault(origin_of(url), []).append(url)
        self.total = len(self.results) + sum(map(len, self.by_origin.values()))
        for name, targets in self.by_origin.items():
            self.checker.origin(name).left = len(targets)

    async def run(self) -> None:
        """Origins in parallel (``--concurrency`` at once), within the deadline."""
        limit = anyio.CapacityLimiter(max(1, self.config.concurrency))
        with anyio.move_on_after(self.config.deadline or float("inf")) as scope:
            self.checker.stop = scope.cancel
            async with anyio.create_task_group() as group:
                for name, targets in self.by_origin.items():
                    group.start_soon(self._one_origin, limit, name, targets)

    async def _one_origin(self, limit: anyio.CapacityLimiter, name: str,
                          targets: list[str]) -> None:
        async with limit:
            origin = self.checker.origin(name)
            queue = targets[::-1]  # popped from the end: in the order given
            async with anyio.create_task_group() as links:
                for _ in range(min(CONNECTIONS, len(targets))):
                    links.start_soon(self._one_link, origin, queue)

    async def _one_link(self, origin: Origin, queue: list[str]) -> None:
        checker = self.checker
        while queue:
            url = queue.pop()
            found = await checker.check(url, url in self.want_ids)
            origin.left -= 1
            if checker.offline:
                return  # said as one line, not as a broken link each
            self.done.add(url)
            self.keep(found)
            if self.on_progress is not None:
                self.on_progress(len(self.results), self.total, *checker.slowest())

    def finish(self) -> tuple[list[LinkCheck], list[Certificate], bool]:
        """What the deadline left is not-checked; a given-up origin's links are
        unreachable; when nothing answered at all, nothing is known of any link."""
        now = time.time()
        for targets in self.by_origin.values():
            for url in targets:
                if url not in self.done:
                    self.keep(LinkCheck(url, error=NOT_CHECKED, checked_at=now))
        results, checker = self.results, self.checker
        _given_up_origins_links(results, checker)
        if checker.offline:
            results[:] = [found if found.cached else LinkCheck(found.url, error=NOT_CHECKED,
                                                                 checked_at=now)
                          for found in results]
        certificates = [Certificate(origin.origin, origin.certificate)
                        for origin in checker.origins.values()
                        if origin.certificate is not None]
        return results, certificates, checker.offline


def _given_up_origins_links(results: list[LinkCheck], checker: Checker) -> None:
    """A link that timed out or was refused on an origin given up since is that
    origin's failure, not the link's: ``origin-unreachable``, never broken."""
    for found in results:
        if found.error in FAILED_TO_ANSWER and not found.cached:
            origin = checker.origins.get(origin_of(found.final_url or found.url))
            if origin is not None and origin.given_up == UNREACHABLE:
                found.error = UNREACHABLE
