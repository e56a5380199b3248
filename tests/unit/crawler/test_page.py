"""The indexability decision, as a table over the facts of one answer."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.core.errors import ErrorKind
from crawler.core.records import Verdict
from crawler.http.fetch import Response
from crawler.page.read import ReadOptions, duplicate_key, read_page, wants_body

NOW = datetime(2026, 1, 1, tzinfo=UTC)
URL = "http://h/p"


def page(body: str = "", status: int = 200, content_type: str = "text/html",
         **headers: object) -> Response:
    return Response(url=URL, status=status, content_type=content_type,
                    body=body.encode() if status == 200 else None, **headers)  # type: ignore[arg-type]


@pytest.mark.parametrize(("response", "verdict"), [
    (page("<p>ok"), Verdict.LISTED),
    (page("<p>ok", content_type="application/xhtml+xml; charset=utf-8"), Verdict.LISTED),
    (page('<link rel="canonical" href="/p">'), Verdict.LISTED),
    (page('<link rel="canonical" href="http://H:80/p#top">'), Verdict.LISTED),
    (page('<link rel="canonical" href="/q">'), Verdict.CANONICALISED),
    (page('<meta name="robots" content="noindex">'), Verdict.NOINDEX),
    (page('<meta name="robots" content="none">'), Verdict.NOINDEX),
    (page("", x_robots_tag=["noindex"]), Verdict.NOINDEX),
    (page('<meta http-equiv="refresh" content="0;url=/x">'), Verdict.REFRESH),
    (page(status=404), Verdict.NOT_OK),
    (page(status=301, location="/x"), Verdict.REDIRECT),
    (page(status=301), Verdict.ERROR),
    (page("%PDF", content_type="application/pdf"), Verdict.NOT_HTML),
    (Response(url=URL, error=ErrorKind.TIMEOUT), Verdict.ERROR),
    (Response(url=URL, status=200, content_type="text/html", error=ErrorKind.TOO_LARGE),
     Verdict.ERROR),
])
def test_verdict(response: Response, verdict: Verdict) -> None:
    assert read_page(response, 0, "bot", NOW).record.verdict is verdict


def test_nofollow_page_is_listed_but_leads_nowhere() -> None:
    outcome = read_page(page('<meta name="robots" content="nofollow"><a href="/x">'), 0, "b", NOW)
    assert outcome.record.verdict is Verdict.LISTED
    assert outcome.links == []


def test_noindex_page_still_leads_on() -> None:
    outcome = read_page(page('<meta name="robots" content="noindex"><a href="/x">'), 0, "b", NOW)
    assert outcome.links == ["http://h/x"]


def test_redirect_and_canonical_targets_are_siblings() -> None:
    assert read_page(page(status=302, location="/t"), 3, "b", NOW).siblings == ["http://h/t"]
    canon = read_page(page('<link rel="canonical" href="/c">'), 3, "b", NOW)
    assert canon.siblings == ["http://h/c"]


def test_lastmod_from_header_only() -> None:
    with_header = read_page(page("x", last_modified="Wed, 21 Oct 2015 07:28:00 GMT"), 0, "b", NOW)
    assert with_header.record.lastmod == datetime(2015, 10, 21, 7, 28, tzinfo=UTC)
    assert read_page(page("x"), 0, "b", NOW).record.lastmod is None


@pytest.mark.parametrize(("status", "content_type", "wanted"), [
    (200, "text/html; charset=utf-8", True), (200, "application/xhtml+xml", True),
    (200, "application/pdf", False), (404, "text/html", False), (200, None, False),
])
def test_only_html_200_bodies_are_downloaded(status: int, content_type: str | None,
                                              wanted: bool) -> None:
    assert wants_body(status, content_type) is wanted


def test_an_unexpected_failure_reading_a_page_is_that_pages_record(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever goes wrong while reading one page ends as its record, naming the
    failure, never as the crawl's end (issue: one page stopped the whole crawl)."""
    import anyio

    from crawler.config import CrawlConfig
    from crawler.core.errors import ErrorKind
    from crawler.core.records import Verdict
    from crawler.engine import coordinator as engine
    from crawler.engine import page_fetcher
    from crawler.engine.result import CrawlResult

    def broken(*args: object, **kwargs: object) -> None:
        raise LookupError("unknown encoding: surprise")

    monkeypatch.setattr(page_fetcher, "read_page", broken)

    class Fetcher:
        async def fetch(self, url: str, **kwargs: object) -> Response:
            return Response(url=url, status=200, content_type="text/html", body=b"<p>")

    config = CrawlConfig(start_url="http://h/")
    coordinator = engine._Coordinator(engine.SiteRules(config, None, None),  # type: ignore[arg-type]
                                      Fetcher(), CrawlResult("http://h/"))  # type: ignore[arg-type]
    outcome = anyio.run(coordinator.fetch, engine.Job("http://h/a", 1))
    record = outcome.record
    assert (record.url, record.status, record.depth) == ("http://h/a", 200, 1)
    assert record.error is ErrorKind.INTERNAL and record.verdict is Verdict.ERROR
    assert record.detail == "LookupError: unknown encoding: surprise"


HEADER_TEXT = st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=40)
CONTENT_TYPES = st.one_of(
    st.none(), HEADER_TEXT,
    st.builds(lambda mime, charset: f"{mime}; charset={charset}",
              st.sampled_from(["text/html", "application/xhtml+xml", "TEXT/HTML", "text/plain"]),
              st.one_of(st.sampled_from(["utf-8", "hex", "base64", "idna", "utf-16", "zlib",
                                         "rot13", "uu", "bz2", "x-user-defined", "", '"'
                                         ]), HEADER_TEXT)))


