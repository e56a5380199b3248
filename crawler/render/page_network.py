"""How a rendered page's requests are answered: the browser has no network of its own.

Each request is answered as :mod:`crawler.render.requests` decides: the page's
own document from the crawl's fetch (never twice); images, media and fonts
never; a same-origin request robots.txt disallows aborted; same-origin reads
through the crawl's own fetcher (its pacing, credentials and limits); other
origins' requests, and every request that is not a read, sent by our own
client under the crawl's network rule (``crawler.http.page_requests``), paced
per origin. A WebSocket is refused. What interception cannot see goes to the
dead-end proxy (``no_network.py``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Route, WebSocketRoute

from crawler.config import CrawlConfig
from crawler.core.response import Response
from crawler.http.page_requests import PageRequests, RequestFailed
from crawler.render.requests import (
    CACHED_TYPES,
    Kind,
    OriginPacer,
    Stored,
    SubresourceCache,
    request_kind,
)
from crawler.urls.normalize import origin_of

NOTES_PER_PAGE = 50  # what one page may say about its requests (the rest are counted)

FetchOrigin = Callable[[str], Awaitable[Response]]


@dataclass(slots=True)
class Visit:
    """One page being rendered in a tab: its document, what it said, what is in flight."""

    document: Response
    notes: list[tuple[str, ...]] = field(default_factory=list)
    in_flight: int = 0
    network_at: float = field(default_factory=time.monotonic)
    crashed: bool = False
    dropped: int = 0

    def note(self, *note: str) -> None:
        if len(self.notes) < NOTES_PER_PAGE or note[0] in ("timeout", "crash"):
            self.notes.append(note)
        else:
            self.dropped += 1


class PageNetwork:
    """Answers every request of the crawl's rendered pages; ``visits`` says which
    page each tab is rendering (the renderer keeps it up to date)."""

    def __init__(self, config: CrawlConfig, origin: str, fetch_origin: FetchOrigin,
                 allows: Callable[[str], bool]) -> None:
        self.origin = origin
        self.fetch_origin = fetch_origin
        self.allows = allows
        self.cache = SubresourceCache()
        interval = max(config.delay, 1 / config.rate if config.rate else 0.0)
        self.pacer = OriginPacer(interval)
        # other origins' requests, sent by us under the crawl's network rule
        self.requests = PageRequests(config)
        self.visits: dict[Page, Visit] = {}

    async def aclose(self) -> None:
        await self.requests.aclose()

    async def route(self, route: Route) -> None:
        """Answer one request of a rendered page (Playwright's route handler)."""
        request = route.request
        try:
            frame = request.frame
            tab, main = frame.page, frame.parent_frame is None
        except PlaywrightError:  # a worker's request: it has no frame
            await _quietly(route.abort("blockedbyclient"))
            return
        visit = self.visits.get(tab)
        if visit is None:  # the tab's last page was read already
            await _quietly(route.abort("aborted"))
            return
        url = request.url
        kind = request_kind(url, resource_type=request.resource_type,
                            navigation=request.is_navigation_request(), main_frame=main,
                            document=visit.document.url, origin=self.origin,
                            allows=self.allows)
        visit.in_flight += 1
        visit.network_at = time.monotonic()
        try:
            await self._answer(route, kind, url, request.method, request.resource_type, visit)
        finally:
            visit.in_flight -= 1
            visit.network_at = time.monotonic()

    async def _answer(self, route: Route, kind: Kind, url: str, method: str,
                      resource_type: str, visit: Visit) -> None:
        if kind is Kind.DOCUMENT:
            document = visit.document
            await _quietly(route.fulfill(status=document.status or 200, body=document.body,
                                         headers={"content-type": document.content_type
                                                  or "text/html"}))
        elif kind is Kind.NAVIGATION:
            visit.note("navigation", url)
            await _quietly(route.abort("aborted"))
        elif kind in (Kind.FRAME, Kind.UNWANTED, Kind.OTHER):
            await _quietly(route.abort("blockedbyclient"))
        elif kind is Kind.DISALLOWED:
            visit.note("robots-blocked", resource_type, url)
            await _quietly(route.abort("blockedbyclient"))
        elif method not in ("GET", "HEAD"):  # an API call: we send it, paced, as asked
            await self._from_third_party(route, url, resource_type, visit,
                                         noted=kind is Kind.THIRD_PARTY)
        elif (stored := self.cache.get(url)) is not None:
            await _quietly(route.fulfill(status=stored.status, headers=stored.headers,
                                         body=stored.body))
        elif kind is Kind.ORIGIN:
            await self._from_origin(route, url, resource_type, visit)
        else:
            await self._from_third_party(route, url, resource_type, visit)

    async def _from_origin(self, route: Route, url: str, resource_type: str,
                           visit: Visit) -> None:
        answer = await self.fetch_origin(url)
        if answer.status is None or answer.error is not None:
            visit.note("request-failed", resource_type, url,
                       answer.error.value if answer.error else "no answer")
            await _quietly(route.abort("failed"))
            return
        headers = {"content-type": answer.content_type or "application/octet-stream"}
        if answer.location:
            headers["location"] = answer.location
        if answer.status >= 400:
            visit.note("request-failed", resource_type, url, f"status {answer.status}")
        stored = Stored(answer.status, headers, answer.body or b"")
        if answer.status == 200 and resource_type in CACHED_TYPES:
            self.cache.put(url, stored)
        await _quietly(route.fulfill(status=stored.status, headers=stored.headers,
                                     body=stored.body))

    async def _from_third_party(self, route: Route, url: str, resource_type: str,
                                visit: Visit, noted: bool = True) -> None:
        """Sent by our own client under the crawl's network rule (the browser has no
        network), as the page asked it: method, headers, body."""
        origin = origin_of(url)
        if noted:
            visit.note("third-party", origin)
        await self.pacer.wait(origin)
        request = route.request
        try:
            answer = await self.requests.send(request.method, url, await request.all_headers(),
                                              request.post_data_buffer)
        except (RequestFailed, PlaywrightError) as exc:
            why = " ".join(str(exc).split())[:200]
            if why.startswith("private-address"):
                visit.note("private-address", resource_type, url)
            else:
                visit.note("request-failed", resource_type, url, why)
            await _quietly(route.abort("blockedbyclient" if why.startswith("private-address")
                                       else "failed"))
            return
        if answer.status >= 400:
            visit.note("request-failed", resource_type, url, f"status {answer.status}")
        if answer.status == 200 and resource_type in CACHED_TYPES and request.method == "GET":
            self.cache.put(url, Stored(answer.status, answer.headers, answer.body))
        await _quietly(route.fulfill(status=answer.status, headers=answer.headers,
                                     body=answer.body))

    async def refuse_web_socket(self, socket: WebSocketRoute, tab: Page | None = None
                                ) -> None:
        """A page's WebSocket is never connected anywhere: closed at once, and noted
        on the page of ``tab`` (each tab routes its own; the context's route, which
        cannot tell the page, is the fallback that still refuses)."""
        visit = self.visits.get(tab) if tab is not None else None
        if visit is not None:
            visit.note("websocket-refused", socket.url)
        with contextlib.suppress(PlaywrightError):
            await socket.close(code=1008, reason="no network for rendered pages")


async def _quietly(action: Awaitable[None]) -> None:
    """A route answered after its page closed or crashed: nothing left to answer."""
    with contextlib.suppress(PlaywrightError):
        await action
