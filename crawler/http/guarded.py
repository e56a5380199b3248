"""httpx transports that pass :mod:`crawler.http.address_rule` before they connect.

Our own HTTP/1.1 client asks the rule in its connect step
(``h1_transport.py``). httpx's own transports (``--http2``, the external link
checks, IndexNow, a rendered page's requests to other origins) dial through
httpcore's network backend, so the backend is wrapped: it resolves the host
through the rule and dials only the addresses the rule returned, while TLS still
names the host (httpcore passes the server name apart from the address).
Through a proxy the proxy dials; there the request is judged by its host
before it is handed on (:meth:`NetworkRule.check_proxied`).

httpcore is imported only when one of these is built: a plain crawl (our own
client) never loads it, and its import is 50 ms of every start otherwise.
"""

from __future__ import annotations

import functools
import ssl
import typing

import httpx

from crawler.http.address_rule import NetworkRule


@functools.cache
def _backends() -> tuple[type, type]:
    """The wrapped async and sync network backends (httpcore loaded here)."""
    import httpcore

    class GuardedBackend(httpcore.AsyncNetworkBackend):
        def __init__(self, inner: httpcore.AsyncNetworkBackend, rule: NetworkRule) -> None:
            self._inner = inner
            self._rule = rule

        async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                              local_address: str | None = None,
                              socket_options: typing.Iterable[typing.Any] | None = None,
                              ) -> httpcore.AsyncNetworkStream:
            failure: Exception | None = None
            for _family, address in await self._rule.addresses(host, port):
                try:
                    return await self._inner.connect_tcp(address, port, timeout,
                                                         local_address, socket_options)
                except httpcore.ConnectError as exc:
                    failure = exc
            assert failure is not None
            raise failure

        async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                      socket_options: typing.Iterable[typing.Any] | None = None,
                                      ) -> httpcore.AsyncNetworkStream:
            raise httpcore.ConnectError("a Unix socket is not a site")

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    class GuardedSyncBackend(httpcore.NetworkBackend):
        def __init__(self, inner: httpcore.NetworkBackend, rule: NetworkRule) -> None:
            self._inner = inner
            self._rule = rule

        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None,
                        socket_options: typing.Iterable[typing.Any] | None = None,
                        ) -> httpcore.NetworkStream:
            failure: Exception | None = None
            for _family, address in self._rule.addresses_now(host, port):
                try:
                    return self._inner.connect_tcp(address, port, timeout, local_address,
                                                   socket_options)
                except httpcore.ConnectError as exc:
                    failure = exc
            assert failure is not None
            raise failure

        def connect_unix_socket(self, path: str, timeout: float | None = None,
                                socket_options: typing.Iterable[typing.Any] | None = None,
                                ) -> httpcore.NetworkStream:
            raise httpcore.ConnectError("a Unix socket is not a site")

    return GuardedBackend, GuardedSyncBackend


def _bracketed(request: httpx.Request) -> httpx.Request:
    """``request`` with an IPv6 host in brackets where a proxy reads it: httpcore
    writes the absolute-form target from the bare host (``http://::1:8/x``, which
    no proxy can parse). A copy: the caller's request, and the response that
    names it, keep the URL as it was; the Host header, made already, is kept."""
    host = request.url.host
    if ":" not in host:
        return request
    url = httpx.URL.__new__(httpx.URL)
    url._uri_reference = request.url._uri_reference._replace(host=f"[{host}]")
    return httpx.Request(request.method, url, headers=request.headers, stream=request.stream,
                         extensions=request.extensions)


class _ProxiedCheck(httpx.AsyncBaseTransport):
    """A request through a proxy, judged by its host before it is handed on."""

    def __init__(self, inner: httpx.AsyncBaseTransport, rule: NetworkRule) -> None:
        self._inner = inner
        self._rule = rule

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        await self._rule.check_proxied(url.host, url.port or (443 if url.scheme == "https"
                                                              else 80))
        return await self._inner.handle_async_request(_bracketed(request))

    async def aclose(self) -> None:
        await self._inner.aclose()


class _SyncProxiedCheck(httpx.BaseTransport):
    """The same for a caller with no event loop."""

    def __init__(self, inner: httpx.BaseTransport, rule: NetworkRule) -> None:
        self._inner = inner
        self._rule = rule

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        self._rule.check_proxied_now(url.host, url.port or (443 if url.scheme == "https"
                                                            else 80))
        return self._inner.handle_request(_bracketed(request))

    def close(self) -> None:
        self._inner.close()


def guard(transport: httpx.AsyncBaseTransport, rule: NetworkRule, *, proxied: bool
          ) -> httpx.AsyncBaseTransport:
    """``transport`` (an ``httpx.AsyncHTTPTransport``, or any other through a proxy)
    made to pass the rule."""
    if proxied:  # an open rule checks nothing, but the target still needs its brackets
        return _ProxiedCheck(transport, rule)
    if rule.allowed is None:
        return transport
    pool = transport._pool  # type: ignore[attr-defined]
    pool._network_backend = _backends()[0](pool._network_backend, rule)
    return transport


def guarded_client(rule: NetworkRule, *, verify: ssl.SSLContext, proxy: str | None,
                   limits: httpx.Limits, **options: typing.Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose every connection passes the rule."""
    transport = httpx.AsyncHTTPTransport(verify=verify, limits=limits, trust_env=False,
                                         proxy=httpx.Proxy(proxy) if proxy else None)
    return httpx.AsyncClient(transport=guard(transport, rule, proxied=proxy is not None),
                             trust_env=False, **options)


def guarded_sync_client(rule: NetworkRule, *, proxy: str | None = None,
                        **options: typing.Any) -> httpx.Client:
    """The same for a caller with no event loop (IndexNow)."""
    transport = httpx.HTTPTransport(proxy=httpx.Proxy(proxy) if proxy else None,
                                    trust_env=False)
    guarded: httpx.BaseTransport = transport
    if proxy:
        guarded = _SyncProxiedCheck(transport, rule)
    elif rule.allowed is not None:
        pool = transport._pool
        pool._network_backend = _backends()[1](pool._network_backend, rule)
    return httpx.Client(transport=guarded, trust_env=False, **options)
