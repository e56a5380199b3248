"""One request in, one :class:`Response` out — through httpx's API only.

A crawl has one httpx transport (``transports.py``: our HTTP/1.1 client by
default, httpx's own with HTTP/2 for ``--http2``) and one ``httpx.Cookies``
jar. Requests and responses are httpx objects, sent through httpx's transport
API (``handle_async_request``) rather than ``httpx.AsyncClient.send``: the
client's machinery (a cookie jar that builds an ``email.Message`` of every
response's headers, the auth and redirect generators, stream wrappers) cost
0.2 ms a request here, 13 % of a whole crawl, for features a crawler does not
use — it follows redirects through its frontier, sends no credentials the
client would manage, and keeps cookies for one origin (bench/README.md has
the measurement). The fetcher adds what neither transport promises on its own:

* a **total deadline** per request, body included: socket timeouts are per
  operation, so a server dripping one byte every few seconds would otherwise
  hold a worker forever;
* a **body cap** on *decoded* bytes: the body is streamed raw (the transport's stream)
  and inflated by :class:`~crawler.http.inflate.Inflater` under a limit, so a
  gzip bomb stops at the cap instead of in memory;
* **retries** with exponential back-off and jitter for transient failures,
  honouring ``Retry-After``, and the politeness :class:`Gate`;
* **exact URLs**: requests are built from the normalised URL without being
  parsed or quoted again (``prebuilt.py``);
* every failure mapped to an :class:`~crawler.core.errors.ErrorKind`, so callers
  never see an exception. Redirects are *not* followed here: the crawler
  routes them through its frontier, where they pass scope and robots checks.
"""

from __future__ import annotations

import asyncio
import random
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import anyio
import httpx

from crawler.config import CrawlConfig
from crawler.core.credentials import Credentials
from crawler.core.dates import retry_after_seconds
from crawler.core.errors import ErrorKind
from crawler.core.response import Response
from crawler.core.unforeseen import log_unforeseen
from crawler.http.address_rule import NetworkRule, PrivateAddress, rule_for_config
from crawler.http.deadlines import Deadline, Deadlines
from crawler.http.inflate import Inflater, TooLarge, Undecodable
from crawler.http.politeness import Gate
from crawler.http.prebuilt import WHEN_SENT, RequestFactory
from crawler.http.transports import open_transport, proxy_for
from crawler.urls.normalize import normalize_url

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
# Unwanted bodies up to this size are read and dropped to keep the connection.
DRAIN_LIMIT = 64 * 1024
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
# The site's cookies, capped as browsers cap them (RFC 6265 §6.1 asks for at least
# 50 a domain of 4096 bytes each): a site setting a new cookie on every page grew a
# Cookie header of 621 KB by page 3,000, past every server's header limit (8 KB for
# nginx and Apache), and made each request's header cost more than the last.
MAX_COOKIES = 50
MAX_COOKIE_BYTES = 4096
MAX_COOKIE_HEADER = 8000


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.partition('/')[0]}"


@dataclass(frozen=True, slots=True)
class FetchOptions:
    """What the fetcher needs of a crawl's configuration, taken once."""

    start_url: str
    user_agent: str
    credentials: Credentials
    timeout: float  # seconds a request may take in all
    retries: int
    max_retry_after: float  # the longest Retry-After obeyed, in seconds
    max_page_bytes: int
    rate: float | None  # requests a second at most
    delay: float  # seconds between two requests at least
    http2: bool
    concurrency: int
    rule: NetworkRule  # where any request of this crawl may connect (address_rule.py)

    @classmethod
    def of(cls, config: CrawlConfig) -> FetchOptions:
        return cls(start_url=config.start_url, user_agent=config.user_agent,
                   credentials=config.credentials, timeout=config.timeout,
                   retries=config.retries, max_retry_after=config.max_retry_after,
                   max_page_bytes=config.max_page_bytes, rate=config.rate, delay=config.delay,
                   http2=config.http2, concurrency=config.concurrency,
                   rule=rule_for_config(config))


