"""Which transport carries a crawl's requests, and how it is set up.

=============  ====================================  ==========================
option         transport                             connections
=============  ====================================  ==========================
(default)      ours (``h1_transport.py``): HTTP/1.1  at most ``--concurrency``,
               on an asyncio protocol, llhttp's      kept alive
               parser, under httpx's API
a proxy in     aiohttp's engine under httpx's API    the same, to the proxy
the            (``aiohttp_transport.py``), which
environment    speaks to HTTP proxies and tunnels
               ``https`` through them
``--http2``    httpx's own (httpcore), HTTP/2 when   one multiplexed connection
               the server agrees by ALPN over TLS;   for ``https``; up to
               plain ``http`` stays HTTP/1.1         ``--concurrency`` for
                                                     ``http``
=============  ====================================  ==========================

The default is the cheap one: 0.048 ms of CPU a request on a fast site, against
0.128 ms through aiohttp's engine and 1.1-3.0 ms through httpx's own HTTP/1.1
pool (bench/engines.py, bench/README.md); aiohttp is imported only for a proxy.
HTTP/2 is for live HTTPS sites, where one connection carrying ``--concurrency``
streams is kinder to the server than ``--concurrency`` connections. All verify
certificates against the same bundle and go through the same proxy, decided
here once per crawl: a crawl has one scheme and host.
"""

from __future__ import annotations

import os
import ssl
import urllib.request

import certifi
import httpx

from crawler.http.address_rule import NetworkRule
from crawler.http.guarded import guard
from crawler.http.h1_transport import H1Transport
from crawler.http.stale_retry import RetryStale
from crawler.urls.normalize import host_of

# Idle keep-alive connections are closed after this many seconds.
KEEPALIVE_SECONDS = 15.0
# aiohttp's 8 KiB default per header line refuses real pages whose
# Content-Security-Policy or Link header runs to 10-20 KB.
MAX_HEADER_BYTES = 64 * 1024
MAX_HEADERS = 256


def tls_context(scheme: str) -> ssl.SSLContext:
    """Certificate verification against ``SSL_CERT_FILE`` if set, else certifi's bundle.

    The system store is not used because some Python builds (python.org's macOS
    installer) ship it empty; ``SSL_CERT_FILE`` is the usual way to add a
    company's own CA. A plain-``http`` crawl never makes a handshake, so it gets
    a context that verifies against nothing instead of paying ~35 ms to load
    the bundle: should TLS ever be attempted, it fails closed.
    """
    if scheme != "https":
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or certifi.where())


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for the normalised ``url`` (``http_proxy``,
    ``https_proxy``, ``all_proxy``, minus ``no_proxy``), as wget, curl and pip read them."""
    proxies = urllib.request.getproxies_environment()
    if not proxies or urllib.request.proxy_bypass_environment(host_of(url), proxies):
        return None
    return proxies.get(url.partition(":")[0]) or proxies.get("all")


def open_transport(start_url: str, *, http2: bool, concurrency: int, rule: NetworkRule
                   ) -> httpx.AsyncBaseTransport:
    """The transport for a crawl starting at the normalised ``start_url``, every
    connection of which passes ``rule`` (``address_rule.py``)."""
    scheme = start_url.partition(":")[0]
    context = tls_context(scheme)
    proxy = proxy_for(start_url)
    if not http2 and proxy is None:
        return H1Transport(ssl_context=context, max_connections=concurrency,
                           keepalive_expiry=KEEPALIVE_SECONDS,
                           max_header_bytes=MAX_HEADER_BYTES, max_headers=MAX_HEADERS,
                           rule=rule)
    if not http2:  # through a proxy: aiohttp's engine speaks to it (imported only then)
        from crawler.http.aiohttp_transport import AiohttpTransport

        return guard(AiohttpTransport(ssl_context=context, max_connections=concurrency,
                                      keepalive_expiry=KEEPALIVE_SECONDS, proxy=proxy,
                                      max_header_bytes=MAX_HEADER_BYTES,
                                      max_headers=MAX_HEADERS), rule, proxied=True)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency,
                          keepalive_expiry=KEEPALIVE_SECONDS)
    inner = httpx.AsyncHTTPTransport(verify=context, http1=True, http2=True, limits=limits,
                                     proxy=httpx.Proxy(proxy) if proxy else None,
                                     trust_env=False)
    return RetryStale(guard(inner, rule, proxied=proxy is not None), pool=inner._pool)
