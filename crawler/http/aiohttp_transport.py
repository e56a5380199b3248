"""httpx's transport API on aiohttp's HTTP/1.1 engine: the default transport.

httpx is the crawler's HTTP API, but its own HTTP/1.1 pool costs 1.1-3.0 ms
of CPU a request on this workload against aiohttp's 0.2 ms (bench/README.md),
so by default the bytes move through aiohttp. This adapter exists, instead
of the ``httpx-aiohttp`` package's, because that package (0.2.0) breaks three
promises the crawler makes, with no setting to keep them:

* it hands aiohttp the URL as a string, which yarl re-quotes: ``%7E`` is sent
  as ``~`` and ``%3B`` as ``;`` (another resource, RFC 3986 §2.2); here the
  URL goes out exactly as the crawler normalised it;
* it keeps aiohttp's 8,190-byte limit on a header line, which refuses real
  pages with long ``Content-Security-Policy`` or ``Link`` headers;
* aiohttp's protocol and response errors escape it unmapped, and it maps a
  server disconnect to ``ConnectTimeout``; here every aiohttp failure becomes
  the httpx exception that says what happened.

This is the only module that imports aiohttp (a test guards it). Deadlines
are not set here: the fetcher puts one total deadline around each request,
for both transports alike.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator

import httpx

from crawler.http.lean_imports import no_default_tls_store
from crawler.http.prebuilt import RAW_URL

with no_default_tls_store():  # its default contexts go unused: ours is passed
    import aiohttp
    from aiohttp.http_exceptions import HttpProcessingError
    from yarl import URL

HTTP_11 = {"http_version": b"HTTP/1.1"}


class AiohttpTransport(httpx.AsyncBaseTransport):
    """One aiohttp session, opened on the first request (aiohttp binds it to the loop)."""

    def __init__(self, *, ssl_context: ssl.SSLContext, max_connections: int,
                 keepalive_expiry: float, proxy: str | None, max_header_bytes: int,
                 max_headers: int) -> None:
        self._ssl = ssl_context
        self._limit = max_connections
        self._keepalive = keepalive_expiry
        self._proxy = proxy
        self._max_header_bytes = max_header_bytes
        self._max_headers = max_headers
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(
            limit=self._limit, limit_per_host=self._limit, keepalive_timeout=self._keepalive,
            ttl_dns_cache=300, ssl=self._ssl)
        self._session = aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),  # cookies are httpx's business, above
            auto_decompress=False,  # the fetcher inflates under its byte cap
            timeout=aiohttp.ClientTimeout(total=None),  # the fetcher's deadline rules
            trust_env=False,  # the proxy is decided once, by the fetcher
            max_line_size=self._max_header_bytes,
            max_field_size=self._max_header_bytes,
            max_headers=self._max_headers,
        )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        session = self._session or self._open()
        url = URL(request.extensions.get(RAW_URL) or str(request.url), encoded=True)
        headers = [(name.decode("latin-1"), value.decode("latin-1"))
                   for name, value in request.headers.raw]
        for last in (False, True):
            try:
                answer = await session.request(request.method, url, headers=headers,
                                               allow_redirects=False, proxy=self._proxy)
                break
            except Exception as exc:
                if last or not _stale(exc, request.method):
                    raise _mapped(exc) from _cause(exc)
                # aiohttp asked once more already, on another idle connection, as old
                # as the first: the idle ones are let go, and the next is a new one
                _drop_idle(session)
        return httpx.Response(answer.status, headers=answer.raw_headers, stream=_Body(answer),
                              request=request, extensions=HTTP_11)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class _Body(httpx.AsyncByteStream):
    """The response body as aiohttp delivers it: raw, in the chunks that arrived."""

    def __init__(self, answer: aiohttp.ClientResponse) -> None:
        self._answer = answer

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._answer.content.iter_any():
                yield chunk
        except Exception as exc:
            raise _mapped(exc) from _cause(exc)

    async def aclose(self) -> None:
        answer = self._answer
        if answer.content.is_eof():
            answer.release()  # read to the end: the connection goes back to the pool
        else:
            answer.close()  # abandoned mid-body: the connection cannot be reused


def _stale(exc: BaseException, method: str) -> bool:
    """Did an idempotent request fail as on a connection the server had closed?"""
    return method in ("GET", "HEAD") and isinstance(
        exc, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError) and not isinstance(
        exc, aiohttp.ClientConnectorError)


def _drop_idle(session: aiohttp.ClientSession) -> None:
    """Close the pool's idle connections (aiohttp has no public call for it)."""
    idle = getattr(session.connector, "_conns", None)
    if not isinstance(idle, dict):
        return
    for pooled in idle.values():
        for protocol, *_when in pooled:
            protocol.close()
    idle.clear()


def _mapped(exc: BaseException) -> BaseException:
    """The httpx exception for an aiohttp failure; anything else unchanged."""
    message = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ClientProxyConnectionError | aiohttp.ClientHttpProxyError):
        return httpx.ProxyError(message)
    if isinstance(exc, aiohttp.ClientConnectorError):  # TLS failures included: see _cause
        return httpx.ConnectError(message)
    if isinstance(exc, TimeoutError):
        return httpx.ReadTimeout(message)
    if isinstance(exc, aiohttp.ClientResponseError | HttpProcessingError):
        return httpx.RemoteProtocolError(message)
    if isinstance(exc, aiohttp.ClientError | OSError):
        return httpx.ReadError(message)
    return exc


def _cause(exc: BaseException) -> BaseException:
    """What the mapped exception is raised from: for a failed handshake, the
    :class:`ssl.SSLError` itself, which is what tells the fetcher "TLS"."""
    if isinstance(exc, aiohttp.ClientSSLError):
        cause = getattr(exc, "certificate_error", None) or getattr(exc, "os_error", None)
        return cause if isinstance(cause, ssl.SSLError) else ssl.SSLError(str(exc))
    return exc
