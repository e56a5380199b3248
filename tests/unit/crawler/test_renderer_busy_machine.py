"""The renderer on a machine so busy that every answer from the browser is late, with
a real Chromium: a page that never settles is still read as it stood at the deadline,
not given up as a script nobody could stop (what a CI run beside three other test
processes met on a page of timers)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from browser import chromium_path
from playwright.async_api import Page

from crawler.config import CrawlConfig
from crawler.core.response import Response
from crawler.render.renderer import Renderer

PAGE = "http://127.0.0.1:9/ticks"
# a chain of timers, each changing the page: it never settles, yet always yields
TICKS = (b"<!doctype html><title>t</title><a href='/q'>q</a><div id='app'></div><script>"
         b"let n = 0; (function tick() { document.getElementById('app').textContent = ++n;"
         b" setTimeout(tick, 50); })();</script>")
LATE = 1.5  # seconds each answer from the browser is late by


async def _nothing_else(url: str) -> Response:
    return Response(url, status=404)


@pytest.mark.slow(9)
def test_late_answers_from_the_browser_still_give_the_page_as_it_stood(
        monkeypatch: pytest.MonkeyPatch) -> None:
    evaluate, content = Page.evaluate, Page.content

    async def late_evaluate(self: Page, *args: Any, **kwargs: Any) -> Any:
        answer = await evaluate(self, *args, **kwargs)
        await anyio.sleep(LATE)
        return answer

    async def late_content(self: Page) -> str:
        html = await content(self)
        await anyio.sleep(LATE)
        return html

    monkeypatch.setattr(Page, "evaluate", late_evaluate)
    monkeypatch.setattr(Page, "content", late_content)
    config = CrawlConfig(start_url=PAGE, render="always", render_timeout=2.0)

    async def main() -> tuple[Any, float]:
        async with Renderer(config, chromium_path(), "http://127.0.0.1:9", _nothing_else,
                            lambda _url: True) as renderer:
            document = Response(PAGE, status=200, content_type="text/html", body=TICKS)
            started = time.monotonic()
            return await renderer.render(document), time.monotonic() - started

    shown, took = anyio.run(main)
    assert shown.html is not None, shown.failure
    assert "href" in shown.html and "id=\"app\"" in shown.html
    assert not shown.settled
    assert [kind for kind, *_ in shown.notes] == ["timeout"], shown.notes
    # read once the late answers came, not waited on for ever
    assert took < 30, took
