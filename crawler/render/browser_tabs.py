"""The browser and its tabs, for :class:`crawler.render.renderer.Renderer`.

One headless Chromium a process, launched at the first page that needs it, its
proxy a dead end (``no_network.py``). Its memory is bounded in two steps: a tab
is closed after :data:`PAGES_PER_TAB` pages (Playwright's objects for each
request a tab made live as long as the tab), and the browser restarted after
:data:`PAGES_PER_BROWSER`. A tab whose page misbehaved is retired; one a held
page took is closed in the background and a spare opened for the next page.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

import anyio
from playwright.async_api import (
    Browser,
    BrowserContext,
    CDPSession,
    Page,
    Playwright,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError

from crawler.config import CrawlConfig
from crawler.render.flags import FLAGS
from crawler.render.held import crash_renderer
from crawler.render.memory_watch import MemoryWatch, caps
from crawler.render.no_network import NO_BYPASS, DeadEnd
from crawler.render.page_network import PageNetwork
from crawler.render.settle import TRACKER

# A tab is replaced this often: what Playwright keeps of each request of a tab (in this
# process and in its driver, ~25 KB a page) is let go when the tab closes. Measured on
# the bench's SPA (bench/README.md, "Rendering"), a new tab every 100 pages keeps that
# flat at ~1 % of the pages/s; restarting the whole browser every 200 pages, as before,
# cost 16 %: every tab drains before the restart, and all start cold after it.
PAGES_PER_TAB = 100
PAGES_PER_TAB_ENV = "SITEMAP_CRAWLER_PAGES_PER_TAB"  # lowered by the tests
# The browser itself, for what still grows (the renderer's heap, the driver): with
# two workers on the bench's SPA the crawl's peak (PSS of every process, the worst of
# three runs) was 1,543 MB restarting every 1,000 pages, 1,465 every 500 and 1,342
# every 400, at the same pages/s or better.
PAGES_PER_BROWSER = 400
PAGES_PER_BROWSER_ENV = "SITEMAP_CRAWLER_PAGES_PER_BROWSER"  # lowered by the tests
# Seconds a step of letting a page go may take (stopping its scripts, closing its tab).
# Whether a page whose settling wait is late is held by a script or only slow is
# asked of its renderer (held.py): a held page ends within the timeout and a second;
# a slow one is waited for (at 1 s of grace, a busy machine's page of timers had been
# taken for one that never yields, and lost its rendering).
OUTER_GRACE = 2.0

@dataclass(slots=True)
class RenderedPage:
    """What the browser showed: the DOM serialised once the page settled (or at the
    deadline), and what happened on the way."""

    html: str | None
    url: str
    settled: bool = True
    notes: list[tuple[str, ...]] = field(default_factory=list)
    failure: str | None = None  # why there is no html
    failure_kind: str = "crash"  # its render-errors kind: crash, or timeout


class Crashed(Exception):
    """The browser or the page's renderer process died (in browser ``generation``)."""

    def __init__(self, why: str, generation: int) -> None:
        super().__init__(why)
        self.generation = generation


class NoBrowser(Exception):
    """The browser would not start: no page of this crawl can be rendered."""


