"""Checking the links that leave the crawl (``--check-external``): is each still there?

Other people's servers get the politeness ours does, and more care, since we
are not their crawler:

* one connection per origin, and at most ``--external-rate`` requests a second
  to it (its robots.txt fetched first counts as one);
* its robots.txt is read and what it disallows to our user-agent is not
  requested (reported as ``robots-disallowed``, neither broken nor fine);
* ``HEAD`` first, ``GET`` when the server refuses HEAD (405, 501), its body
  never read; redirects followed up to :data:`MAX_REDIRECTS`;
* 429 and 503 are retried after their ``Retry-After`` (at most
  ``--max-retry-after``), up to ``--retries`` times;
* its own timeout (``--external-timeout``) for the whole check of a URL;
* none of the crawl's credentials, ever: a client of its own, with none;
* the certificate of each https origin is read once, for its expiry date.

Results come back as :class:`LinkCheck` values; the cache (``--state``) is the
caller's, so a URL checked within ``--external-cache-days`` is not asked again.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

import anyio
import httpx
from selectolax.lexbor import LexborHTMLParser

from crawler.config import CrawlConfig
from crawler.core.dates import retry_after_seconds
from crawler.http.transports import proxy_for, tls_context
from crawler.page.decode import decode_html
from crawler.page.extract import page_ids
from crawler.urls.normalize import origin_of, resolve_link
from crawler.urls.robots import policy_from_response

MAX_REDIRECTS = 5
HEAD_REFUSED = frozenset({405, 501})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
RETRIED = frozenset({429, 503})
ROBOTS_BYTES = 512 * 1024


@dataclass(slots=True)
class LinkCheck:
    """What one external URL answered."""

    url: str
    status: int | None = None  # the final answer's, after redirects
    final_url: str | None = None  # where its redirects end (None: it did not redirect)
    hops: int = 0
    error: str | None = None  # timeout, connection, tls, too-many-redirects, …
    disallowed: bool = False  # its robots.txt disallows it to us: not requested
    checked_at: float = 0.0  # epoch seconds
    cached: bool = False
    # --check-fragments: the anchors of the page, when a link points into it (None: not read)
    ids: list[str] | None = None

    @property
    def broken(self) -> bool:
        return not self.disallowed and (self.error is not None or (self.status or 0) >= 400)


@dataclass(slots=True)
class Certificate:
    origin: str
    expires: datetime


class _Origin:
    """One origin's client, pacing and robots.txt."""

    def __init__(self, origin: str, config: CrawlConfig) -> None:
        self.origin = origin
        self.config = config
        proxy = proxy_for(origin + "/")
        self.client = httpx.AsyncClient(
            verify=tls_context(origin.partition(":")[0]),
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            timeout=config.external_timeout, follow_redirects=False, trust_env=False,
            proxy=proxy, headers={"User-Agent": config.user_agent})
        self.interval = 1 / config.external_rate
        self.next_start = 0.0
        self._turns = anyio.Lock()
        self.allows: Callable[[str], bool] = lambda _url: True
        self.certificate: datetime | None = None
        self.answers: dict[str, tuple[int, str | None]] = {}

    async def pace(self) -> None:
        """One request at a time leaves, ``interval`` after the last one really left
        (as crawler.http.politeness.Gate does for the crawl's own origin)."""
        async with self._turns:
            while (now := time.monotonic()) < self.next_start:
                await anyio.sleep(self.next_start - now)
            self.next_start = time.monotonic() + self.interval

    def answered(self) -> None:
        """Count the interval again from the answer: a request slow to arrive (a new
        connection, a busy network) would otherwise reach the server less than an
        interval before the next one. Its origin's requests go one at a time, so this
        costs only the answer's own latency."""
        self.next_start = max(self.next_start, time.monotonic() + self.interval)

    async def request(self, method: str, url: str) -> httpx.Response:
        """One request, its body unread (HEAD has none; GET is closed after the headers)."""
        for attempt in range(self.config.retries + 1):
            await self.pace()
            try:
                async with self.client.stream(method, url) as response:
                    self._read_certificate(response)
            finally:
                self.answered()
            if response.status_code not in RETRIED or attempt == self.config.retries:
                return response
            wait = retry_after_seconds(response.headers.get("retry-after"),
                                       datetime.now(UTC))
            pause = min(wait if wait is not None else self.interval * 2,
                        self.config.max_retry_after)
            self.next_start = max(self.next_start, time.monotonic() + pause)
        raise AssertionError("unreachable")

    async def answer(self, url: str) -> tuple[int, str | None]:
        """Status and Location of ``url``, asked once per crawl: a redirect that ends
        on a URL a page also links to does not ask for it again."""
        known = self.answers.get(url)
        if known is None:
            response = await self.request("HEAD", url)
            if response.status_code in HEAD_REFUSED:
                response = await self.request("GET", url)
            known = self.answers[url] = (response.status_code,
                                         response.headers.get("location"))
        return known

    async def read_robots(self) -> None:
        url = self.origin + "/robots.txt"
        try:
            await self.pace()
            async with self.client.stream("GET", url) as response:
                self._read_certificate(response)
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > ROBOTS_BYTES:
                        break
            status: int | None = response.status_code
        except httpx.HTTPError:
            status, body = None, b""
        finally:
            self.answered()
        if status is None or status >= 500:
            return  # unreachable robots.txt: the links are checked, and fail on their own
        policy = policy_from_response(status, body, self.config.robots_token)
        self.allows = policy.allows

    def _read_certificate(self, response: httpx.Response) -> None:
        if self.certificate is not None or not self.origin.startswith("https:"):
            return
        stream = response.extensions.get("network_stream")
        ssl_object = stream.get_extra_info("ssl_object") if stream is not None else None
        peer = ssl_object.getpeercert() if ssl_object is not None else None
        if peer and peer.get("notAfter"):
            self.certificate = datetime.fromtimestamp(
                ssl.cert_time_to_seconds(peer["notAfter"]), UTC)

    async def anchors(self, url: str) -> list[str] | None:
        """The ids of an HTML page within --max-page-bytes (its body read this once)."""
        await self.pace()
        try:
            return await self._read_anchors(url)
        finally:
            self.answered()

    async def _read_anchors(self, url: str) -> list[str] | None:
        async with self.client.stream("GET", url) as response:
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if response.status_code != 200 or kind not in ("text/html",
                                                            "application/xhtml+xml"):
                return None
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.config.max_page_bytes:
                    return None
        html = decode_html(body, response.headers.get("content-type"))
        return page_ids(LexborHTMLParser(html))

    async def check(self, url: str, want_ids: bool = False) -> LinkCheck:
        found = LinkCheck(url, checked_at=time.time())
        if not self.allows(url):
            found.disallowed = True
            return found
        current = url
        try:
            with anyio.fail_after(self.config.external_timeout * (MAX_REDIRECTS + 1)):
                for hop in range(MAX_REDIRECTS + 1):
                    status, location = await self.answer(current)
                    if status in REDIRECTS and location:
                        target = resolve_link(current, location)
                        if target is None:
                            found.status, found.error = status, "bad-redirect"
                            return found
                        if hop == MAX_REDIRECTS:
                            found.error = "too-many-redirects"
                            return found
                        found.hops, found.final_url = hop + 1, target
                        current = target
                        continue
                    found.status = status
                    if want_ids and status == 200:
                        found.ids = await self.anchors(current)
                    return found
        except TimeoutError:
            found.error = "timeout"
        except httpx.TimeoutException:
            found.error = "timeout"
        except httpx.ConnectError as exc:
            found.error = "tls" if isinstance(exc.__cause__, ssl.SSLError) or (
                "CERTIFICATE" in str(exc).upper()) else "connection"
        except httpx.HTTPError as exc:
            found.error = type(exc).__name__
        return found


