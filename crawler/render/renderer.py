"""One headless Chromium per process, loading the pages the crawl asks it to render.

The browser never fetches anything itself (``page_network.py``): the page's
document comes from the crawl's fetch (status, headers, robots decisions come
from that answer), and every other request the page makes is answered by the
crawler, under the crawl's network rule. A page cannot hold the crawl: one
whose script never yields is stopped from outside at ``--render-timeout``; one
that eats memory dies alone, past its JavaScript heap's cap or its renderer's
(``memory_watch.py``, which sets both), each tab having a renderer of its own.

The browser and its tabs are ``browser_tabs.py``'s: launched at the first page
that needs it, restarted after a crash. A page whose renderer crashed is tried
once more, alone in a context of its own, and read from its raw HTML if it
crashes again. Playwright's driver closes the browser when this process ends,
however it ends, even by ``kill -9`` (it reads the end of its pipe).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import anyio
from playwright.async_api import (
    BrowserContext,
    Page,
)
from playwright.async_api import Error as PlaywrightError

from crawler.config import CrawlConfig
from crawler.core.errors import ConfigError
from crawler.core.response import Response
from crawler.render.browser_tabs import (
    OUTER_GRACE,
    BrowserTabs,
    Crashed,
    NoBrowser,
    RenderedPage,
    quietly,
)
from crawler.render.held import (
    HELD_BUDGET,
    PROBE_AFTER,
    Heartbeat,
    stop_scripts,
)
from crawler.render.page_network import FetchOrigin, PageNetwork, Visit
from crawler.render.settle import POLL, QUIET, WAIT_CALM, calm

# Seconds the DOM is waited for once the settling is over (or the script stopped):
# a renderer that is free answers at once, so what is left is a busy machine, and
# giving up sooner would throw the page's rendering away for its raw HTML.
READ_PATIENCE = 10.0




class Renderer(BrowserTabs):
    """Renders pages in one browser, ``--render-concurrency`` at a time."""

    def __init__(self, config: CrawlConfig, executable: str, origin: str,
                 fetch_origin: FetchOrigin, allows: Callable[[str], bool]) -> None:
        # every request of every page is answered there (the browser has no network)
        super().__init__(config, executable, PageNetwork(config, origin, fetch_origin, allows))
        self.slots = anyio.Semaphore(config.render_concurrency)

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
            crashed: Crashed | None = None
            for attempt in (1, 2):
                try:
                    shown = await self._render_once(document, isolated=attempt == 2)
                    if crashed is not None:
                        shown.notes.append(("crash", f"{crashed}; rendered again, alone"))
                    return shown
                except NoBrowser as failed:  # a setup failure: the crawl stops, exit 2
                    raise ConfigError(f"--render: {failed} ({self.executable}); "
                                      "check it runs, or name another with --browser"
                                      ) from None
                except Crashed as crash:
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
        deadline = time.monotonic() + self.config.render_timeout
        try:
            shown = await self._load(tab, visit, deadline, generation)
        finally:
            await self._page_done(tab, context)
        if isinstance(shown, RenderedPage):  # given up on: read from its raw HTML
            return shown
        if visit.crashed:
            raise Crashed("the page's renderer process died: "
                           + self.memory.why_crashed(), generation)
        html, url, settled, stopped = shown
        timeout = f"--render-timeout {self.config.render_timeout:g}s"
        if stopped:
            visit.note("timeout", f"a script still running after {timeout} was stopped: "
                       "read as it stood then")
            await self._retire(tab)
        elif not settled:
            visit.note("timeout", f"still changing after {timeout}: read as it stood then")
        if visit.dropped:
            visit.notes.append(("more", str(visit.dropped)))
        return RenderedPage(html, url, settled, visit.notes)

    async def _load(self, tab: Page, visit: Visit, deadline: float, generation: int
                    ) -> RenderedPage | tuple[str, str, bool, bool]:
        """The page loaded and let settle until the deadline: a page given up on (held,
        still loading), or its DOM, URL, whether it settled and whether its script
        had to be stopped."""
        document = visit.document
        with contextlib.suppress(PlaywrightError):  # a timeout: read what there is
            await tab.goto(document.url, wait_until="domcontentloaded",
                           timeout=max(1.0, self.config.render_timeout) * 1000)
        if visit.crashed:
            raise Crashed("the page's renderer process died: "
                           + self.memory.why_crashed(), generation)
        settled, html, stopped = False, None, False
        heartbeat = Heartbeat()
        async with anyio.create_task_group() as beating:
            beating.start_soon(heartbeat.run, self._sessions.get(tab))
            with anyio.move_on_after(max(0.0, deadline - time.monotonic()) + PROBE_AFTER
                                     ) as outer:
                settled, html = await self._settle(tab, visit, deadline)
            beating.cancel_scope.cancel()
        if outer.cancelled_caught:  # the wait is not back: a held page, or a busy machine
            if heartbeat.held():
                return await self._read_held(tab, document, deadline)
            stopped = await self._stop_scripts(tab)
        read = await self._read_dom(tab, visit, html, settled, generation)
        if isinstance(read, RenderedPage):
            return read
        return read[0], read[1], settled, stopped

    async def _read_dom(self, tab: Page, visit: Visit, html: str | None, settled: bool,
                        generation: int) -> RenderedPage | tuple[str, str]:
        """The DOM (unless the settling wait brought it) and the page's URL; or the page
        given up: still navigating at the deadline, or held after its script was stopped."""
        timeout = f"--render-timeout {self.config.render_timeout:g}s"
        url = visit.document.url
        try:
            if html is None:
                with anyio.fail_after(READ_PATIENCE):
                    html = await tab.content()
            return html, tab.url
        except PlaywrightError as exc:
            first = str(exc).splitlines()[0]
            if visit.crashed or "crashed" in first.lower():
                first = "the page's renderer process died: " + self.memory.why_crashed()
            elif not settled and "navigating" in first:
                # still loading at the deadline (a busy machine, a slow script): a
                # timeout, read from its raw HTML, not a crash to try again
                await self._retire(tab)
                return RenderedPage(None, url, settled=False, failure=(
                    f"still loading at {timeout}: read from its raw HTML"),
                    failure_kind="timeout")
            raise Crashed(first, generation) from None
        except TimeoutError:  # still held after its script was stopped: let it go
            await self._retire(tab)
            return RenderedPage(None, url, settled=False, failure=(
                f"a script held the page past {timeout} and could not be stopped: read "
                "from its raw HTML"), failure_kind="timeout")

    async def _page_done(self, tab: Page, context: BrowserContext | None) -> None:
        """The tab's page is over: counted, and its context closed if it had its own."""
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
                await quietly(context.close())

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
