"""The requests a rendered page makes to other origins, sent by us, not the browser.

The browser is given no network of its own (``crawler.render.renderer``): every
request it makes is intercepted, and those a page's scripts send elsewhere
(a CDN's bundle, an API call) come here, so they pass the same network rule as
the crawl (``address_rule.py``) and are answered from what our connection
received. A page's JavaScript can then no more read a loopback service or the
cloud's metadata address than a link can. No credential of the crawl is ever
sent: a client of its own, with none, and no cookie.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from crawler.config import CrawlConfig
from crawler.http.address_rule import PrivateAddress, rule_for_config
from crawler.http.guarded import guarded_client
from crawler.http.transports import proxy_for, tls_context

# hop-by-hop headers, and those the browser sets for its own connection
_NOT_FORWARDED = frozenset({"host", "connection", "keep-alive", "proxy-connection",
                            "transfer-encoding", "content-length", "upgrade", "te",
                            "accept-encoding", "cookie", "authorization"})
# what our client undid or the browser must not be told again
_NOT_RETURNED = frozenset({"content-encoding", "content-length", "transfer-encoding",
                           "connection", "keep-alive", "set-cookie"})


@dataclass(slots=True)
class PageAnswer:
    status: int
    headers: dict[str, str]
    body: bytes


class RequestFailed(Exception):
    """Not answered: the reason, one line (``private-address: …`` for the rule's)."""


class PageRequests:
    """One client per crawl for a rendered page's requests to other origins."""

    def __init__(self, config: CrawlConfig) -> None:
        self._config = config
        self._rule = rule_for_config(config)
        self._clients: dict[tuple[str, str | None], httpx.AsyncClient] = {}

    def _client(self, url: str) -> httpx.AsyncClient:
        scheme = url.partition(":")[0]
        proxy = proxy_for(url)
        key = (scheme, proxy)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = guarded_client(
                self._rule, verify=tls_context(scheme), proxy=proxy,
                limits=httpx.Limits(max_connections=self._config.concurrency),
                timeout=self._config.timeout, follow_redirects=False)
        return client

    async def send(self, method: str, url: str, headers: dict[str, str],
                   body: bytes | None) -> PageAnswer:
        """One request as the page asked it, its answer read within --max-page-bytes;
        a redirect is handed back for the browser to follow (its next hop comes
        through here again, and is judged again)."""
        sent = {name: value for name, value in headers.items()
                if name.lower() not in _NOT_FORWARDED}
        sent["User-Agent"] = self._config.user_agent
        try:
            async with self._client(url).stream(method, url, headers=sent,
                                                content=body or None) as answer:
                parts, size = [], 0
                async for chunk in answer.aiter_bytes():
                    size += len(chunk)
                    if size > self._config.max_page_bytes:
                        raise RequestFailed("too-large")
                    parts.append(chunk)
        except PrivateAddress as exc:
            raise RequestFailed(str(exc)) from None
        except httpx.HTTPError as exc:
            raise RequestFailed(" ".join(f"{type(exc).__name__} {exc}".split())[:200]
                                ) from None
        kept = {name: value for name, value in answer.headers.items()
                if name.lower() not in _NOT_RETURNED}
        return PageAnswer(answer.status_code, kept, b"".join(parts))

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
