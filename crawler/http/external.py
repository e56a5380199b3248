"""Checking the links that leave the crawl (``--check-external``): is each still there?

Other people's servers get the politeness ours does, and more care, since we
are not their crawler:

* one connection per origin, one request at a time, and at most
  ``--external-rate`` requests a second to it (its robots.txt fetched first
  counts as one). A redirect hop into another origin is that origin's request:
  its robots.txt, its pacing, its one connection;
* its robots.txt is read and what it disallows to our user-agent is not
  requested (reported as ``robots-disallowed``, neither broken nor fine), for
  every hop of a redirect chain;
* at most :data:`MAX_REQUESTS` requests a link, its redirect hops, a GET after
  a refused HEAD and a retry after 429 or 503 included (answers are shared
  through a per-origin cache, so a hop another link already asked costs
  nothing); a chain that needs more is ``too-many-redirects``;
* an origin that times out or refuses :data:`UNREACHABLE_AFTER` times in a row
  is not asked again: its remaining links are ``origin-unreachable``;
* one deadline for the whole phase (``--external-deadline``): what is not
  checked by then is ``not-checked``, counted, never dropped;
* every connection passes the network rule (``address_rule.py``): a link into
  a private address the start URL does not share is ``private-address``,
  never requested;
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
from crawler.http.address_rule import NetworkRule, PrivateAddress, rule_for_config
from crawler.http.guarded import guarded_client
from crawler.http.transports import proxy_for, tls_context
from crawler.page.decode import decode_html
from crawler.page.extract import page_ids
from crawler.urls.normalize import origin_of, resolve_link
from crawler.urls.robots import policy_from_response

MAX_REQUESTS = 3  # a link's requests at most, its redirect hops included
UNREACHABLE_AFTER = 3  # timeouts or refusals in a row before an origin is given up
HEAD_REFUSED = frozenset({405, 501})
REDIRECTS = frozenset({301, 302, 303, 307, 308})
RETRIED = frozenset({429, 503})
ROBOTS_BYTES = 512 * 1024
# what a LinkCheck's error says when the link was not asked: neither broken nor fine
NOT_CHECKED = "not-checked"  # the phase's deadline came first
PRIVATE = "private-address"  # the network rule keeps it closed
UNREACHABLE = "origin-unreachable"  # its origin failed UNREACHABLE_AFTER times in a row
UNASKED = frozenset({NOT_CHECKED, PRIVATE})


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
    def unchecked(self) -> bool:
        """Never asked (deadline, network rule): nothing is known of it."""
        return self.error in UNASKED

    @property
    def broken(self) -> bool:
        return not self.disallowed and not self.unchecked and (
            self.error is not None or (self.status or 0) >= 400)


@dataclass(slots=True)
class Certificate:
    origin: str
    expires: datetime


class _Origin:
    """One origin's client, pacing, robots.txt and answers."""

    def __init__(self, origin: str, config: CrawlConfig, rule: NetworkRule | None = None
                 ) -> None:
        self.origin = origin
        self.config = config
        self.client = guarded_client(
            rule or rule_for_config(config), verify=tls_context(origin.partition(":")[0]),
            proxy=proxy_for(origin + "/"),
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            timeout=config.external_timeout, follow_redirects=False,
            headers={"User-Agent": config.user_agent})
        self.interval = 1 / config.external_rate
        self.next_start = 0.0
        self._turns = anyio.Lock()  # pacing: who leaves next
        self._one = anyio.Lock()  # one request at a time, robots.txt first
        self.robots_read = False
        self.allows: Callable[[str], bool] = lambda _url: True
        self.certificate: datetime | None = None
        self.answers: dict[str, tuple[int, str | None]] = {}
        self.failures = 0  # timeouts and refusals in a row
        self.given_up: str | None = None  # UNREACHABLE or PRIVATE: asked no more

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
        """One request, its body unread (HEAD has none; GET is closed after the
        headers); timeouts and refusals in a row give the origin up."""
        async with self._one:
            await self.pace()
            try:
                async with self.client.stream(method, url) as response:
                    self._read_certificate(response)
            except PrivateAddress:
                self.given_up = PRIVATE
                raise
            except (httpx.TimeoutException, httpx.ConnectError):
                self.failures += 1
                if self.failures >= UNREACHABLE_AFTER:
                    self.given_up = UNREACHABLE
                raise
            finally:
                self.answered()
            self.failures = 0
            return response

    async def answer(self, url: str, budget: list[int]) -> tuple[int, str | None]:
        """Status and Location of ``url``, asked once per crawl (a redirect that ends
        on a URL a page also links to does not ask for it again), spending
        ``budget[0]`` requests at most: HEAD, GET where HEAD is refused, and 429 or
        503 asked again after its ``Retry-After`` while the budget lasts."""
        known = self.answers.get(url)
        if known is not None:
            return known
        budget[0] -= 1
        response = await self.request("HEAD", url)
        if response.status_code in HEAD_REFUSED and budget[0] > 0:
            budget[0] -= 1
            response = await self.request("GET", url)
        retries = 0
        while (response.status_code in RETRIED and retries < self.config.retries
               and budget[0] > 0):
            wait = retry_after_seconds(response.headers.get("retry-after"),
                                       datetime.now(UTC))
            pause = min(wait if wait is not None else self.interval * 2,
                        self.config.max_retry_after)
            self.next_start = max(self.next_start, time.monotonic() + pause)
            retries += 1
            budget[0] -= 1
            response = await self.request(response.request.method, url)
        known = self.answers[url] = (response.status_code, response.headers.get("location"))
        return known

    async def ready(self) -> None:
        """Its robots.txt, read once before its first link is asked."""
        if self.robots_read:
            return
        async with self._one:
            if self.robots_read:
                return
            self.robots_read = True
            await self._read_robots()

    async def _read_robots(self) -> None:
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
        except PrivateAddress:
            self.given_up = PRIVATE
            return
        except (httpx.TimeoutException, httpx.ConnectError):
            self.failures += 1  # a silent origin's robots.txt counts towards giving it up
            status, body = None, b""
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
        async with self._one:
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