class Fetcher:
    """One client for the crawled origin, and the rules for using it."""

    def __init__(self, config: FetchOptions) -> None:
        self.config = config
        self.gate = Gate(rate=config.rate, delay=config.delay)
        # One scheme and host per crawl: its start URL decides the proxy and TLS setup.
        self._start = normalize_url(config.start_url) or config.start_url
        self.proxy = proxy_for(self._start)
        origin = _origin(self._start)
        credentials = config.credentials
        self._user_cookie = credentials.cookie
        self._requests = RequestFactory(origin, [
            (b"Host", origin.partition("://")[2].encode("ascii")),
            (b"User-Agent", config.user_agent.encode("latin-1", "replace")),
            (b"Accept", ACCEPT.encode()),
            (b"Accept-Encoding", b"gzip, deflate"),
        ], private=[(name.encode("ascii"), value.encode("latin-1"))
                    for name, value in credentials.headers])
        # A site's session cookie is kept like a browser would, IP hosts included,
        # but only from and to the crawl's origin (port included, unlike a browser):
        # the other origins we ask (a live sitemap elsewhere) get no cookie at all.
        self.cookies = httpx.Cookies()
        # the jar's cookies, oldest first, with the bytes each adds to a Cookie header
        self._cookie_order: dict[tuple[str, str, str], int] = {}
        # told when the site set a cookie (worker processes share one jar: worker_pool)
        self.on_cookies: Callable[[], None] | None = None
        self._transport: httpx.AsyncBaseTransport | None = None
        self._deadlines = Deadlines()
        # where any request of this crawl may connect (address_rule.py)
        self.rule: NetworkRule = config.rule

    async def __aenter__(self) -> Fetcher:
        self._transport = open_transport(self._start, http2=self.config.http2,
                                         concurrency=self.config.concurrency,
                                         rule=self.rule)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._transport is not None:
            await self._transport.aclose()

    async def fetch(
        self,
        url: str,
        *,
        want_body: Callable[[int, str | None], bool],
        max_bytes: int | None = None,
        truncate: bool = False,
        headers: tuple[tuple[str, str], ...] | dict[str, str] | None = None,
        method: str = "GET",
        drain: bool = True,
        when_sent: Callable[[], None] | None = None,
    ) -> Response:
        """GET ``url`` with retries; read the body only if ``want_body(status, type)``.

        The decoded body may hold ``max_bytes`` (default ``--max-page-bytes``); past
        that it is ``too-large``, or, with ``truncate``, cut there and kept. With
        ``drain=False`` an unwanted body is never read, however short: the
        connection is closed after the headers. ``when_sent`` is called as each
        attempt's request goes on the wire, by a transport that can tell (ours;
        not aiohttp's, through a proxy): work the caller can do while the answer
        travels, and which does not count against ``--timeout``."""
        ask = _Ask(want_body, max_bytes or self.config.max_page_bytes,
                   tuple(headers.items()) if isinstance(headers, dict) else headers,
                   truncate, method, drain)
        attempts = self.config.retries + 1
        started = time.monotonic()
        for attempt in range(1, attempts + 1):
            await self.gate.wait()
            response = Response(url=url)
            # one watch over every request's deadline (deadlines.py), not a timer each
            deadline = self._deadlines.start(self.config.timeout)
            try:
                await self._attempt(response, ask,
                                    when_sent=when_sent and _not_counted(when_sent, deadline))
            except asyncio.CancelledError:
                if not deadline.expired_here():
                    raise
                response.error, response.body = ErrorKind.TIMEOUT, None
            except Exception as exc:  # a fault nobody foresaw: this URL's, not the crawl's
                log_unforeseen(url, exc)
                response.error, response.body = ErrorKind.INTERNAL, None
                response.detail = f"{type(exc).__name__}: {exc}"[:300]
            finally:
                self._deadlines.stop(deadline)
            response.attempts = attempt
            pause = self._retry_pause(response, attempt)
            if pause is None or attempt == attempts:
                break
            await anyio.sleep(pause)
        response.elapsed = time.monotonic() - started
        return response

    def _cap_cookies(self) -> None:
        """Keep the jar within a browser's limits: a cookie over 4096 bytes is
        refused, and past 50 cookies or a header of 8,000 bytes (with --cookie's)
        the oldest go first."""
        jar = self.cookies.jar
        order = self._cookie_order
        present = {(c.domain, c.path, c.name): c for c in jar}
        for key in list(order):
            if key not in present:
                del order[key]  # expired or deleted by the site
        for key, cookie in present.items():
            if len(cookie.name) + len(cookie.value or "") > MAX_COOKIE_BYTES:
                jar.clear(*key)
                order.pop(key, None)
            else:  # a new one goes last; one set again keeps its place, with its new size
                order[key] = len(cookie.name) + len(cookie.value or "") + 3  # "; " and "="
        room = MAX_COOKIE_HEADER - len(self._user_cookie or "")
        size = sum(order.values())
        while order and (len(order) > MAX_COOKIES or size > room):
            key = next(iter(order))
            size -= order.pop(key)
            jar.clear(*key)

    def _retry_pause(self, response: Response, attempt: int) -> float | None:
        """Seconds to wait before trying again, or ``None`` if this answer is final."""
        transient = response.error in (ErrorKind.CONNECT, ErrorKind.TIMEOUT, ErrorKind.NETWORK)
        if not transient and response.status not in RETRY_STATUSES:
            self.gate.recover()
            return None
        backoff = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1)) * random.uniform(0.5, 1.5)
        if response.status in (429, 503):
            asked = retry_after_seconds(response.retry_after, datetime.now(UTC))
            pause = min(self.config.max_retry_after, asked if asked is not None else backoff)
            self.gate.back_off(pause)
            return pause
        return backoff

    async def _attempt(self, result: Response, ask: _Ask, *,
                       when_sent: Callable[[], None] | None = None) -> None:
        transport = self._transport
        assert transport is not None, "use the Fetcher as an async context manager"
        request = self._requests.get(result.url, ask.extra, ask.method)
        if when_sent is not None:
            request.extensions[WHEN_SENT] = when_sent
        own = self._requests.own(result.url)
        if self.cookies and own:
            self.cookies.set_cookie_header(request)
        if self._user_cookie and own:
            # --cookie's pairs first, then what the site set (the jar adds its
            # header only to a request without one, so ours is joined after).
            kept = request.headers.get("cookie")
            request.headers["Cookie"] = (f"{self._user_cookie}; {kept}" if kept
                                         else self._user_cookie)
        try:
            answer = await transport.handle_async_request(request)
        except (httpx.HTTPError, OSError, ValueError) as exc:  # the network's, or the URL's
            result.error = error_kind(exc, got_status=False, via_proxy=self.proxy is not None)
            return
        try:
            await self._take(answer, result, request, ask)
        finally:
            # closed at its transport stream, which hands the connection back (read to
            # the end) or closes it (abandoned mid-body)
            await answer.stream.aclose()  # type: ignore[union-attr]
        if result.error is not None:
            result.body = None

    async def _take(self, answer: httpx.Response, result: Response, request: httpx.Request,
                    ask: _Ask) -> None:
        """The answer's headers and (if wanted) body into ``result``. Our own reading
        is outside any ``try``: a fault there is a bug, which the caller's net makes
        this URL's ``internal-error``, never a network error that looks like the site's."""
        encoding, cookies = _read_headers(answer, result)
        if cookies and self._requests.own(result.url):  # a cookie is the origin's only
            answer.request = request
            self.cookies.extract_cookies(answer)
            self._cap_cookies()
            if self.on_cookies is not None:
                self.on_cookies()
        status = result.status = answer.status_code
        head = ask.method == "HEAD"
        if not head and ask.want_body(status, result.content_type):
            try:
                inflater = Inflater(encoding, ask.size, truncate=ask.truncate)
            except Undecodable:  # an encoding we cannot read: the answer's, not ours
                result.error = ErrorKind.DECODING
                return
            await _read_body(answer, result, inflater, self.proxy)
        elif status in (204, 304) or head or (
                ask.drain and _small(answer.headers.get("content-length"))):
            # Reading a short 404 or redirect body (or a 304's nothing) to its end keeps
            # the connection alive; closing it unread would cost a new one.
            await _read_body(answer, result, None, self.proxy)


