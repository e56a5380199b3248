"""The only module that speaks HTTP: one request in, one :class:`Response` out.

It uses aiohttp's client directly. httpx's API on top of it was measured at
three times aiohttp's own cost per request (0.45 ms against 0.15 ms for a
``304``), which made a re-crawl of an unchanged site pay mostly for request
and response objects; ``bench/README.md`` has the figures. On top of aiohttp
this module owns:

* a **total deadline** per request, body included (aiohttp's ``total``
  timeout): socket timeouts are per operation, so a server dripping one byte
  every few seconds would otherwise hold a worker forever;
* a **body cap** on *decoded* bytes: the body is read raw and inflated here
  with a length limit, so a gzip bomb stops at the cap instead of in memory;
* **retries** with exponential back-off and jitter for transient failures,
  honouring ``Retry-After``; the politeness :class:`~crawler.politeness.Gate`;
* mapping every exception to an :class:`~crawler.errors.ErrorKind`, so callers
  never see an aiohttp exception. URLs are sent exactly as the crawler
  normalised them (no re-quoting). Redirects are *not* followed here: the
  crawler routes them through its frontier.
"""

from __future__ import annotations

import os
import random
import ssl
import time
import urllib.request
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import aiohttp
import anyio
import certifi
from aiohttp.http_exceptions import HttpProcessingError
from yarl import URL

from crawler.config import CrawlConfig
from crawler.dates import retry_after_seconds
from crawler.errors import ErrorKind
from crawler.politeness import Gate
from crawler.urls import host_of, normalize_url

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
# Unwanted bodies up to this size are read and dropped to keep the connection.
DRAIN_LIMIT = 64 * 1024
# Idle keep-alive connections are closed after this many seconds.
KEEPALIVE_SECONDS = 15.0
# aiohttp's 8 KiB default per header line refuses real pages whose
# Content-Security-Policy or Link header runs to 10-20 KB.
MAX_HEADER_BYTES = 64 * 1024
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"


@dataclass(slots=True)
class Response:
    """The parts of an HTTP answer the crawler uses (no aiohttp types leak out)."""

    url: str
    status: int | None = None
    content_type: str | None = None
    location: str | None = None
    last_modified: str | None = None
    etag: str | None = None
    x_robots_tag: list[str] = field(default_factory=list)
    link: list[str] = field(default_factory=list)
    retry_after: str | None = None
    body: bytes | None = None
    error: ErrorKind | None = None
    elapsed: float = 0.0
    attempts: int = 1


class _TooLarge(Exception):
    pass


class _Undecodable(Exception):
    """The body's Content-Encoding is unknown or its compressed data is corrupt."""


