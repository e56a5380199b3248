"""The renderer's answer to a browser that dies at an awkward moment, with a real
Chromium: whatever Playwright call the death interrupts, the page is a crash to try
once more, never a fault of ours that costs the URL its row."""

from __future__ import annotations

import anyio
import pytest
from browser import chromium_path
from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError

from crawler.config import CrawlConfig
from crawler.core.response import Response
from crawler.render.renderer import Renderer

PAGE = "http://127.0.0.1:9/p"
HTML = b"<!doctype html><title>t</title><a href='/q'>q</a>"


async def _nothing_else(url: str) -> Response:
    return Response(url, status=404)


@pytest.mark.slow(7)
@pytest.mark.parametrize("isolated_too", [False, True])
def test_a_tab_whose_renderer_dies_as_it_opens_is_a_crash_tried_again(
        monkeypatch: pytest.MonkeyPatch, isolated_too: bool) -> None:
    # the race CI met: the renderer killed while Playwright opened the tab, so
    # new_page itself failed ("Target crashed"); it became the start URL's
    # internal-error and the crawl ended with exit 3
    opened = BrowserContext.new_page
    failures = [2 if isolated_too else 1]

    async def dies_as_it_opens(self: BrowserContext):  # type: ignore[no-untyped-def]
        if failures[0]:
            failures[0] -= 1
            raise PlaywrightError("BrowserContext.new_page: Target crashed ")
        return await opened(self)

    monkeypatch.setattr(BrowserContext, "new_page", dies_as_it_opens)
    config = CrawlConfig(start_url=PAGE, render="always", render_timeout=4.0)

    async def main() -> None:
        async with Renderer(config, chromium_path(), "http://127.0.0.1:9", _nothing_else,
                            lambda _url: True) as renderer:
            document = Response(PAGE, status=200, content_type="text/html", body=HTML)
            return await renderer.render(document)

    shown = anyio.run(main)
    if isolated_too:
        assert shown.html is None
        assert shown.failure is not None and "crashed twice" in shown.failure
        assert "Target crashed" in shown.failure
    else:
        assert shown.html is not None and "href" in shown.html
        assert [kind for kind, *_ in shown.notes] == ["crash"]
