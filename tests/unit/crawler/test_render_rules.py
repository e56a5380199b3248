"""The pure parts of ``--render``: which pages auto renders, how each request of a
rendered page is answered, when a page has settled, how the two readings merge,
and where the browser is found."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest
from selectolax.lexbor import LexborHTMLParser

from crawler.core.errors import ConfigError
from crawler.core.records import PageRecord, Verdict
from crawler.page.client_rendered import client_rendered
from crawler.page.read import NO_SIGNS, PageOutcome
from crawler.page.rendered import merge, wants_render
from crawler.render import browser
from crawler.render.requests import Kind, OriginPacer, Stored, SubresourceCache, request_kind
from crawler.render.settle import calm

PAGE = "http://s.test/p"


@pytest.mark.parametrize(("html", "links", "why"), [
    ('<div id="root"></div><script src="/a.js"></script>', [], "empty mount element #root"),
    ('<div id="__next">  <!-- shell --> </div>', [], "empty mount element #__next"),
    ("<app-root></app-root>", [], "empty mount element <app-root>"),
    ('<div id="app" data-server-rendered="true"><a href="/x">x</a></div>',
     ["http://s.test/x"], "hydration marker: Vue hydration ([data-server-rendered])"),
    ('<script id="__NEXT_DATA__" type="application/json">{}</script><a href="/x">x</a>',
     ["http://s.test/x"], "hydration marker: Next.js data (script#__NEXT_DATA__)"),
    ("<script>window.__NUXT__={}</script><a href=/x>x</a>", ["http://s.test/x"],
     "hydration marker: Nuxt state (window.__NUXT__)"),
    ("<body><noscript>You need to enable JavaScript to run this app.</noscript>"
     '<a href="/x">x</a>', ["http://s.test/x"], "a <noscript> asking for JavaScript"),
    ("<script>go()</script><a href='http://other.test/'>x</a>", ["http://other.test/"],
     "scripts and no link to its own origin"),
    ('<div id="root"><p>rendered on the server</p></div><a href="/x">x</a>',
     ["http://s.test/x"], None),
    ("<p>plain</p><script>track()</script><a href=/x>x</a>", ["http://s.test/x"], None),
    ("<p>no scripts, no links</p>", [], None),
])
def test_auto_renders_what_the_raw_html_shows_is_built_by_javascript(
        html: str, links: list[str], why: str | None) -> None:
    assert client_rendered(LexborHTMLParser(html), PAGE, links, html) == why


ORIGIN = "http://s.test"


def _kind(url: str, resource_type: str = "script", *, navigation: bool = False,
          main_frame: bool = True) -> Kind:
    return request_kind(url, resource_type=resource_type, navigation=navigation,
                        main_frame=main_frame, document=PAGE, origin=ORIGIN,
                        allows=lambda url: "/private/" not in url)


def test_each_request_of_a_rendered_page_is_answered_by_its_kind() -> None:
    assert _kind(PAGE, "document", navigation=True) is Kind.DOCUMENT
    assert _kind(PAGE + "#/view", "document", navigation=True) is Kind.DOCUMENT
    assert _kind(ORIGIN + "/elsewhere", "document", navigation=True) is Kind.NAVIGATION
    assert _kind(ORIGIN + "/frame", "document", navigation=True,
                 main_frame=False) is Kind.FRAME
    for unwanted in ("image", "media", "font"):
        assert _kind(ORIGIN + "/x", unwanted) is Kind.UNWANTED
        assert _kind("http://cdn.test/x", unwanted) is Kind.UNWANTED
    assert _kind(ORIGIN + "/private/app.js") is Kind.DISALLOWED
    assert _kind(ORIGIN + "/app.js") is Kind.ORIGIN
    assert _kind("http://s.test:8080/app.js") is Kind.THIRD_PARTY  # another port
    assert _kind("https://s.test/app.js") is Kind.THIRD_PARTY  # another scheme
    assert _kind("http://s.test.evil/app.js") is Kind.THIRD_PARTY
    assert _kind("blob:http://s.test/1", "fetch") is Kind.OTHER


def test_the_cache_keeps_bundles_within_its_bytes() -> None:
    cache = SubresourceCache(max_bytes=100)
    cache.put("a", Stored(200, {}, b"x" * 20))
    cache.put("b", Stored(200, {}, b"x" * 20))
    cache.put("huge", Stored(200, {}, b"x" * 60))  # over a quarter: not kept
    assert cache.get("huge") is None
    for name in "cdefg":
        cache.get("a")  # recently used: stays
        cache.put(name, Stored(200, {}, b"x" * 20))
    assert cache.used <= 100 and cache.get("a") is not None and cache.get("b") is None


@pytest.mark.parametrize(("network", "flying", "dom_ms", "timers", "settled"), [
    (0.5, 0, 500, 0, True),
    (0.05, 0, 500, 0, False),  # a request just ended
    (0.5, 1, 500, 0, False),  # one in flight
    (0.5, 0, 50, 0, False),  # the DOM just changed
    (0.5, 0, 500, 1, False),  # a short timer is pending
])
def test_a_page_settles_when_network_dom_and_timers_are_all_quiet(
        network: float, flying: int, dom_ms: float, timers: int, settled: bool) -> None:
    assert calm(network, flying, dom_ms, timers) is settled


def test_other_origins_are_paced_apart() -> None:
    pacer = OriginPacer(0.05)
    waited: dict[str, float] = {}

    async def go() -> None:
        started = time.monotonic()
        for _ in range(3):
            await pacer.wait("http://cdn.test")
        waited["cdn"] = time.monotonic() - started
        started = time.monotonic()
        await pacer.wait("http://other.test")  # its own pace: no wait
        waited["other"] = time.monotonic() - started

    anyio.run(go)
    assert waited["cdn"] >= 0.1 and waited["other"] < 0.05


def _outcome(links: list[str], **fields: object) -> PageOutcome:
    record = PageRecord(url=PAGE, depth=1, status=200, content_type="text/html",
                        links_found=len(links), verdict=Verdict.LISTED, **fields)  # type: ignore[arg-type]
    return PageOutcome(record, links=list(links))


def test_the_rendered_dom_gives_links_and_head_a_noindex_from_either_stands() -> None:
    raw = _outcome(["http://s.test/a", "http://s.test/gone"], noindex=True, title="Shell",
                   canonical=None, render_why="empty mount element #root")
    shown = _outcome(["http://s.test/a", "http://s.test/new", "http://other.test/x", PAGE],
                     title="Home", canonical="http://s.test/home")
    merged = merge(raw, shown, [("js-error", "boom")], lambda url: url.startswith(ORIGIN))
    record = merged.record
    assert merged.links == shown.links and record.links_found == 4 and record.raw_links == 2
    assert record.noindex and record.verdict is Verdict.NOINDEX  # raw noindex stands
    assert record.title == "Home" and record.canonical == "http://s.test/home"
    notes = {note[0]: note for note in record.render_notes if note[0] != "change"}
    assert notes["links-added"] == ("links-added", "1", "http://s.test/new")  # in scope only
    assert notes["links-lost"] == ("links-lost", "1", "http://s.test/gone")
    assert notes["js-error"] == ("js-error", "boom")
    changes = {note[1]: note[2:] for note in record.render_notes if note[0] == "change"}
    assert changes["noindex-only-in-raw-html"] == ("noindex", "index")
    assert changes["title"] == ("Shell", "Home")
    assert changes["canonical"] == ("", "http://s.test/home")


def test_javascript_that_adds_noindex_or_nofollow_is_obeyed() -> None:
    raw = _outcome(["http://s.test/a"], render_why="--render always")
    merged = merge(raw, _outcome(["http://s.test/b"], noindex=True, nofollow=True), [],
                   lambda _url: True)
    assert merged.record.verdict is Verdict.NOINDEX and merged.links == []


def test_wants_render_follows_the_reason() -> None:
    assert not wants_render(PageRecord(url=PAGE, depth=0))  # rendering off
    assert not wants_render(PageRecord(url=PAGE, depth=0, render_why=NO_SIGNS))
    assert wants_render(PageRecord(url=PAGE, depth=0, render_why="--render always"))


def _executable(path: Path) -> str:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_the_browser_is_found_in_the_documented_order(tmp_path: Path) -> None:
    given, named = _executable(tmp_path / "given"), _executable(tmp_path / "named")
    downloads = tmp_path / "pw" / "chromium-1234" / "chrome-linux"
    downloads.mkdir(parents=True)
    downloaded = _executable(downloads / "chrome")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    on_path = _executable(bin_dir / "chromium-browser")
    env = {"SITEMAP_CRAWLER_BROWSER": named, "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "pw"),
           "PATH": str(bin_dir)}
    old_path = os.environ.get("PATH", "")
    os.environ["PATH"] = str(bin_dir)
    try:
        assert browser.find_browser(given, env) == given
        assert browser.find_browser(None, env) == named
        del env["SITEMAP_CRAWLER_BROWSER"]
        assert browser.find_browser(None, env) == downloaded
        env["PLAYWRIGHT_BROWSERS_PATH"] = str(tmp_path / "none")
        assert browser.find_browser(None, env) == on_path
        os.environ["PATH"] = str(tmp_path / "empty")
        with pytest.raises(ConfigError, match="found no Chromium"):
            browser.find_browser(None, env)
        with pytest.raises(ConfigError, match="not an executable file"):
            browser.find_browser(str(tmp_path / "missing"), env)
    finally:
        os.environ["PATH"] = old_path


def test_without_playwright_the_line_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser.importlib.util, "find_spec", lambda _name: None)
    with pytest.raises(ConfigError, match=r"pip install 'sitemap-crawler\[render\]'"):
        browser.require_playwright()
