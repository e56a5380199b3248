"""A page whose script never yields ends at ``--render-timeout`` plus a second, with a
real Chromium: the script is stopped from outside (its renderer killed if need be),
read as it stood, and its render slot let go, however busy the machine. A page that
merely answers late is not taken for one (test_renderer_busy_machine.py)."""

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

ORIGIN = "http://127.0.0.1:9"
PLAIN = b"<!doctype html><title>plain</title><a href='/q'>q</a>"
HELD = (b"<!doctype html><title>held</title><a href='/after.html'>after</a>"
        b"<script>setTimeout(() => { while (true) {} }, 30);</script>")
TIMEOUT = 3.0


async def _nothing_else(url: str) -> Response:
    return Response(url, status=404)


def _document(path: str, body: bytes) -> Response:
    return Response(ORIGIN + path, status=200, content_type="text/html", body=body)


@pytest.mark.slow(9)
def test_a_script_that_never_yields_ends_within_the_timeout_and_a_second(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Timed from the page's start (its navigation, where its --render-timeout starts)
    to its end; waiting for a free tab before it is queueing, bounded apart."""
    config = CrawlConfig(start_url=ORIGIN + "/", render="always", render_timeout=TIMEOUT)
    navigated: list[float] = []
    goto = Page.goto

    async def timed_goto(self: Page, *args: Any, **kwargs: Any) -> Any:
        navigated.append(time.monotonic())
        return await goto(self, *args, **kwargs)

    monkeypatch.setattr(Page, "goto", timed_goto)

    async def main() -> list[tuple[Any, float, float]]:
        timed = []
        async with Renderer(config, chromium_path(), ORIGIN, _nothing_else,
                            lambda _url: True) as renderer:
            await renderer.render(_document("/", PLAIN))  # the browser started
            for path, body in (("/held.html", HELD), ("/held-again.html", HELD),
                               ("/next.html", PLAIN)):
                asked = time.monotonic()
                shown = await renderer.render(_document(path, body))
                ended = time.monotonic()
                timed.append((shown, ended - navigated[-1], ended - asked))
        return timed

    (first, took, waited), (second, took_again, waited_again), (after, *_) = anyio.run(main)
    assert took < TIMEOUT + 1, took
    assert took_again < TIMEOUT + 1, took_again
    assert max(waited, waited_again) < TIMEOUT + 3, (waited, waited_again)
    for shown in (first, second):
        assert not shown.settled
        kinds = [kind for kind, *_ in shown.notes] if shown.html is not None else []
        assert (shown.html is None and shown.failure_kind == "timeout") or kinds == ["timeout"], (
            shown.failure, shown.notes)
    assert after.html is not None and after.settled  # the next page renders as ever
