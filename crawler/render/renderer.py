"""One headless Chromium per process, loading the pages the crawl asks it to render.

The browser never fetches anything itself (``page_network.py``): the page's
document comes from the crawl's fetch (status, headers, robots decisions come
from that answer), and every other request the page makes is answered by the
crawler, under the crawl's network rule. A page cannot hold the crawl: one
whose script never yields is stopped from outside at ``--render-timeout``; one
that eats memory dies alone, past its JavaScript heap's cap or its renderer's
(``memory_watch.py``, which sets both), each tab having a renderer of its own.

The browser is launched at the first page that needs it (a crawl that renders
nothing starts none). Its memory is bounded in two steps: a tab is closed after
:data:`PAGES_PER_TAB` pages (Playwright's objects for each request a tab made
live as long as the tab), and the browser restarted after
:data:`PAGES_PER_BROWSER`. It is restarted after a crash too; a page whose
renderer crashed is tried once more, alone in a context of its own, and read
from its raw HTML if it crashes again. Playwright's driver
closes the browser when this process ends, however it ends, even by
``kill -9`` (it reads the end of its pipe).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
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
from crawler.core.errors import ConfigError
from crawler.core.response import Response
from crawler.render.flags import FLAGS
from crawler.render.held import (
    HELD_BUDGET,
    PROBE_AFTER,
    crash_renderer,
    responsive,
    stop_scripts,
)
from crawler.render.memory_watch import MemoryWatch, caps
from crawler.render.no_network import NO_BYPASS, DeadEnd
from crawler.render.page_network import FetchOrigin, PageNetwork, Visit
from crawler.render.settle import POLL, QUIET, TRACKER, WAIT_CALM, calm

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
# Seconds the DOM is waited for once the settling is over (or the script stopped):
# a renderer that is free answers at once, so what is left is a busy machine, and
# giving up sooner would throw the page's rendering away for its raw HTML.
READ_PATIENCE = 10.0


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


class _Crashed(Exception):
    """The browser or the page's renderer process died (in browser ``generation``)."""

    def __init__(self, why: str, generation: int) -> None:
        super().__init__(why)
        self.generation = generation


class _NoBrowser(Exception):
    """The browser would not start: no page of this crawl can be rendered."""


