"""What happens to each request a rendered page makes — decided here, purely.

The page's own document comes from the crawl's fetch (never twice); images,
media and fonts are never fetched (nothing the crawl reads depends on them);
a same-origin request robots.txt disallows is aborted, as a search engine's
renderer aborts it; same-origin requests go through the crawl's own fetcher
(its pacing, credentials and limits); other origins' scripts and API calls are
let through, paced per origin, because apps need their CDN.
"""

from __future__ import annotations

import enum
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import anyio

NEVER_FETCHED = frozenset({"image", "media", "font"})
CACHED_TYPES = frozenset({"script", "stylesheet"})


class Kind(enum.Enum):
    DOCUMENT = "document"  # the page being rendered: answered from the crawl's fetch
    NAVIGATION = "navigation"  # the page sends the tab elsewhere: aborted, reported
    FRAME = "frame"  # an iframe's document: not rendered
    UNWANTED = "unwanted"  # image, media, font
    DISALLOWED = "robots-disallowed"
    ORIGIN = "origin"  # same origin: through the crawl's fetcher
    THIRD_PARTY = "third-party"
    OTHER = "other"  # neither http nor https (the browser handles data: itself)


def request_kind(url: str, *, resource_type: str, navigation: bool, main_frame: bool,
                 document: str, origin: str, allows: Callable[[str], bool]) -> Kind:
    """How one request of a rendered page is answered."""
    if navigation:
        if not main_frame:
            return Kind.FRAME
        return Kind.DOCUMENT if url.partition("#")[0] == document else Kind.NAVIGATION
    if resource_type in NEVER_FETCHED:
        return Kind.UNWANTED
    if not url.startswith(("http://", "https://")):
        return Kind.OTHER
    if url.startswith(origin + "/") or url == origin:
        return Kind.ORIGIN if allows(url) else Kind.DISALLOWED
    return Kind.THIRD_PARTY


@dataclass(slots=True)
class Stored:
    status: int
    headers: dict[str, str]
    body: bytes


class SubresourceCache:
    """Scripts and stylesheets by URL, shared by every page of the crawl: a bundle is
    fetched once, as a browser's cache would (Playwright turns the browser's own
    off while requests are intercepted). Bounded in bytes, least recently used out."""

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        self._items: OrderedDict[str, Stored] = OrderedDict()

    def get(self, url: str) -> Stored | None:
        item = self._items.get(url)
        if item is not None:
            self._items.move_to_end(url)
        return item

    def put(self, url: str, item: Stored) -> None:
        if len(item.body) > self.max_bytes // 4 or url in self._items:
            return
        self._items[url] = item
        self.used += len(item.body)
        while self.used > self.max_bytes:
            _url, dropped = self._items.popitem(last=False)
            self.used -= len(dropped.body)


class OriginPacer:
    """``--rate`` and ``--delay`` for the other origins a rendered page calls: at
    least ``interval`` seconds between request starts to each."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._next: dict[str, float] = {}

    async def wait(self, origin: str) -> None:
        if self.interval <= 0:
            return
        now = time.monotonic()
        start = max(now, self._next.get(origin, now))
        self._next[origin] = start + self.interval
        if start > now:
            await anyio.sleep(start - now)