CachedCheck = Callable[[str], LinkCheck | None]


async def check_links(urls: Iterable[str], config: CrawlConfig, *,
                      cached: CachedCheck | None = None,
                      want_ids: frozenset[str] = frozenset(),
                      on_check: Callable[[LinkCheck], Awaitable[None] | None] | None = None,
                      ) -> tuple[list[LinkCheck], list[Certificate]]:
    """Check each URL once: origins in parallel, each origin's URLs one at a time."""
    by_origin: dict[str, list[str]] = {}
    results: list[LinkCheck] = []
    for url in urls:
        known = cached(url) if cached is not None and url not in want_ids else None
        if known is not None:
            results.append(known)
            continue
        by_origin.setdefault(origin_of(url), []).append(url)
    certificates: list[Certificate] = []
    limit = anyio.CapacityLimiter(max(1, config.concurrency))

    async def one_origin(origin: str, targets: list[str]) -> None:
        async with limit:
            checker = _Origin(origin, config)
            try:
                await checker.read_robots()
                for url in targets:
                    found = await checker.check(url, url in want_ids)
                    results.append(found)
                    if on_check is not None:
                        done = on_check(found)
                        if done is not None:
                            await done
            finally:
                await checker.client.aclose()
            if checker.certificate is not None:
                certificates.append(Certificate(origin, checker.certificate))

    async with anyio.create_task_group() as group:
        for origin, targets in by_origin.items():
            group.start_soon(one_origin, origin, targets)
    return results, certificates
