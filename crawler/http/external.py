"""Checking the links that leave the crawl (``--check-external``): is each still there?

Other people's servers get the politeness ours does, and more care, since we
are not their crawler:

* a few connections per origin, and a pace that starts at ``--external-rate``
  requests a second and adapts to its answers (``external_pace.py``: quicker
  while they stay fast, up to ``--external-max-rate``; slower on 429, 503 and
  slow answers). Its robots.txt is fetched first and counts as a request. A
  redirect hop into another origin is that origin's request: its robots.txt,
  its pace, its connections;
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
* when no origin answers at all (the machine is offline, a firewall drops
  everything) the phase stops as soon as :data:`OFFLINE_AFTER` origins have
  failed and none answered: every link is ``not-checked``, never ``broken``;
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
from collections.abc import Callable
from datetime import UTC, datetime

import anyio
import httpx
from selectolax.lexbor import LexborHTMLParser

from crawler.core.dates import retry_after_seconds
from crawler.http.address_rule import NetworkRule, PrivateAddress
from crawler.http.deadlines import total_timeout
from crawler.http.external_pace import CONNECTIONS, LONGEST_INTERVAL, Pace
from crawler.http.guarded import guarded_client
from crawler.http.link_check import (
    PRIVATE,
    UNREACHABLE,
    CheckOptions,
    LinkCheck,
)
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
OFFLINE_AFTER = 3  # origins failed, none answered: the network, not the links
OFFLINE = "no external origin reachable: external links not checked"


class Origin:
    """One origin's client, pace, robots.txt and answers."""

    def __init__(self, origin: str, config: CheckOptions, rule: NetworkRule | None = None,
                 heard: Callable[[str, bool], None] | None = None) -> None:
        self.origin = origin
        self.config = config
        self.client = guarded_client(
            rule or config.rule, verify=tls_context(origin.partition(":")[0]),
            proxy=proxy_for(origin + "/"),
            limits=httpx.Limits(max_connections=CONNECTIONS,
                                max_keepalive_connections=CONNECTIONS),
            timeout=config.timeout, follow_redirects=False,
            headers={"User-Agent": config.user_agent})
        self.pace = Pace(config.rate, config.max_rate)
        self._slots = anyio.Semaphore(CONNECTIONS)  # requests in flight
        # one request at a time until the origin has answered, again after a silence (a
        # dead origin is asked three times in all, not once a connection), and while its
        # answers come much faster than the pace: one connection keeps up, and the next
        # request waits an interval from the answer, so the server sees them no closer
        self._probe = anyio.Lock()
        self.answered_once = False
        self.took = 0.0  # seconds an answer takes, smoothed
        self._robots = anyio.Lock()  # robots.txt first, once
        self.robots_read = False
        self.allows: Callable[[str], bool] = lambda _url: True
        self.certificate: datetime | None = None
        self.answers: dict[str, tuple[int, str | None]] = {}
        self.failures = 0  # timeouts and refusals in a row
        self.given_up: str | None = None  # UNREACHABLE or PRIVATE: asked no more
        self.left = 0  # links still to check here (the progress line's estimate)
        # tells the checker this origin answered (True) or failed to (False)
        self.heard = heard or (lambda _origin, _answered: None)

    async def request(self, method: str, url: str) -> httpx.Response:
        """One request, its body unread (HEAD has none; GET is closed after the
        headers); timeouts and refusals in a row give the origin up."""
        async with self._slots:
            if self.answered_once and not self.failures and self.took * 4 >= self.pace.interval:
                return await self._send(method, url)  # answers slow for the pace: in parallel
            async with self._probe:
                if self.given_up is not None:  # while this one waited its turn
                    raise httpx.ConnectError(f"{self.origin} given up ({self.given_up})")
                return await self._send(method, url, alone=True)

    async def _send(self, method: str, url: str, alone: bool = False) -> httpx.Response:
        """``alone``: the only request in flight, so the next one waits an interval
        from its answer (a request slow to arrive must not reach the server less than
        an interval before the next)."""
        left = await self.pace.wait_turn()
        status = None
        try:
            with total_timeout(self.config.timeout):
                async with self.client.stream(method, url) as response:
                    self._read_certificate(response)
                    status = response.status_code
        except PrivateAddress:
            self.given_up = PRIVATE
            raise
        except (httpx.TimeoutException, httpx.ConnectError):
            self.failures += 1
            if self.failures >= UNREACHABLE_AFTER:
                self.given_up = UNREACHABLE
            self.heard(self.origin, False)
            raise
        finally:
            took = time.monotonic() - left
            self.took = took if not self.answered_once else 0.7 * self.took + 0.3 * took
            self.pace.answered(took, status, alone)
        self.failures = 0
        self.answered_once = True
        self.heard(self.origin, True)
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
            self.pace.hold(min(wait if wait is not None else self.pace.interval,
                               self.config.max_retry_after))
            retries += 1
            budget[0] -= 1
            response = await self.request(response.request.method, url)
        known = self.answers[url] = (response.status_code, response.headers.get("location"))
        return known

    async def ready(self) -> None:
        """Its robots.txt, read once before its first link is asked."""
        if self.robots_read:
            return
        async with self._robots:
            if self.robots_read:
                return
            # marked read once its answer is in: a link arriving meanwhile (a redirect
            # hop from another origin) waits on the lock, rather than find the read
            # begun and take the origin as allowing everything
            await self._read_robots()
            self.robots_read = True

    async def _read_robots(self) -> None:
        url = self.origin + "/robots.txt"
        left = await self.pace.wait_turn()
        status: int | None = None
        try:
            with total_timeout(self.config.timeout):
                async with self.client.stream("GET", url) as response:
                    self._read_certificate(response)
                    body = b""
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > ROBOTS_BYTES:
                            break
            status = response.status_code
            self.answered_once = True
            self.heard(self.origin, True)
        except PrivateAddress:
            self.given_up = PRIVATE
            return
        except (httpx.TimeoutException, httpx.ConnectError):
            self.failures += 1  # a silent origin's robots.txt counts towards giving it up
            self.heard(self.origin, False)
            status, body = None, b""
        except httpx.HTTPError:
            status, body = None, b""
        finally:
            self.pace.answered(time.monotonic() - left, status)
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
        async with self._slots:
            await self.pace.wait_turn()
            with total_timeout(self.config.timeout):
                return await self._read_anchors(url)

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