@settings(max_examples=400, deadline=None)
@given(status=st.one_of(st.none(), st.integers(100, 599)),
       content_type=CONTENT_TYPES,
       body=st.one_of(st.none(), st.binary(max_size=600),
                      st.just(b'<meta charset="hex"><a href="/x">x</a>')),
       location=st.one_of(st.none(), HEADER_TEXT),
       x_robots=st.lists(HEADER_TEXT, max_size=3), link=st.lists(HEADER_TEXT, max_size=3),
       last_modified=st.one_of(st.none(), HEADER_TEXT))
@pytest.mark.slow(7)
def test_any_answer_becomes_a_record_never_an_exception(
        status: int | None, content_type: str | None, body: bytes | None,
        location: str | None, x_robots: list[str], link: list[str],
        last_modified: str | None) -> None:
    """Whatever a server sends — status, content type, charset, headers, body — reading
    it gives that page's record (one page's failure must never end the crawl)."""
    response = Response(url="http://h/p", status=status, content_type=content_type,
                        location=location, last_modified=last_modified,
                        x_robots_tag=x_robots, link=link, body=body)
    outcome = read_page(response, 1, "bot", datetime(2026, 1, 1, tzinfo=UTC),
                        ReadOptions(fingerprint_ignoring=()))
    assert outcome.record.url == "http://h/p"
    assert all(url.startswith(("http://", "https://")) for url in outcome.links)


def test_pages_are_read_in_a_child_process_and_an_overrun_is_parse_timeout(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Parsing on the loop stalled every request in flight, and a parse lexbor takes
    seconds over cannot be stopped in a thread: a PageFetcher used as a context
    manager reads in a forked child, and one page over --max-parse-seconds is that
    page's parse-timeout while the next is read by a new child."""
    import os
    import time

    import anyio

    from crawler.config import CrawlConfig
    from crawler.engine import page_fetcher
    from crawler.frontier.job import Job

    real = page_fetcher.read_page

    def spy(response: Response, *args: object, **kwargs: object) -> object:
        if response.url.endswith("slow"):
            time.sleep(30)  # as a quadratic parse would
        outcome = real(response, *args, **kwargs)  # type: ignore[arg-type]
        outcome.record.title = str(os.getpid())  # who read it
        return outcome

    monkeypatch.setattr(page_fetcher, "read_page", spy)

    class Fetcher:
        async def fetch(self, url: str, **kwargs: object) -> Response:
            return Response(url=url, status=200, content_type="text/html",
                            body=b"<a href='/y'>y</a>")

    async def main() -> list[object]:
        config = CrawlConfig(start_url="http://h/", max_parse_seconds=0.5)
        async with page_fetcher.PageFetcher(config, Fetcher()) as pages:  # type: ignore[arg-type]
            started = time.monotonic()
            outcomes = [await pages.fetch(Job(f"http://h/{name}", 1))
                        for name in ("a", "slow", "b")]
            return [*outcomes, time.monotonic() - started]

    first, slow, after, took = anyio.run(main)
    assert first.links == ["http://h/y"] and first.record.title != str(os.getpid())
    assert slow.record.error is not None and slow.record.error.value == "parse-timeout"
    assert slow.links == [] and slow.record.status == 200
    assert after.links == ["http://h/y"] and after.record.title not in (
        str(os.getpid()), first.record.title)  # a new child
    assert took < 5


def _answer(url: str, links: list[str]) -> Response:
    body = "".join(f'<a href="{link}">x</a>' for link in links).encode()
    return Response(url=url, status=200, body=body, content_type="text/html")


@pytest.mark.parametrize(("options", "every_time"), [
    ({}, False),
    ({"audit": True}, True),  # an audit counts who links where: every link of every page
    ({"state_path": "state.db"}, True),  # the state keeps each page's links
])
def test_a_link_goes_to_the_coordinator_once_unless_every_link_is_kept(
        options: dict[str, object], every_time: bool) -> None:
    from crawler.config import CrawlConfig
    from crawler.engine.page_fetcher import PageFetcher

    pages = PageFetcher(CrawlConfig(start_url="http://a.test/", **options),  # type: ignore[arg-type]
                        fetcher=None)  # type: ignore[arg-type]
    now = datetime.now(UTC)
    first = pages.read(_answer("http://a.test/", ["/x", "/y"]), 0, now)
    second = pages.read(_answer("http://a.test/x", ["/y", "/z"]), 1, now)
    assert first.links == ["http://a.test/x", "http://a.test/y"]
    assert second.links == (["http://a.test/y", "http://a.test/z"] if every_time
                            else ["http://a.test/z"])


@settings(max_examples=60)
@given(st.text(min_size=1, max_size=300), st.integers(min_value=0, max_value=299))
def test_a_body_s_duplicate_key_is_its_bytes_and_only_its_bytes(text: str, where: int) -> None:
    """The same body as text or as its UTF-8 bytes is one key; a body one character
    away from it is another (16 bytes each: 2^-64 odds of two pages meeting by chance)."""
    key = duplicate_key(text, None, False)
    assert key is not None and len(key) == 16
    assert duplicate_key(text.encode("utf-8", "surrogatepass"), None, False) == key
    changed = list(text)
    spot = where % len(text)
    changed[spot] = "a" if text[spot] != "a" else "b"
    assert duplicate_key("".join(changed), None, False) != key
    assert duplicate_key(text, b"fingerprint", False) == b"fingerprint"
    assert duplicate_key(text, None, True) is None
