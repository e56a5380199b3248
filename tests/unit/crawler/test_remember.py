"""How a fetched page meets the state: a 304 stands in for the stored page."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from crawler.core.records import PageRecord, Verdict
from crawler.frontier.job import Job
from crawler.page.read import PageOutcome
from crawler.store.incremental import remember
from crawler.store.state import CrawlState
from crawler.store.stored import StoredPage

ROOT = "http://h/"
RUN = datetime(2026, 1, 2, tzinfo=UTC)


def stored(state: CrawlState, url: str, links: list[str]) -> None:
    record = PageRecord(url, 0, 200, "text/html", verdict=Verdict.LISTED, links_found=len(links))
    state.save(StoredPage(record, '"v1"', "Wed, 21 Oct 2015 07:28:00 GMT", b"h" * 16,
                          datetime(2025, 1, 1, tzinfo=UTC), links))


def not_modified(url: str, etag: str | None = None, last_modified: str | None = None):
    return PageOutcome(PageRecord(url, 0, 304, None, verdict=Verdict.ERROR),
                       etag=etag, last_modified=last_modified)


def test_a_304_reuses_the_stored_page_and_its_links(tmp_path: Path) -> None:
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    stored(state, "http://h/", ["http://h/a", "http://h/b"])
    outcome, reused = remember(state, Job("http://h/", 0), not_modified("http://h/"), "auto", RUN)
    assert reused
    assert outcome.record.verdict is Verdict.LISTED and outcome.record.status == 200
    assert outcome.links == ["http://h/a", "http://h/b"]
    assert outcome.record.lastmod == datetime(2015, 10, 21, 7, 28, tzinfo=UTC)
    state.close()


def test_new_validators_on_a_304_are_kept_for_the_next_run(tmp_path: Path) -> None:
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    stored(state, "http://h/", [])
    answer = not_modified("http://h/", etag='"v2"', last_modified="Thu, 22 Oct 2015 07:28:00 GMT")
    remember(state, Job("http://h/", 0), answer, "auto", RUN)
    assert state.validators("http://h/") == {
        "If-None-Match": '"v2"', "If-Modified-Since": "Thu, 22 Oct 2015 07:28:00 GMT"}
    remember(state, Job("http://h/", 0), not_modified("http://h/"), "auto", RUN)
    assert state.validators("http://h/")["If-None-Match"] == '"v2"'  # absent: kept
    state.close()
