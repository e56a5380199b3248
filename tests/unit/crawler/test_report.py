from __future__ import annotations

import json
import time
from datetime import UTC, datetime

from crawler.audit.report import explain_empty, report_json
from crawler.core.errors import ErrorKind
from crawler.core.records import PageRecord, SkippedUrl, Verdict
from crawler.engine.result import CrawlResult

START = "http://h/"


def result(*records: PageRecord, skipped: tuple[SkippedUrl, ...] = ()) -> CrawlResult:
    return CrawlResult(start_url=START, records=list(records), skipped=list(skipped))


def test_report_rows_and_totals() -> None:
    crawl = result(
        PageRecord(START, 0, 200, "text/html", datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC),
                   verdict=Verdict.LISTED),
        PageRecord("http://h/old", 1, 301, redirect_to="http://h/new", verdict=Verdict.REDIRECT),
        PageRecord("http://h/slow", 1, None, error=ErrorKind.TIMEOUT, verdict=Verdict.ERROR),
        skipped=(SkippedUrl("http://h/private", 1, Verdict.DISALLOWED),),
    )
    document = json.loads(report_json(crawl, {"base_url": START}))
    rows = {row["url"]: row for row in document["urls"]}
    assert rows[START] == {"url": START, "status": 200, "depth": 0,
                           "lastmod": "2024-05-06T07:08:09Z", "listed": True, "reason": "listed",
                           "content_type": "text/html", "bytes": None, "response_ms": 0.0,
                           "title": None, "noindex": False, "nofollow": False}
    assert rows["http://h/old"]["redirect_chain"] == ["http://h/new"]
    assert rows["http://h/old"]["target"] == "http://h/new"
    assert rows["http://h/slow"]["error"] == "timeout"
    assert rows["http://h/private"] == {"url": "http://h/private", "status": None, "depth": 1,
                                        "lastmod": None, "listed": False,
                                        "reason": "robots-disallowed"}
    assert document["totals"]["seen"] == 4 and document["totals"]["listed"] == 1
    assert document["totals"]["by_reason"]["error"] == 1
    assert document["base_url"] == START
    assert [row["url"] for row in document["urls"]] == sorted(rows)


def test_explain_empty_follows_the_start_url() -> None:
    noindex = result(PageRecord(START, 0, 200, "text/html", noindex=True,
                                verdict=Verdict.NOINDEX))
    assert f"{START} is noindex" in explain_empty(noindex)

    chain = result(
        PageRecord(START, 0, 302, redirect_to="http://h/en/", verdict=Verdict.REDIRECT),
        PageRecord("http://h/en/", 0, 200, "text/html", canonical="http://other/",
                   verdict=Verdict.CANONICALISED),
        skipped=(SkippedUrl("http://other/", 0, Verdict.EXTERNAL),),
    )
    message = explain_empty(chain)
    assert "redirects to http://h/en/" in message
    assert "canonicalised to http://other/" in message
    assert "http://other/ was not crawled (external)" in message

    loop = result(
        PageRecord(START, 0, 302, redirect_to="http://h/a", verdict=Verdict.REDIRECT),
        PageRecord("http://h/a", 0, 302, redirect_to=START, verdict=Verdict.REDIRECT_LOOP))
    assert f"http://h/a redirects back to {START}, closing a loop" in explain_empty(loop)

    broken = result(PageRecord(START, 0, 500, "text/html", verdict=Verdict.NOT_OK))
    assert "answered HTTP 500" in explain_empty(broken)


def test_status_line_counts_requests_on_the_wire() -> None:
    from crawler.cli.progress import status_line

    crawl = result()
    crawl.stats.fetched, crawl.stats.queued, crawl.stats.in_flight = 12, 30, 7
    crawl.stats.listed, crawl.stats.errors = 10, 1
    crawl.stats.started = time.monotonic() - 125
    line = status_line(crawl, concurrency=4)
    # 12 done of 12 + 30 queued + 7 in flight known: 24 %
    assert line.startswith("2:05 · pages 12 of 49 known (24%) · queued 30 · in flight 4 · "
                           "listed 10 · errors 1 · ")
    assert line.endswith(" pages/s")


def test_status_line_share_respects_the_page_budget() -> None:
    from crawler.cli.progress import status_line

    crawl = result()
    crawl.stats.started = time.monotonic() - 3725
    crawl.stats.fetched, crawl.stats.queued = 50, 900
    line = status_line(crawl, concurrency=4, max_pages=200)
    assert line.startswith("1:02:05 · pages 50 of 200 known (25%) · ")
    crawl.stats.fetched, crawl.stats.queued = 0, 0
    assert "pages 0 of 0 known (0%)" in status_line(crawl, concurrency=4)


def test_status_line_names_rendering_when_it_is_asked() -> None:
    """--render: the pages phase says how many pages a browser rendered so far; the
    display counts them as records arrive."""
    from crawler.cli.progress import CrawlDisplay, status_line
    from crawler.core.records import PageRecord

    crawl = result()
    crawl.stats.started = time.monotonic() - 30
    crawl.stats.fetched, crawl.stats.queued = 40, 10
    assert "rendered" not in status_line(crawl, concurrency=4)
    assert " · rendered 17 · " in status_line(crawl, concurrency=4, rendered=17)

    class Quiet:
        is_terminal = False

        def print(self, *objects: object, markup: bool | None = None) -> None:
            pass

    display = CrawlDisplay(quiet=True, verbose=False, console=Quiet())
    display(PageRecord(url="http://s.test/", depth=0), crawl)
    assert display.rendered is None  # no --render: nothing to say
    for shown in (True, False, True):
        display(PageRecord(url="http://s.test/a", depth=1, render_why="--render always",
                           rendered=shown), crawl)
    assert display.rendered == 2 and "rendered 2" in display.line()