class _Inflater:
    """Content-Encoding decoding with a hard limit on output bytes."""

    def __init__(self, encoding: str, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._raw_deflate_fallback = False
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._zlib = None
        elif encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
            self._raw_deflate_fallback = True
        else:
            raise _Undecodable(f"unsupported content-encoding {encoding!r}")

    def feed(self, chunk: bytes) -> bytes:
        if self._zlib is None:
            out = chunk
        else:
            try:
                out = self._zlib.decompress(chunk, self.limit - self.size + 1)
            except zlib.error:
                if self._raw_deflate_fallback and self.size == 0:
                    # Some servers send raw deflate without the zlib header.
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._raw_deflate_fallback = False
                    return self.feed(chunk)
                raise _Undecodable("corrupt compressed body") from None
            self._raw_deflate_fallback = False
        self.size += len(out)
        if self.size > self.limit:
            raise _TooLarge
        return out


def tls_context() -> ssl.SSLContext:
    """Certificate verification against ``SSL_CERT_FILE`` if set, else certifi's bundle.

    The system store is not used because some Python builds (python.org's macOS
    installer) ship it empty; ``SSL_CERT_FILE`` is the usual way to add a
    company's own CA.
    """
    return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or certifi.where())


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for the normalised ``url`` (``http_proxy``,
    ``https_proxy``, ``all_proxy``, minus ``no_proxy``), as wget, curl and pip read them.

    A crawl has one scheme and host, so this is decided once per crawl.
    """
    proxies = urllib.request.getproxies_environment()
    if not proxies or urllib.request.proxy_bypass_environment(host_of(url), proxies):
        return None
    return proxies.get(url.partition(":")[0]) or proxies.get("all")


def _small(content_length: str | None) -> bool:
    return content_length is not None and content_length.isdigit() and (
        int(content_length) <= DRAIN_LIMIT)


async def _read_capped(answer: aiohttp.ClientResponse, limit: int) -> bytes:
    """The decoded body, raising :class:`_TooLarge` as soon as it passes ``limit``."""
    inflater = _Inflater(answer.headers.get("content-encoding", ""), limit)
    return b"".join([inflater.feed(raw) async for raw in answer.content.iter_any()])


class Fetcher:
    """One connection pool to the crawled host, and the rules for using it.

    The session is opened in ``__aenter__`` because aiohttp binds it to the
    running event loop.
    """

    def __init__(self, config: CrawlConfig) -> None:
        self.config = config
        self.gate = Gate(rate=config.rate, delay=config.delay)
        # One scheme and host per crawl: its start URL decides the proxy and TLS setup.
        self._start = normalize_url(config.start_url) or config.start_url
        self.proxy = proxy_for(self._start)
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Fetcher:
        config = self.config
        # Loading the CA bundle costs ~35 ms; a crawl of an http:// scope never
        # leaves it (aiohttp's own verifying default stays for safety).
        https = self._start.startswith("https:")
        connector = aiohttp.TCPConnector(
            limit=config.concurrency, limit_per_host=config.concurrency,
            keepalive_timeout=KEEPALIVE_SECONDS, ttl_dns_cache=300,
            ssl=tls_context() if https else True)
        self._session = aiohttp.ClientSession(
            connector=connector,
            # A site's session cookie is kept like a browser would; IP hosts included.
            cookie_jar=aiohttp.CookieJar(unsafe=True),
            headers={"User-Agent": config.user_agent, "Accept": ACCEPT,
                     "Accept-Encoding": "gzip, deflate"},
            # Bodies are inflated by _Inflater, under the byte cap.
            auto_decompress=False,
            # ``total`` runs until the body is read and the connection released.
            timeout=aiohttp.ClientTimeout(total=config.timeout, sock_connect=config.timeout,
                                          sock_read=config.timeout),
            trust_env=False,
            max_line_size=MAX_HEADER_BYTES,
            max_field_size=MAX_HEADER_BYTES,
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session is not None:
            await self._session.close()

    async def fetch(
        self,
        url: str,
        *,
        want_body: Callable[[int, str | None], bool],
        max_bytes: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """GET ``url`` with retries; read the body only if ``want_body(status, type)``."""
        limit = max_bytes or self.config.max_page_bytes
        attempts = self.config.retries + 1
        started = time.monotonic()
        for attempt in range(1, attempts + 1):
            await self.gate.wait()
            response = await self._attempt(url, want_body, limit, headers)
            response.attempts = attempt
            pause = self._retry_pause(response, attempt)
            if pause is None or attempt == attempts:
                break
            await anyio.sleep(pause)
        response.elapsed = time.monotonic() - started
        return response

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

    async def _attempt(
        self,
        url: str,
        want_body: Callable[[int, str | None], bool],
        limit: int,
        headers: dict[str, str] | None,
    ) -> Response:
        assert self._session is not None, "use the Fetcher as an async context manager"
        result = Response(url=url)
        try:
            async with self._session.get(URL(url, encoded=True), headers=headers,
                                         allow_redirects=False, proxy=self.proxy) as answer:
                h = answer.headers
                result.status = status = answer.status
                result.content_type = h.get("content-type")
                result.location = h.get("location")
                result.last_modified = h.get("last-modified")
                result.etag = h.get("etag")
                result.retry_after = h.get("retry-after")
                result.x_robots_tag = h.getall("x-robots-tag", [])
                result.link = h.getall("link", [])
                if want_body(status, result.content_type):
                    result.body = await _read_capped(answer, limit)
                elif status in (204, 304) or _small(h.get("content-length")):
                    # Reading a short 404 or redirect body keeps the connection
                    # alive; closing it unread would cost a new one.
                    async for _ in answer.content.iter_any():
                        pass
        except TimeoutError:
            result.error = ErrorKind.TIMEOUT
        except _TooLarge:
            result.error = ErrorKind.TOO_LARGE
        except _Undecodable:
            result.error = ErrorKind.DECODING
        except (aiohttp.ClientError, HttpProcessingError, OSError, ValueError) as exc:
            result.error = error_kind(exc, got_status=result.status is not None)
        return result


def error_kind(exc: BaseException, *, got_status: bool) -> ErrorKind:
    """Classify a transport failure by what aiohttp reports."""
    if isinstance(exc, aiohttp.ClientProxyConnectionError | aiohttp.ClientHttpProxyError):
        return ErrorKind.PROXY
    if isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError):
        return ErrorKind.TLS
    if isinstance(exc, aiohttp.ClientConnectorError):
        return ErrorKind.CONNECT
    if isinstance(exc, aiohttp.ClientResponseError | HttpProcessingError) and not got_status:
        return ErrorKind.PROTOCOL
    return ErrorKind.NETWORK