@dataclass(frozen=True, slots=True)
class _Ask:
    """What one fetch asks for, the same at each attempt."""

    want_body: Callable[[int, str | None], bool]
    size: int  # decoded bytes at most
    extra: tuple[tuple[str, str], ...] | None  # headers beyond the base ones (validators)
    truncate: bool = False  # past ``size``: cut and kept, rather than too-large
    method: str = "GET"
    drain: bool = True  # read a short unwanted body, to keep the connection


async def _read_body(answer: httpx.Response, result: Response, inflater: Inflater | None,
                     proxy: str | None) -> None:
    """The body, inflated into ``result.body`` (``inflater`` None: read and dropped).
    Only the reads from the transport's stream are the network's (every transport
    raises httpx's own exceptions); too-large and undecodable are the inflater's
    verdicts. Straight from the transport's stream: aiter_raw's chunker and
    bookkeeping cost ~5 us a page."""
    parts: list[bytes] = []
    chunks = answer.stream.__aiter__()  # type: ignore[union-attr]
    while inflater is None or not inflater.full:
        try:
            raw = await chunks.__anext__()
        except StopAsyncIteration:
            break
        except (httpx.HTTPError, OSError) as exc:
            result.error = error_kind(exc, got_status=True, via_proxy=proxy is not None)
            return
        if inflater is None:
            continue
        try:
            parts.append(inflater.feed(raw))
        except TooLarge:
            result.error = ErrorKind.TOO_LARGE
            return
        except Undecodable:
            result.error = ErrorKind.DECODING
            return
    if inflater is not None:
        result.body = b"".join(parts)


