from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from crawler.frontier import Job
from crawler.records import PageRecord, SkippedUrl, Verdict
from crawler.state import CrawlState, StateError, StoredPage, mark_published

ROOT = "http://h/"


def page(url: str, links: list[str], etag: str | None = '"v1"') -> StoredPage:
    record = PageRecord(url, 1, 200, "text/html", verdict=Verdict.LISTED, links_found=len(links))
    return StoredPage(record, etag, "Wed, 21 Oct 2015 07:28:00 GMT", b"h" * 16,
                      datetime(2025, 1, 1, tzinfo=UTC), links)


def test_round_trip_of_a_page_and_its_outlinks(tmp_path: Path) -> None:
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    links = [f"http://h/p{n}" for n in range(50)] + ["http://other/"]
    state.save(page("http://h/a", links))
    state.finish()
    state.close()
    again = CrawlState(tmp_path / "s.db", ROOT)
    stored = again.previous("http://h/a")
    assert stored is not None
    assert stored.links == links  # order kept
    assert stored.content_hash == b"h" * 16
    assert stored.hash_changed_at == datetime(2025, 1, 1, tzinfo=UTC)
    assert again.validators("http://h/a") == {
        "If-None-Match": '"v1"', "If-Modified-Since": "Wed, 21 Oct 2015 07:28:00 GMT"}
    assert again.validators("http://h/unknown") == {}
    again.close()


def test_new_outlinks_hands_each_link_out_once_per_run(tmp_path: Path) -> None:
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    state.save(page("http://h/a", ["http://h/x", "http://h/y", "http://h/x"]))
    state.save(page("http://h/b", ["http://h/y", "http://h/z"]))
    state.finish()
    state.close()
    again = CrawlState(tmp_path / "s.db", ROOT)
    again.begin(resume=False)
    first, second = again.previous("http://h/a"), again.previous("http://h/b")
    assert first is not None and second is not None
    assert again.new_outlinks(first) == ["http://h/x", "http://h/y"]  # order kept, once
    assert again.new_outlinks(second) == ["http://h/z"]
    assert again.new_outlinks(first) == []
    again.close()


def test_the_answer_reuses_the_row_read_for_the_validators(tmp_path: Path) -> None:
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    state.save(page("http://h/a", []))
    state.save(page("http://h/no-etag", [], etag=None))
    assert "If-None-Match" not in state.validators("http://h/no-etag")
    statements: list[str] = []
    state._db.set_trace_callback(statements.append)
    assert state.validators("http://h/a")["If-None-Match"] == '"v1"'
    stored = state.previous("http://h/a", with_links=False)
    assert stored is not None and stored.etag == '"v1"'
    assert len([s for s in statements if "FROM pages" in s]) == 1
    assert state.previous("http://h/unseen") is None
    state.close()


def test_outlinks_are_stored_compactly(tmp_path: Path) -> None:
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    for n in range(200):
        state.save(page(f"http://h/p{n}", [f"http://h/p{(n + k) % 200}" for k in range(40)]))
    state.close()
    import sqlite3
    with sqlite3.connect(tmp_path / "s.db") as db:
        sizes = [row[0] for row in db.execute("SELECT length(outlinks) FROM pages")]
    assert max(sizes) < 40 * 4  # under 4 bytes a link: a million-page site fits


def test_another_scope_is_refused(tmp_path: Path) -> None:
    CrawlState(tmp_path / "s.db", ROOT).close()
    with pytest.raises(StateError, match="belongs to a crawl of http://h/"):
        CrawlState(tmp_path / "s.db", "http://h/docs/")


def test_resume_point_has_done_skipped_and_queued(tmp_path: Path) -> None:
    state = CrawlState(tmp_path / "s.db", ROOT)
    assert state.begin(resume=True) is None  # nothing to resume: a new run
    state.save(page("http://h/", ["http://h/a", "http://h/b"]))
    state.enqueue(Job("http://h/a", 1))
    state.enqueue(Job("http://h/b", 1, hops=2))
    state.skip(SkippedUrl("http://h/x", 1, Verdict.DISALLOWED))
    state.save(page("http://h/a", []))
    state.close()  # interrupted here

    again = CrawlState(tmp_path / "s.db", ROOT)
    point = again.begin(resume=True)
    assert point is not None
    assert [record.url for record in point.records] == ["http://h/", "http://h/a"]
    assert point.queue == [Job("http://h/b", 1, hops=2)]
    assert point.skipped == [SkippedUrl("http://h/x", 1, Verdict.DISALLOWED)]
    again.finish()
    again.close()
    # Crawled but not yet published (a kill while writing the sitemaps): --resume
    # continues with every page done and nothing queued, and fetches nothing again.
    crawled = CrawlState(tmp_path / "s.db", ROOT)
    point = crawled.begin(resume=True)
    assert point is not None and point.queue == [] and len(point.records) == 2
    crawled.close()
    mark_published(tmp_path / "s.db")
    third = CrawlState(tmp_path / "s.db", ROOT)
    assert third.begin(resume=True) is None  # the run completed: start afresh
    third.close()


def test_finish_forgets_pages_no_longer_reached(tmp_path: Path) -> None:
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    state.save(page("http://h/gone", []))
    state.finish()
    state.begin(resume=False)
    state.save(page("http://h/kept", []))
    state.finish()
    assert state.previous("http://h/gone") is None
    assert state.previous("http://h/kept") is not None
    state.close()


def test_a_page_and_the_urls_it_queued_are_committed_together(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kill between storing a page and queueing its links lost the links for
    good: a resume never reads a finished page's links again."""
    from crawler import engine
    from crawler import state as state_module
    from crawler.config import CrawlConfig
    from crawler.page import PageOutcome
    from crawler.records import CrawlResult
    from crawler.robots import allow_all
    from crawler.scope import Scope

    monkeypatch.setattr(state_module, "BATCH_RECORDS", 1)  # commit as often as allowed
    path = tmp_path / "s.db"
    store = CrawlState(path, ROOT)
    store.begin(resume=False)
    config = CrawlConfig(start_url=ROOT, state_path=str(path))
    coordinator = engine._Coordinator(config, Scope.for_start(ROOT, None), allow_all("x"),
                                      None, CrawlResult(ROOT), None, store)  # type: ignore[arg-type]
    record = PageRecord(ROOT, 0, 200, "text/html", verdict=Verdict.LISTED)
    coordinator.frontier.restore(ROOT, fetched=True)
    coordinator.accept(Job(ROOT, 0), PageOutcome(record, links=["http://h/next"]))
    store._db.close()  # SIGKILL: whatever was not committed is gone
    point = CrawlState(path, ROOT).begin(resume=True)
    assert point is not None
    done = [r.url for r in point.records]
    queued = [job.url for job in point.queue]
    assert done == [ROOT] and queued == ["http://h/next"]