class Renderer:
    """Renders pages in one browser, ``--render-concurrency`` at a time."""

    def __init__(self, config: CrawlConfig, executable: str, origin: str,
                 fetch_origin: FetchOrigin, allows: Callable[[str], bool]) -> None:
        self.config = config
        self.executable = executable
        # every request of every page is answered there (the browser has no network)
        self.network = PageNetwork(config, origin, fetch_origin, allows)
        self.slots = anyio.Semaphore(config.render_concurrency)
        self.restarts = 0
        self.pages_per_browser = _from_environment(PAGES_PER_BROWSER_ENV, PAGES_PER_BROWSER)
        self.pages_per_tab = _from_environment(PAGES_PER_TAB_ENV, PAGES_PER_TAB)
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._context: BrowserContext | None = None
        self._tabs: list[Page] = []
        self._tab_pages: dict[Page, int] = {}  # pages each tab has rendered
        self._visits = self.network.visits  # which page each tab is rendering
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

    async def __aenter__(self) -> Renderer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(OUTER_GRACE * 2):
                for task in list(self._closing):
                    with contextlib.suppress(Exception):
                        await task
            await self._close_browser()
            if self._playwright is not None:
                with contextlib.suppress(Exception):
                    await self._playwright.stop()
                self._playwright = None
            await self.network.aclose()
            if self._watching is not None:
                self._watching.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._watching
                self._watching = None
            if self._dead_end is not None:
                self._dead_end.close()
                self._dead_end = None

    async def render(self, document: Response) -> RenderedPage:
        """The page as the browser shows it; tried once more if its renderer or the
        browser crashes, then given up with the reason. A page whose own renderer
        died (out of memory, past its caps) is tried again alone, in a
        browser context of its own: with one renderer per site, the pages that
        shared its process die with it, and must not die with it twice."""
        async with self.slots:
            crashed: _Crashed | None = None
            for attempt in (1, 2):
                try:
                    shown = await self._render_once(document, isolated=attempt == 2)
                    if crashed is not None:
                        shown.notes.append(("crash", f"{crashed}; rendered again, alone"))
                    return shown
                except _NoBrowser as failed:  # a setup failure: the crawl stops, exit 2
                    raise ConfigError(f"--render: {failed} ({self.executable}); "
                                      "check it runs, or name another with --browser"
                                      ) from None
                except _Crashed as crash:
                    crashed = crash
                    if attempt == 2:
                        return RenderedPage(None, document.url, settled=False,
                                            failure=f"crashed twice ({crash})")
                    async with self._lock:  # once, by the first of its pages to learn it
                        if crash.generation == self._generation and self._browser is None:
                            await self._close_browser()  # the browser itself is gone
                            self.restarts += 1
        raise AssertionError("unreachable")

    # -- one page -------------------------------------------------------------------

    async def _render_once(self, document: Response, isolated: bool = False) -> RenderedPage:
        context: BrowserContext | None = None
        if isolated:
            tab, context = await self._isolated_tab()
        else:
            tab = await self._tab()
        generation = self._generation
        self._busy += 1
        visit = Visit(document)
        self._visits[tab] = visit
        started = time.monotonic()
        deadline = started + self.config.render_timeout
        settled = False
        try:
            with contextlib.suppress(PlaywrightError):  # a timeout: read what there is
                await tab.goto(document.url, wait_until="domcontentloaded",
                               timeout=max(1.0, self.config.render_timeout) * 1000)
            if visit.crashed:
                raise _Crashed("the page's renderer process died: "
                           + self.memory.why_crashed(), generation)
            settled, html, stopped = False, None, False
            with anyio.move_on_after(max(0.0, deadline - time.monotonic()) + PROBE_AFTER
                                     ) as outer:
                settled, html = await self._settle(tab, visit, deadline)
            if outer.cancelled_caught:  # the wait is not back: a held page, or a busy machine
                if not await responsive(self._sessions.get(tab)):
                    return await self._read_held(tab, document, deadline)
                stopped = await self._stop_scripts(tab)
            try:
                if html is None:
                    with anyio.fail_after(READ_PATIENCE):
                        html = await tab.content()
                url = tab.url
            except PlaywrightError as exc:
                first = str(exc).splitlines()[0]
                if visit.crashed or "crashed" in first.lower():
                    first = "the page's renderer process died: " + self.memory.why_crashed()
                elif not settled and "navigating" in first:
                    # still loading at the deadline (a busy machine, a slow script): a
                    # timeout, read from its raw HTML, not a crash to try again
                    await self._retire(tab)
                    return RenderedPage(None, document.url, settled=False,
                                        failure=f"still loading at --render-timeout "
                                        f"{self.config.render_timeout:g}s: read from its "
                                        "raw HTML", failure_kind="timeout")
                raise _Crashed(first, generation) from None
            except TimeoutError:  # still held after its script was stopped: let it go
                await self._retire(tab)
                return RenderedPage(None, document.url, settled=False,
                                    failure=f"a script held the page past --render-timeout "
                                    f"{self.config.render_timeout:g}s and could not be "
                                    "stopped: read from its raw HTML", failure_kind="timeout")
        finally:
            self._visits.pop(tab, None)
            self._busy -= 1
            self._rendered += 1
            if self._busy == 0:
                self._idle.set()
            self._tab_pages[tab] = self._tab_pages.get(tab, 0) + 1
            if context is not None:  # a page tried alone: its context goes with it
                self._tab_pages.pop(tab, None)
                self._sessions.pop(tab, None)
                with anyio.move_on_after(OUTER_GRACE * 5):
                    await _quietly(context.close())
        if visit.crashed:
            raise _Crashed("the page's renderer process died: "
                           + self.memory.why_crashed(), generation)
        if stopped:
            visit.note("timeout", f"a script still running after --render-timeout "
                       f"{self.config.render_timeout:g}s was stopped: read as it stood then")
            await self._retire(tab)
        elif not settled:
            visit.note("timeout", f"still changing after --render-timeout "
                       f"{self.config.render_timeout:g}s: read as it stood then")
        if visit.dropped:
            visit.notes.append(("more", str(visit.dropped)))
        return RenderedPage(html, url, settled, visit.notes)

    async def _settle(self, tab: Page, visit: Visit, deadline: float
                      ) -> tuple[bool, str | None]:
        """Whether the page settled before the deadline, and its DOM serialised at
        that moment when the wait could take it in the same round trip."""
        while True:
            now = time.monotonic()
            if now >= deadline or visit.crashed:
                return False, None
            if visit.in_flight:
                await anyio.sleep(POLL)
                continue
            network = max(0.0, QUIET - (now - visit.network_at)) * 1000
            most = min(deadline - now, 1.0) * 1000
            try:
                since_dom, waiting, html = await tab.evaluate(
                    WAIT_CALM, [QUIET * 1000, max(most, network), network])
            except PlaywrightError:  # navigated away mid-wait: read it now
                since_dom, waiting, html = 1e9, 0, None
            if calm(time.monotonic() - visit.network_at, visit.in_flight, since_dom, waiting):
                return True, html

    async def _stop_scripts(self, tab: Page) -> bool:
        """Stop what runs in ``tab`` from outside the page (the DevTools session was
        opened with the tab, since a busy renderer answers nothing new)."""
        return await stop_scripts(self._sessions.get(tab), OUTER_GRACE)

    async def _read_held(self, tab: Page, document: Response, deadline: float
                         ) -> RenderedPage:
        """A page whose script holds its renderer (``held.py``): stopped, read as it
        stands if it gives its DOM by :data:`HELD_BUDGET` past the deadline, and let
        go either way, its tab closed (and its renderer crashed, if it could not be
        stopped) behind the crawl's back, so its slot is free at once."""
        self._visits.pop(tab, None)  # what happens to its renderer now is not a crash
        session = self._sessions.get(tab)
        timeout = f"--render-timeout {self.config.render_timeout:g}s"
        await stop_scripts(session, max(0.05, deadline + HELD_BUDGET - time.monotonic()))
        html: str | None = None
        with anyio.move_on_after(max(0.05, deadline + HELD_BUDGET - time.monotonic())):
            with contextlib.suppress(PlaywrightError):
                html = await tab.content()
        self._let_go(tab, crash=html is None)
        if html is None:
            return RenderedPage(None, document.url, settled=False, failure=(
                f"a script held the page past {timeout} and could not be stopped: its "
                "renderer was ended, the page read from its raw HTML"), failure_kind="timeout")
        return RenderedPage(html, tab.url, False, [("timeout", (
            f"a script still running after {timeout} was stopped: read as it stood then"))])

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
            await _quietly(tab.close(run_before_unload=False))

    # -- the browser and its tabs -----------------------------------------------------

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
                await _quietly(tab.close())
            try:
                tab = await self._open_tab(self._context)
            except PlaywrightError as exc:  # its renderer died as the tab opened
                raise _Crashed(str(exc).splitlines()[0], self._generation) from None
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
                raise _Crashed(str(exc).splitlines()[0], self._generation) from None

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
            await _quietly(tab.close())
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
            raise _NoBrowser(f"the browser did not start: {str(exc).splitlines()[0]}"
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


async def _quietly(action: Awaitable[None]) -> None:
    """A route answered after its page closed or crashed: nothing left to answer."""
    with contextlib.suppress(PlaywrightError):
        await action