def _not_counted(work: Callable[[], None], deadline: Deadline) -> Callable[[], None]:
    """``work``, with the time it takes given back to the request's deadline: the
    server is not to blame for what the crawler did meanwhile."""
    def timed() -> None:
        started = time.monotonic()
        work()
        deadline.extend(time.monotonic() - started)
    return timed


def _read_headers(answer: httpx.Response, result: Response) -> tuple[str, bool]:
    """Copy the headers the crawler uses into ``result``, in one pass over the raw
    list; returns the Content-Encoding and whether a cookie was set.

    URLs (``Location``, ``Link``) are decoded as UTF-8 with surrogate escapes,
    so a raw non-UTF-8 byte stays that byte when the URL is normalised (as
    browsers send it); the other values as latin-1, which keeps every byte.
    """
    encoding, cookies = "", False
    for raw_name, raw_value in answer.headers.raw:
        name = raw_name.lower()
        if name == b"content-type":
            result.content_type = raw_value.decode("latin-1")
        elif name == b"location":
            result.location = raw_value.decode("utf-8", "surrogateescape")
        elif name == b"last-modified":
            result.last_modified = raw_value.decode("latin-1")
        elif name == b"etag":
            result.etag = raw_value.decode("latin-1")
        elif name == b"retry-after":
            result.retry_after = raw_value.decode("latin-1")
        elif name == b"x-robots-tag":
            result.x_robots_tag.append(raw_value.decode("latin-1"))
        elif name == b"link":
            result.link.append(raw_value.decode("utf-8", "surrogateescape"))
        elif name == b"content-encoding":
            encoding = raw_value.decode("latin-1")
        elif name == b"content-length" and raw_value.isdigit():
            result.length = int(raw_value)
        elif name == b"set-cookie":
            cookies = True
    return encoding, cookies


def _small(content_length: str | None) -> bool:
    return content_length is not None and content_length.isdigit() and (
        int(content_length) <= DRAIN_LIMIT)


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def error_kind(exc: BaseException, *, got_status: bool, via_proxy: bool = False) -> ErrorKind:
    """Classify a failure of either transport by what httpx reports, and its cause."""
    if isinstance(exc, PrivateAddress):
        return ErrorKind.PRIVATE_ADDRESS
    if isinstance(exc, httpx.TimeoutException):
        return ErrorKind.TIMEOUT
    if isinstance(exc, httpx.ProxyError):
        return ErrorKind.PROXY
    if not got_status and _caused_by(exc, ssl.SSLError):
        return ErrorKind.TLS
    if isinstance(exc, httpx.ConnectError):
        # Through a proxy, the only connection we open is to the proxy.
        return ErrorKind.PROXY if via_proxy else ErrorKind.CONNECT
    if isinstance(exc, httpx.ProtocolError) and not got_status:
        return ErrorKind.PROTOCOL
    return ErrorKind.NETWORK
