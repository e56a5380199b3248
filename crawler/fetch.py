"""The only module that speaks HTTP: one request in, one :class:`Response` out.

It owns what httpx leaves to the caller:

* a **total deadline** per request (``anyio.fail_after``): httpx's timeouts are
  per operation, so a server dripping one byte every few seconds would
  otherwise hold a worker forever;
* a **body cap** on *decoded* bytes: the body is read raw and inflated here
  with a length limit, so a gzip bomb stops at the cap instead of in memory;
* **retries** with exponential back-off and jitter for transient failures,
  honouring ``Retry-After``; the politeness :class:`~crawler.politeness.Gate`;
* mapping every exception to an :class:`~crawler.errors.ErrorKind`, so callers
  never see an httpx exception. Redirects are *not* followed here: the crawler
  routes them through its frontier.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import aiohttp
import anyio
import httpx
from httpx_aiohttp import AiohttpTransport

from crawler.config import CrawlConfig
from crawler.dates import retry_after_seconds
from crawler.errors import ErrorKind
from crawler.politeness import Gate

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_BASE = 0.5
BACKOFF_CAP = 30.0
# Unwanted bodies up to this size are read and dropped to keep the connection.
DRAIN_LIMIT = 64 * 1024
ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"


@dataclass(slots=True)
class Response:
    """The parts of an HTTP answer the crawler uses (no httpx types leak out)."""

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
            raise httpx.DecodingError(f"unsupported content-encoding {encoding!r}")

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
                raise httpx.DecodingError("corrupt compressed body") from None
            self._raw_deflate_fallback = False
        self.size += len(out)
        if self.size > self.limit:
            raise _TooLarge
        return out


def _small(content_length: str | None) -> bool:
    return content_length is not None and content_length.isdigit() and (
        int(content_length) <= DRAIN_LIMIT)


async def _read_capped(answer: httpx.Response, limit: int) -> bytes:
    """The decoded body, raising :class:`_TooLarge` as soon as it passes ``limit``."""
    inflater = _Inflater(answer.headers.get("content-encoding", ""), limit)
    try:
        return b"".join([inflater.feed(raw) async for raw in answer.aiter_raw()])
    except httpx.StreamConsumed:
        # Responses built in memory (httpx.MockTransport) arrive already read.
        if len(answer.content) > limit:
            raise _TooLarge from None
        return answer.content


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, consulted only when a response actually sets a cookie.

    httpx wraps every response for ``http.cookiejar`` even without a
    ``Set-Cookie`` header; on a crawl of 304s that was a tenth of the run.
    """

    def extract_cookies(self, response: httpx.Response) -> None:
        if "set-cookie" in response.headers:
            super().extract_cookies(response)


class Fetcher:
    """One connection pool to the crawled host, and the rules for using it."""

    def __init__(self, config: CrawlConfig, *, transport: httpx.AsyncBaseTransport | None = None):
        self.config = config
        self.gate = Gate(rate=config.rate, delay=config.delay)
        limits = httpx.Limits(
            max_connections=config.concurrency, max_keepalive_connections=config.concurrency
        )
        self._client = httpx.AsyncClient(
            # httpcore's pool polls every connection on every request and collapses
            # under concurrency; aiohttp's engine under httpx's API does not
            # (bench/README.md has the figures).
            transport=transport or AiohttpTransport(limits=limits),
            limits=limits,
            timeout=httpx.Timeout(config.timeout),
            follow_redirects=False,
            cookies=_Cookies(),
            headers={"User-Agent": config.user_agent, "Accept": ACCEPT,
                     "Accept-Encoding": "gzip, deflate"},
        )

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._client.aclose()

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
        started = anyio.current_time()
        for attempt in range(1, attempts + 1):
            await self.gate.wait()
            response = await self._attempt(url, want_body, limit, headers)
            response.attempts = attempt
            pause = self._retry_pause(response, attempt)
            if pause is None or attempt == attempts:
                break
            await anyio.sleep(pause)
        response.elapsed = anyio.current_time() - started
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
        result = Response(url=url)
        try:
            with anyio.fail_after(self.config.timeout):
                async with self._client.stream("GET", url, headers=headers) as answer:
                    h = answer.headers
                    result.status = answer.status_code
                    result.content_type = h.get("content-type")
                    result.location = h.get("location")
                    result.last_modified = h.get("last-modified")
                    result.etag = h.get("etag")
                    result.retry_after = h.get("retry-after")
                    result.x_robots_tag = h.get_list("x-robots-tag")
                    result.link = h.get_list("link")
                    if want_body(answer.status_code, result.content_type):
                        result.body = await _read_capped(answer, limit)
                    elif answer.status_code in (204, 304) or _small(h.get("content-length")):
                        # Reading a short 404 or redirect body keeps the connection
                        # alive; closing it unread would cost a new one.
                        async for _ in answer.aiter_raw():
                            pass
        except TimeoutError:
            result.error = ErrorKind.TIMEOUT
        except _TooLarge:
            result.error = ErrorKind.TOO_LARGE
        except (httpx.HTTPError, httpx.InvalidURL, aiohttp.ClientError, OSError) as exc:
            result.error = error_kind(exc, got_status=result.status is not None)
        return result


def error_kind(exc: BaseException, *, got_status: bool) -> ErrorKind:
    """Classify a transport failure by its root cause (aiohttp's, under httpx's)."""
    cause = exc.__cause__ if isinstance(exc, httpx.HTTPError) and exc.__cause__ else exc
    if isinstance(cause, aiohttp.ClientConnectorError | httpx.ConnectError):
        return ErrorKind.CONNECT
    if isinstance(cause, TimeoutError | httpx.TimeoutException | aiohttp.ServerTimeoutError):
        return ErrorKind.TIMEOUT
    if isinstance(cause, httpx.DecodingError):
        return ErrorKind.DECODING
    if isinstance(cause, aiohttp.ClientResponseError | httpx.ProtocolError) and not got_status:
        return ErrorKind.PROTOCOL
    return ErrorKind.NETWORK