class BrowserTabs:
    """The browser, its context and its tabs: which tab a page gets, and when the
    browser is launched, restarted and closed."""

    def __init__(self, config: CrawlConfig, executable: str, network: PageNetwork) -> None:
        self.config = config
        self.executable = executable
        self.network = network
        self.pages_per_browser = _from_environment(PAGES_PER_BROWSER_ENV, PAGES_PER_BROWSER)
        self.pages_per_tab = _from_environment(PAGES_PER_TAB_ENV, PAGES_PER_TAB)
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._tabs: list[Page] = []
        self._tab_pages: dict[Page, int] = {}  # pages each tab has rendered
        self._visits = network.visits  # which page each tab is rendering
        self._lock = anyio.Lock()
        self._rendered = 0  # by this browser
        self._busy = 0
        self._idle = anyio.Event()
        self._generation = 0  # browsers launched so far
        self._dead_end: DeadEnd | None = None  # the browser's only "network"
        self._sessions: dict[Page, CDPSession] = {}
        # a page past its caps dies alone (out of memory), reported, instead of taking
        # the machine's memory (one page reached 1 GB unchecked): memory_watch.py
        self.heap_mb, renderer_mb, tree_mb = caps(config.workers or os.cpu_count() or 1)
        self.memory = MemoryWatch(renderer_mb, tree_mb)
        self._watching: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()  # held pages' tabs, closing
        self.restarts = 0

    def _let_go(self, tab: Page, *, crash: bool) -> None:
        """Retire ``tab`` in the background (crashing its renderer first if asked)."""
        session = self._sessions.get(tab)
        if tab in self._tabs:  # no other page may be given it meanwhile
            self._tabs.remove(tab)
        self._tab_pages.pop(tab, None)

        async def close() -> None:
            if crash:
                await crash_renderer(session)
            await self._retire(tab)
            await self._spare_tab()  # the next page need not wait for a tab to open

        task = asyncio.get_running_loop().create_task(close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _retire(self, tab: Page) -> None:
        """A tab whose page misbehaved is not used again (its timers may fire anew)."""
        if tab in self._tabs:
            self._tabs.remove(tab)
        self._tab_pages.pop(tab, None)
        self._sessions.pop(tab, None)
        with anyio.move_on_after(OUTER_GRACE):
            await quietly(tab.close(run_before_unload=False))

    async def _tab(self) -> Page:
        async with self._lock:
            if self._browser is not None and self._rendered >= self.pages_per_browser:
                while self._busy:  # retire it once the pages in it are read
                    self._idle = anyio.Event()
                    await self._idle.wait()
                await self._close_browser()
            if self._context is None:
                await self._launch()
            assert self._context is not None
            for tab in [tab for tab in self._tabs if tab not in self._visits]:
                if self._tab_pages.get(tab, 0) < self.pages_per_tab:
                    return tab
                self._tabs.remove(tab)  # retired for a new one
                self._tab_pages.pop(tab, None)
                await quietly(tab.close())
            try:
                tab = await self._open_tab(self._context)
            except PlaywrightError as exc:  # its renderer died as the tab opened
                raise Crashed(str(exc).splitlines()[0], self._generation) from None
            self._tabs.append(tab)
            return tab

    async def _spare_tab(self) -> None:
        """A tab opened ahead, for the one a held page took with it."""
        async with self._lock:
            if self._context is None or len(self._tabs) >= self.config.render_concurrency:
                return
            with contextlib.suppress(PlaywrightError):
                self._tabs.append(await self._open_tab(self._context))

    async def _isolated_tab(self) -> tuple[Page, BrowserContext]:
        """A tab in a context of its own, so in a renderer process of its own."""
        async with self._lock:
            if self._context is None:
                await self._launch()
            assert self._browser is not None
            try:
                context = await self._new_context(self._browser)
                return await self._open_tab(context), context
            except PlaywrightError as exc:
                raise Crashed(str(exc).splitlines()[0], self._generation) from None

    async def _open_tab(self, context: BrowserContext) -> Page:
        tab = await context.new_page()
        with contextlib.suppress(PlaywrightError):
            self._sessions[tab] = await context.new_cdp_session(tab)
        tab.on("pageerror", lambda error, tab=tab: self._on_error(tab, error))
        tab.on("crash", lambda _page, tab=tab: self._on_crash(tab))
        try:
            await tab.route_web_socket(
                "**/*", lambda socket, tab=tab: self.network.refuse_web_socket(socket, tab))
        except PlaywrightError:  # half open: not left behind
            self._sessions.pop(tab, None)
            await quietly(tab.close())
            raise
        return tab

    async def _new_context(self, browser: Browser) -> BrowserContext:
        """A context that answers every request itself (the browser has no network)."""
        context = await browser.new_context(
            service_workers="block", user_agent=self.config.user_agent,
            viewport={"width": 1280, "height": 900})
        await context.add_init_script(TRACKER)
        await context.route("**/*", self.network.route)
        await context.route_web_socket("**/*", self.network.refuse_web_socket)
        context.on("page", self._on_page)
        return context

    async def _launch(self) -> None:
        try:
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            if self._dead_end is None:
                self._dead_end = DeadEnd()
            if self._watching is None and MemoryWatch.available():
                self._watching = asyncio.get_running_loop().create_task(self.memory.run())
            self._browser = await self._playwright.chromium.launch(
                executable_path=self.executable, headless=True,
                args=[*FLAGS, f"--js-flags=--max-old-space-size={self.heap_mb}"],
                # whatever the interception cannot see goes here, and nowhere, loopback
                # included: "<-loopback>" said here, not left to Playwright, which adds
                # it unless an environment variable tells it not to
                proxy={"server": self._dead_end.url, "bypass": NO_BYPASS})
            self._context = await self._new_context(self._browser)
        except PlaywrightError as exc:
            await self._close_browser()
            raise NoBrowser(f"the browser did not start: {str(exc).splitlines()[0]}"
                             ) from None
        self._generation += 1
        self._browser.on("disconnected", lambda _browser: self._on_disconnect())
        self._rendered = 0

    async def _close_browser(self) -> None:
        browser, self._browser, self._context = self._browser, None, None
        self._tabs = []
        self._tab_pages = {}
        self._sessions = {}
        for visit in self._visits.values():
            visit.crashed = True
        if browser is not None:
            with contextlib.suppress(Exception):
                await browser.close()

    async def _on_page(self, page: Page) -> None:
        """A page a script opened (``window.open``): closed, it is not ours to read."""
        with contextlib.suppress(PlaywrightError):
            if await page.opener() is not None:
                await page.close()

    def _on_disconnect(self) -> None:
        """The browser is gone (crashed, or killed): its pages fail, the next launches anew."""
        for visit in self._visits.values():
            visit.crashed = True
        self._browser = self._context = None
        self._tabs = []
        self._tab_pages = {}

    def _on_crash(self, tab: Page) -> None:
        visit = self._visits.get(tab)
        if visit is not None:
            visit.crashed = True
        if tab in self._tabs:
            self._tabs.remove(tab)
        self._tab_pages.pop(tab, None)

    def _on_error(self, tab: Page, error: Any) -> None:
        visit = self._visits.get(tab)
        if visit is not None:
            message = " ".join(str(getattr(error, "message", error)).split())
            visit.note("js-error", message[:300])


def _from_environment(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() and int(value) > 0 else default


async def quietly(action: Awaitable[None]) -> None:
    """A route answered after its page closed or crashed: nothing left to answer."""
    with contextlib.suppress(PlaywrightError):
        await action
