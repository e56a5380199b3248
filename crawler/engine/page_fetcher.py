"""From a job to its page outcome: the requests one URL needs, then reading it.

This is the whole of what a worker does, whether it is a task of the
coordinator's own event loop or of a worker process (``crawler.engine.worker_pool``):
it keeps no crawl-wide state, so running it in N processes changes nothing
but where the CPU is spent.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

import anyio
import anyio.abc

from crawler.config import CrawlConfig
from crawler.core.errors import CrawlerError
from crawler.core.response import Response
from crawler.core.unforeseen import log_unforeseen
from crawler.engine.cores import usable_cores
from crawler.engine.parse_sandbox import ParseSandbox
from crawler.frontier.job import Job
from crawler.page.read import PageOutcome, ReadOptions, failed_page, read_page, wants_body
from crawler.page.rendered import merge, wants_render
from crawler.urls.documents import HEAD_REFUSED, content_types, extension
from crawler.urls.normalize import normalize_url
from crawler.urls.robots import RobotsPolicy
from crawler.urls.scope import Scope

if TYPE_CHECKING:
    from crawler.page.soft_404 import ProbeAnswer
    from crawler.render.renderer import Renderer


class Fetches(Protocol):
    """What a page fetcher needs of :class:`crawler.http.fetch.Fetcher`."""

    async def fetch(self, url: str, **kwargs: object) -> Response: ...


# links remembered as handed over (about 10 MB of URLs)
LINKS_REMEMBERED = 100_000
# Pages waiting on the first parse child before the next may go to a second one:
# only while this process used less than PARSE_IDLE of a core over the last
# PARSE_WINDOW seconds (it waits on its child, not the other way round).
PARSE_BACKLOG = 8
PARSE_IDLE = 0.8
PARSE_WINDOW = 0.1
# ... and while the first child spends this much CPU on a page: a second child
# costs the crawl its round trips, a second link memory and resolution cache, and
# pays only where pages are heavy to read (the Python docs: 1.8 ms of CPU a page;
# the synthetic site's 0.25 ms ran slower with two: 3.05 s against 2.85 s)
PARSE_HEAVY = 0.0004
# judged over at least this much of the child's CPU: /proc counts in 10 ms ticks
HEAVY_SAMPLE = 0.05


def parse_children() -> int:
    """How many children may read one process's pages: two where there is a second
    core for them (the crawling process and its readers share the machine), else one."""
    return 2 if usable_cores() >= 2 else 1


def unsent(links: list[str], sent: set[str]) -> list[str]:
    """The links not handed over before, now remembered as handed over (up to a
    bound: past it the set starts again, and a link sent twice costs a lookup)."""
    if len(sent) > LINKS_REMEMBERED:
        sent.clear()
    fresh = []
    for link in links:
        if link not in sent:
            sent.add(link)
            fresh.append(link)
    return fresh


def _no_body(_status: int, _content_type: str | None) -> bool:
    return False


def _any_body(_status: int, _content_type: str | None) -> bool:
    return True


class PageFetcher:
    """Fetches and reads the pages of one crawl with one :class:`Fetcher`.

    Used as an async context manager, it reads pages in a :class:`ParseSandbox`
    (a child process with a time and memory budget per page); outside one, in
    this process (unit tests, and systems without ``fork``)."""

    def __init__(self, config: CrawlConfig, fetcher: Fetches,
                 clean: Callable[[str], str] | None = None,
                 robots: RobotsPolicy | None = None, children: int | None = None) -> None:
        self.config = config
        self.robots = robots  # for --render: which requests of a page robots.txt allows
        self.renderer: Renderer | None = None
        self.fetcher = fetcher
        self.token = config.robots_token  # derived by a regex: once, not per page
        self.documents = content_types(config.documents)
        self.clean = clean if clean is not None else config.filters().clean
        # how every page is read, built once (and the same for a rendered DOM, but
        # for the question of rendering it, already answered)
        self.reading = ReadOptions(
            fingerprint_ignoring=config.ignore_selectors if config.fingerprints else None,
            clean=self.clean,
            images=config.images, documents=self.documents, anchors=config.audit,
            hreflang=config.hreflang, render=config.render, fragments=config.check_fragments,
            extractions=config.extraction_rules(), edges=config.links_path is not None,
            news=config.news, videos=config.videos,
            soft_404=config.soft_404_probes if config.soft_404 else None)
        self.reading_rendered = replace(self.reading, render="never")
        # the children reading pages: one, and a second when the first falls behind
        self.sandboxes: list[ParseSandbox] = []
        self.max_children = children if children is not None else parse_children()
        self._adding = False
        self._overflow = False  # until the pages are known to be heavy
        self._window_cpu, self._window_start = time.process_time(), time.monotonic()
        self._window_child = (0.0, 0)  # the first child's CPU and pages answered, then
        self._heavy = False  # what they said
        # Links already handed to the coordinator (a site's navigation repeats on every
        # page): it would find each in its seen set and drop it, after paying to
        # receive, clean and look it up. Where every link of every page is kept (the
        # state stores them, an audit counts who links where), all are sent and the
        # new ones marked (PageOutcome.fresh), the only ones judged. Kept where pages
        # are read: in the sandbox's child, when there is one.
        self.sent: set[str] = set()
        self.all_links_kept = (config.state_path is not None or config.audit
                               or config.check_external)

    async def __aenter__(self) -> PageFetcher:
        if hasattr(os, "fork"):
            # each child is entered and left by a task of its own in this group, so
            # one started later, from whichever task needed it, is closed the same way
            self._closing = anyio.Event()
            self._children = anyio.create_task_group()
            await self._children.__aenter__()
            self.sandboxes = [await self._children.start(self._host_child)]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self.renderer is not None:
            renderer, self.renderer = self.renderer, None
            await renderer.__aexit__(*exc_info)
        if self.sandboxes:
            self.sandboxes = []
            self._closing.set()
            await self._children.__aexit__(None, None, None)

    async def _host_child(self, *, task_status: anyio.abc.TaskStatus[ParseSandbox]
                          = anyio.TASK_STATUS_IGNORED) -> None:
        async with ParseSandbox(self.read, self.config.max_parse_seconds) as sandbox:
            task_status.started(sandbox)
            await self._closing.wait()

    async def _child_for_next_page(self) -> ParseSandbox:
        """The first child, unless :data:`PARSE_BACKLOG` pages already wait on it
        while this process idles: then the child with the fewest waiting (a second
        one, started when first needed where a core is free for it).

        Where pages carry hundreds of links (documentation sites), reading them
        is the bottleneck: the crawling process waits on its child half the time,
        and a second child reads the overflow (the Python docs 1.2x as fast).
        Where pages are light, the crawling process is the bottleneck, and a
        second child reading pages beside it only takes CPU from it (s10k 4-8 %
        slower, bench/README.md), so this process's own CPU is measured every
        :data:`PARSE_WINDOW` s, and while it uses :data:`PARSE_IDLE` of a core
        or more every page goes to the first child. So does every page while
        the first child spends less than :data:`PARSE_HEAVY` of CPU a page:
        light pages are read faster by one child than by two (bench/README.md)."""
        sandboxes = self.sandboxes
        first = sandboxes[0]
        if first.backlog() < PARSE_BACKLOG or self.max_children < 2:
            return first
        now = time.monotonic()
        if now - self._window_start >= PARSE_WINDOW:
            cpu = time.process_time()
            self._overflow = (cpu - self._window_cpu) / (now - self._window_start) < (
                PARSE_IDLE) and self._heavy_pages(first)
            self._window_cpu, self._window_start = cpu, now
        if not self._overflow:
            return first
        if len(sandboxes) > 1:
            return min(sandboxes, key=ParseSandbox.backlog)
        if self._adding:
            return first
        self._adding = True
        sandboxes.append(await self._children.start(self._host_child))
        return sandboxes[-1]

    def _heavy_pages(self, first: ParseSandbox) -> bool:
        """Whether the first child spent :data:`PARSE_HEAVY` or more of CPU on each page
        it answered, over the last :data:`HEAVY_SAMPLE` of its CPU (yes where no system
        tells a child's CPU; no until that much is measured)."""
        child_cpu, answered = first.child_cpu(), first.answered
        if child_cpu is None:
            return True
        then_cpu, then_answered = self._window_child
        if child_cpu < then_cpu or answered < then_answered:  # a new child: start again
            self._window_child, self._heavy = (child_cpu, answered), False
        elif child_cpu - then_cpu >= HEAVY_SAMPLE and answered > then_answered:
            self._heavy = (child_cpu - then_cpu) / (answered - then_answered) >= PARSE_HEAVY
            self._window_child = (child_cpu, answered)
        return self._heavy

    def read(self, response: Response, depth: int, now: datetime,
             rendered: bool = False, probe: ProbeAnswer | None = None) -> PageOutcome:
        """One answer into its outcome (in the sandbox's child, when there is one).
        ``rendered``: the body is the DOM a browser rendered, read for its merge;
        ``probe``: what an unknown URL in the page's directory showed, compared too."""
        reading = self.reading_rendered if rendered else self.reading
        if probe is not None and reading.soft_404 is not None:
            reading = replace(reading, soft_404=(*reading.soft_404, probe))
        outcome = read_page(response, depth, self.token, now, reading)
        # a page about to be rendered keeps every link: they are compared with the DOM's
        if outcome.links and not rendered and not wants_render(outcome.record):
            self._hand_over(outcome)
        return outcome

    def _hand_over(self, outcome: PageOutcome) -> None:
        """Drop the links handed over before, or, where every link is kept, mark the
        others as the ones to judge."""
        if self.all_links_kept:
            outcome.fresh = unsent(outcome.links, self.sent)
        else:
            outcome.links_out = self.scope.count_outside(outcome.links)
            outcome.links = unsent(outcome.links, self.sent)

    async def _read(self, response: Response, depth: int, now: datetime,
                    rendered: bool = False, probe: ProbeAnswer | None = None
                    ) -> PageOutcome:
        if self.sandboxes:
            # Off this process: a page lexbor takes seconds over cannot stall the loop.
            sandbox = await self._child_for_next_page()
            return await sandbox.read(response, depth, now, rendered, probe)
        try:
            return self.read(response, depth, now, rendered, probe)
        except Exception as exc:  # one page never ends the crawl: it is that page's error
            return failed_page(response, depth, exc)

    async def _render(self, response: Response, raw: PageOutcome, now: datetime
                      ) -> PageOutcome:
        """The page as a browser shows it, merged with its raw reading."""
        if self.renderer is None:  # the first page that needs a browser: Playwright loaded
            self.renderer = _renderer(self)
        record = raw.record
        shown = await self.renderer.render(response)
        if shown.html is None:  # crashed twice, or never loaded: the raw HTML is what there is
            record.render_why = f"{record.render_why}; not rendered: {shown.failure}"
            record.render_notes = ((shown.failure_kind, shown.failure or "the browser failed"),)
        else:
            body = shown.html.encode("utf-8", "surrogatepass")
            dom = replace(response, body=body, content_type="text/html; charset=utf-8")
            rendered = await self._read(dom, record.depth, now, rendered=True)
            notes = list(shown.notes)
            if shown.url.partition("#")[0] != response.url:
                notes.append(("url-changed", shown.url))
            raw = merge(raw, rendered, notes, self.scope.contains, self.documents)
        if raw.links:
            self._hand_over(raw)
        return raw

    async def fetch(self, job: Job) -> PageOutcome:
        """One URL fetched, read (and rendered): whatever goes wrong that nobody
        foresaw becomes that URL's ``internal-error`` row, and the crawl goes on. One
        bad URL must never cost a 100,000-page run; our own deliberate errors (a
        browser that will not start, a full disk) still end it."""
        try:
            return await self._fetch(job)
        except CrawlerError:
            raise
        except Exception as exc:
            log_unforeseen(job.url, exc)
            return failed_page(Response(url=job.url), job.depth, exc)

    async def _fetch(self, job: Job) -> PageOutcome:
        fetch = self.fetcher.fetch
        headers = job.validators or None
        if self.documents and extension(job.url) in self.config.documents:
            # judged from its headers alone: HEAD, or a GET left unread where HEAD is refused
            response = await fetch(job.url, want_body=_no_body, method="HEAD", headers=headers)
            if response.status in HEAD_REFUSED:  # closed after the headers, never read
                response = await fetch(job.url, want_body=_no_body, drain=False,
                                       headers=headers)
            if wants_body(response.status or 0, response.content_type):
                # an HTML page behind a document's name: read as the page it is
                response = await fetch(job.url, want_body=wants_body, headers=headers)
        else:
            response = await fetch(job.url, want_body=wants_body, headers=headers)
        now = datetime.now(UTC)
        if response.body is None:
            try:
                return self.read(response, job.depth, now)
            except Exception as exc:  # one page never ends the crawl
                return failed_page(response, job.depth, exc)
        outcome = await self._read(response, job.depth, now, probe=job.probe)
        if self.config.render != "never" and wants_render(outcome.record) and (
                outcome.record.error is None):
            outcome = await self._render(response, outcome, now)
        return outcome

    @cached_property
    def scope(self) -> Scope:
        start = normalize_url(self.config.start_url) or self.config.start_url
        return Scope.for_start(self.clean(start), self.config.prefix)


def _renderer(pages: PageFetcher) -> Renderer:
    """A browser for this process's pages (Playwright imported only here)."""
    from crawler.render.browser import find_browser
    from crawler.render.renderer import Renderer

    async def same_origin(url: str) -> Response:
        return await pages.fetcher.fetch(url, want_body=_any_body)

    robots = pages.robots
    scope = pages.scope
    return Renderer(pages.config, find_browser(pages.config.browser), scope.origin,
                    same_origin, robots.allows if robots is not None else lambda _url: True)