class _Checker:
    """Every origin a check reaches, the ones links name and the ones redirects
    lead to alike: each with its own robots.txt, pacing and connection."""

    def __init__(self, config: CrawlConfig) -> None:
        self.config = config
        self.rule = rule_for_config(config)
        self.origins: dict[str, _Origin] = {}

    def origin(self, origin: str) -> _Origin:
        found = self.origins.get(origin)
        if found is None:
            found = self.origins[origin] = _Origin(origin, self.config, self.rule)
        return found

    async def close(self) -> None:
        for origin in self.origins.values():
            await origin.client.aclose()

    async def check(self, url: str, want_ids: bool = False) -> LinkCheck:
        found = LinkCheck(url, checked_at=time.time())
        budget = [MAX_REQUESTS]
        current = url
        try:
            with anyio.fail_after(self.config.external_timeout * (MAX_REQUESTS + 1)):
                while True:
                    origin = self.origin(origin_of(current))
                    await origin.ready()
                    if origin.given_up is not None:
                        found.error = origin.given_up
                        return found
                    if not origin.allows(current):
                        found.disallowed = True  # the link, or a hop it leads to
                        return found
                    if budget[0] <= 0:
                        found.error = "too-many-redirects"
                        return found
                    status, location = await origin.answer(current, budget)
                    if status in REDIRECTS and location:
                        target = resolve_link(current, location)
                        if target is None:
                            found.status, found.error = status, "bad-redirect"
                            return found
                        found.hops, found.final_url = found.hops + 1, target
                        current = target
                        continue
                    found.status = status
                    if want_ids and status == 200:
                        found.ids = await origin.anchors(current)
                    return found
        except TimeoutError:
            found.error = "timeout"
        except PrivateAddress:
            found.error = PRIVATE
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
    """Check each URL once: origins in parallel, each origin's URLs one at a time,
    all within ``--external-deadline`` (what it leaves is ``not-checked``)."""
    by_origin: dict[str, list[str]] = {}
    results: list[LinkCheck] = []
    for url in urls:
        known = cached(url) if cached is not None and url not in want_ids else None
        if known is not None:
            results.append(known)
            continue
        by_origin.setdefault(origin_of(url), []).append(url)
    limit = anyio.CapacityLimiter(max(1, config.concurrency))
    checker = _Checker(config)
    done: set[str] = set()

    async def one_origin(targets: list[str]) -> None:
        async with limit:
            for url in targets:
                found = await checker.check(url, url in want_ids)
                done.add(url)
                results.append(found)
                if on_check is not None:
                    step = on_check(found)
                    if step is not None:
                        await step

    try:
        deadline = config.external_deadline or float("inf")
        with anyio.move_on_after(deadline):
            async with anyio.create_task_group() as group:
                for targets in by_origin.values():
                    group.start_soon(one_origin, targets)
    finally:
        with anyio.CancelScope(shield=True):
            await checker.close()
    now = time.time()
    results += [LinkCheck(url, error=NOT_CHECKED, checked_at=now)
                for targets in by_origin.values() for url in targets if url not in done]
    certificates = [Certificate(origin.origin, origin.certificate)
                    for origin in checker.origins.values() if origin.certificate is not None]
    return results, certificates