class Checker:
    """Every origin a check reaches, the ones links name and the ones redirects
    lead to alike: each with its own robots.txt, pace and connections. It also
    notices when no origin answers at all: then the network is at fault, not the
    links, and the phase stops (``offline``)."""

    def __init__(self, config: CheckOptions) -> None:
        self.config = config
        self.rule = config.rule
        self.origins: dict[str, Origin] = {}
        self.answered_any = False
        self.failed: set[str] = set()
        self.offline = False
        self.stop: Callable[[], None] = lambda: None  # cancels the phase

    def origin(self, origin: str) -> Origin:
        found = self.origins.get(origin)
        if found is None:
            found = self.origins[origin] = Origin(origin, self.config, self.rule, self.heard)
        return found

    def heard(self, origin: str, answered: bool) -> None:
        if answered:
            self.answered_any = True
            return
        self.failed.add(origin)
        if not self.answered_any and len(self.failed) >= OFFLINE_AFTER:
            self.offline = True
            self.stop()

    def slowest(self) -> tuple[str, int, float]:
        """The origin whose links left take longest at its pace: (origin, left, s)."""
        busiest = max(self.origins.values(), key=lambda origin: origin.pace.eta(origin.left),
                      default=None)
        if busiest is None:
            return "", 0, 0.0
        return busiest.origin, busiest.left, busiest.pace.eta(busiest.left)

    async def close(self) -> None:
        for origin in self.origins.values():
            await origin.client.aclose()

    async def check(self, url: str, want_ids: bool = False) -> LinkCheck:
        found = LinkCheck(url, checked_at=time.time())
        budget = [MAX_REQUESTS]
        current = url
        try:
            # a safety net over the requests' own timeouts, turns at the pace included
            with anyio.fail_after(self.config.timeout * (MAX_REQUESTS + 1)
                                  + CONNECTIONS * LONGEST_INTERVAL * MAX_REQUESTS):
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
            found.error = origin.given_up or ("tls" if isinstance(exc.__cause__, ssl.SSLError)
                                              or "CERTIFICATE" in str(exc).upper()
                                              else "connection")
        except httpx.HTTPError as exc:
            found.error = type(exc).__name__
        return found
