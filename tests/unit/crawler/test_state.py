from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from crawler.core.records import PageRecord, SkippedUrl, Verdict
from crawler.frontier.job import Job
from crawler.store.state import CrawlState
from crawler.store.state_file import SCHEMA_VERSION, StateError, mark_published
from crawler.store.stored import StoredPage

ROOT = "http://h/"


def page(url: str, links: list[str], etag: str | None = '"v1"') -> StoredPage:
    record = PageRecord(url, 1, 200, "text/html", verdict=Verdict.LISTED, links_found=len(links))
    return StoredPage(record, etag, "Wed, 21 Oct 2015 07:28:00 GMT", b"h" * 16,
                      datetime(2025, 1, 1, tzinfo=UTC), links)


def test_the_links_handed_out_are_forgotten_past_their_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEMAP_CRAWLER_IDS_HANDED_KEPT", "3")
    pages = {f"http://h/p{n}": [f"http://h/l{n}-{k}" for k in range(2)] + ["http://h/nav"]
             for n in range(20)}
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    for url, links in pages.items():
        state.save(page(url, links))
    state.finish()
    state.close()
    again = CrawlState(tmp_path / "s.db", ROOT)
    again.begin(resume=False)
    handed: list[str] = []
    for url in pages:
        stored = again.previous(url)
        assert stored is not None
        handed += again.new_outlinks(stored)
        assert len(again._handed) <= 3  # a re-crawl of ten million pages: a bounded set
    # every link handed out at least once; one forgotten is handed again, harmlessly
    assert set(handed) == {link for links in pages.values() for link in links}
    assert handed.count("http://h/nav") > 1
    again.close()


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


def test_packed_blobs_are_zlib_streams_any_reader_takes(tmp_path: Path) -> None:
    """Outlinks and anchors are packed with a small window (cheap to set up) in the
    zlib format every earlier version reads: no new schema, nothing to migrate."""
    import zlib
    from array import array

    from crawler.store.state import packed

    for data in (b"", b"x", array("I", range(5000, 5311)).tobytes(),
                 bytes(range(256)) * 300, '{"http://h/é": "à"}'.encode()):
        blob = packed(data)
        assert zlib.decompress(blob) == data
        assert blob[0] == 0x48  # CMF: deflate, a 4 KiB window (the default's is 0x78)
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    with_words = page("http://h/a", ["http://h/b"])
    with_words.anchors = {"http://h/b": "b"}
    state.save(with_words)
    state.close()
    with sqlite3.connect(tmp_path / "s.db") as db:
        outlinks, anchors = db.execute("SELECT outlinks, anchors FROM pages").fetchone()
    assert outlinks[0] == anchors[0] == 0x48
    assert json.loads(zlib.decompress(anchors)) == {"http://h/b": "b"}


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
    assert list(point.queue) == [Job("http://h/b", 1, hops=2)]
    assert list(point.skipped) == [SkippedUrl("http://h/x", 1, Verdict.DISALLOWED)]
    again.finish()
    again.close()
    # Crawled but not yet published (a kill while writing the sitemaps): --resume
    # continues with every page done and nothing queued, and fetches nothing again.
    crawled = CrawlState(tmp_path / "s.db", ROOT)
    point = crawled.begin(resume=True)
    assert point is not None and not point.queue and len(point.records) == 2
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
    from crawler.config import CrawlConfig
    from crawler.engine import coordinator as engine
    from crawler.engine.result import CrawlResult
    from crawler.page.read import PageOutcome
    from crawler.store import state as state_module
    from crawler.urls.robots import allow_all
    from crawler.urls.scope import Scope

    monkeypatch.setattr(state_module, "BATCH_RECORDS", 1)  # commit as often as allowed
    path = tmp_path / "s.db"
    store = CrawlState(path, ROOT)
    store.begin(resume=False)
    config = CrawlConfig(start_url=ROOT, state_path=str(path))
    coordinator = engine._Coordinator(engine.SiteRules(config, Scope.for_start(ROOT, None),
                                                       allow_all("x")),
                                      None, CrawlResult(ROOT), state=store)  # type: ignore[arg-type]
    record = PageRecord(ROOT, 0, 200, "text/html", verdict=Verdict.LISTED)
    coordinator.frontier.restore(ROOT, fetched=True)
    coordinator.accept(Job(ROOT, 0), PageOutcome(record, links=["http://h/next"]))
    store._db.close()  # SIGKILL: whatever was not committed is gone,
    os.close(store._lock)  # and the kernel releases the lock
    point = CrawlState(path, ROOT).begin(resume=True)
    assert point is not None
    done = [r.url for r in point.records]
    queued = [job.url for job in point.queue]
    assert done == [ROOT] and queued == ["http://h/next"]


def _a_finished_state(path: Path) -> bytes:
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    state.save(page("http://h/a", [f"http://h/p{n}" for n in range(300)]))
    state.finish()
    state.close()
    return path.read_bytes()


def _truncated(path: Path) -> None:
    _a_finished_state(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _not_sqlite(path: Path) -> None:
    path.write_bytes(b"sitemap-crawler state? no: a text file\n" * 200)


def _newer(path: Path) -> None:
    _a_finished_state(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'version'")


def _other_scope(path: Path) -> None:
    state = CrawlState(path, "http://elsewhere/")
    state.begin(resume=False)
    state.close()


@pytest.mark.parametrize(("damage", "says"), [
    (_truncated, "damaged"), (_not_sqlite, "not a sitemap-crawler state file"),
    (_newer, "newer version"), (_other_scope, "belongs to a crawl of http://elsewhere/"),
])
def test_a_damaged_state_file_is_refused_and_never_overwritten(
        tmp_path: Path, damage: object, says: str) -> None:
    path = tmp_path / "s.db"
    damage(path)  # type: ignore[operator]
    before = path.read_bytes()
    with pytest.raises(StateError) as refused:
        CrawlState(path, ROOT).begin(resume=False)
    message = str(refused.value)
    assert says in message and "\n" not in message
    assert "--state" in message and "delete it" in message  # what to do about it
    assert path.read_bytes() == before


def test_a_state_file_in_use_by_a_running_crawl_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    running = CrawlState(path, ROOT)
    running.begin(resume=False)
    with pytest.raises(StateError, match="in use by another running crawl"):
        CrawlState(path, ROOT)
    running.close()
    CrawlState(path, ROOT).close()  # free again once that crawl ends


def test_a_state_file_of_the_previous_schema_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with sqlite3.connect(path) as db:  # schema 1, as the previous version wrote it
        db.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE urls (id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE);
            CREATE TABLE queue (seq INTEGER PRIMARY KEY AUTOINCREMENT,
                url_id INTEGER NOT NULL UNIQUE, depth INTEGER NOT NULL, hops INTEGER NOT NULL);
            INSERT INTO meta VALUES ('version', '1'), ('scope', 'http://h/'), ('run', '3'),
                ('run_state', 'running');
            INSERT INTO urls VALUES (1, 'http://h/q');
            INSERT INTO queue (url_id, depth, hops) VALUES (1, 2, 1);
        """)
    state = CrawlState(path, ROOT)
    point = state.begin(resume=True)
    assert point is not None and list(point.queue) == [Job("http://h/q", 2, 1)]
    state.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0] == (
            SCHEMA_VERSION)


def test_resume_keeps_each_queued_urls_redirect_chain(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    state.enqueue(Job("http://h/c", 1, hops=2, chain=("http://h/a", "http://h/b")))
    state.commit()
    state.close()
    point = CrawlState(path, ROOT).begin(resume=True)
    assert point is not None
    assert list(point.queue) == [Job("http://h/c", 1, hops=2, chain=("http://h/a", "http://h/b"))]


def test_urls_the_site_no_longer_links_are_pruned(tmp_path: Path) -> None:
    """Three runs over a site whose page links elsewhere each time: the state keeps
    the URLs of the last run only (it grew 2,001 → 4,001 → 6,001 rows)."""
    path = tmp_path / "s.db"
    for run in ("x", "y", "z"):
        state = CrawlState(path, ROOT)
        state.begin(resume=False)
        state.save(page("http://h/a", [f"http://h/{run}{n}" for n in range(1000)]))
        state.skip(SkippedUrl(f"http://other/{run}", 1, Verdict.EXTERNAL))
        state.finish()
        state.close()
    with sqlite3.connect(path) as db:
        urls = {url for (url,) in db.execute("SELECT url FROM urls")}
    assert urls == {"http://h/a", "http://other/z", *(f"http://h/z{n}" for n in range(1000))}
    stored = CrawlState(path, ROOT).previous("http://h/a")
    assert stored is not None and len(stored.links) == 1000


def test_anchors_round_trip_and_a_schema_3_file_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    with_words = page("http://h/a", ["http://h/b", "http://h/c"])
    with_words.anchors = {"http://h/b": "Café « b »"}
    state.save(with_words)
    state.save(page("http://h/d", ["http://h/b"]))
    state.finish()
    state.close()
    stored = CrawlState(path, ROOT)
    assert stored.previous("http://h/a").anchors == {"http://h/b": "Café « b »"}  # type: ignore[union-attr]
    stored.close()
    with sqlite3.connect(path) as db:  # as schema 3 wrote it: no anchors column (nor later)
        db.execute("ALTER TABLE pages DROP COLUMN anchors")
        db.execute("ALTER TABLE pages DROP COLUMN facts")
        db.execute("ALTER TABLE pages DROP COLUMN edges")
        db.execute("UPDATE meta SET value = '3' WHERE key = 'version'")
    migrated = CrawlState(path, ROOT)
    migrated.begin(resume=False)
    old = migrated.previous("http://h/d")
    assert old is not None and old.anchors == {} and old.links == ["http://h/b"]
    assert old.edges is None  # no graph kept: a run with --links fetches it whole
    assert migrated.validators("http://h/d", edges=True) == {}
    migrated.close()


def test_a_pages_rows_of_the_link_graph_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    graphed = page("http://h/a", ["http://h/b"])
    graphed.edges = [("http://h/b", "Café", ""), ("http://h/c", "an advert", "sponsored")]
    state.save(graphed)
    none = page("http://h/b", [])
    none.edges = []  # looked, and it links nowhere
    state.save(none)
    state.save(page("http://h/c", []))
    state.finish()
    state.close()
    stored = CrawlState(path, ROOT)
    assert stored.previous("http://h/a").edges == graphed.edges  # type: ignore[union-attr]
    assert stored.previous("http://h/b").edges == []  # type: ignore[union-attr]
    assert stored.previous("http://h/c").edges is None  # type: ignore[union-attr]
    assert stored.validators("http://h/b", edges=True) != {}
    assert stored.validators("http://h/c", edges=True) == {}
    stored.close()


def test_the_id_cache_is_bounded_and_ids_stay_right(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A million in-scope URLs are not all kept in memory as ids; a URL the cache let
    go of is read back from the file with the id it had."""
    monkeypatch.setattr("crawler.store.url_ids.IDS_CACHED", 10)
    state = CrawlState(tmp_path / "s.db", ROOT)
    state.begin(resume=False)
    urls = [f"http://h/p{n}" for n in range(60)]
    for number, url in enumerate(urls):
        state.save(page(url, urls[number + 1: number + 4]))
        assert len(state._ids) <= 10
    state.finish()
    state.close()
    again = CrawlState(tmp_path / "s.db", ROOT)
    again.begin(resume=False)
    for number, url in enumerate(urls):
        stored = again.previous(url)
        assert stored is not None and stored.links == urls[number + 1: number + 4]
        again.touch(url, 2, '"v2"', None)
        assert len(again._ids) <= 10
    again.finish()
    again.close()
    third = CrawlState(tmp_path / "s.db", ROOT)
    assert all(third.validators(url)["If-None-Match"] == '"v2"' for url in urls)
    third.close()


def test_what_a_page_says_survives_a_304(tmp_path: Path) -> None:
    """Schema 5: description, h1, words, --extract values and how the page was rendered
    are kept, so a page answered 304 gives the report the same row."""
    path = tmp_path / "s.db"
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    said = page("http://h/a", ["http://h/b"])
    record = said.record
    record.description, record.h1, record.h1_count, record.word_count = "D", "H", 2, 40
    record.extracted = (("price", "12.50"), ("tags", ["a", "b"]))
    record.render_why, record.rendered, record.raw_links = "--render always", True, 0
    record.render_notes = (("links-added", "1", "http://h/b"),)
    record.alternates_dropped = 7  # hreflang alternates past the cap, counted
    state.save(said)
    state.save(page("http://h/c", []))  # nothing said: nothing kept
    state.finish()
    state.close()
    stored = CrawlState(path, ROOT)
    again = stored.previous("http://h/a")
    assert again is not None
    kept = again.record
    assert (kept.description, kept.h1, kept.h1_count, kept.word_count) == ("D", "H", 2, 40)
    assert kept.extracted == (("price", "12.50"), ("tags", ["a", "b"]))
    assert (kept.render_why, kept.rendered, kept.raw_links) == ("--render always", True, 0)
    assert kept.render_notes == (("links-added", "1", "http://h/b"),)
    assert kept.alternates_dropped == 7
    plain = stored.previous("http://h/c")
    assert plain is not None and plain.record.word_count is None
    stored.close()


def test_a_pages_anchors_survive_a_304_and_are_asked_for_when_never_stored(
        tmp_path: Path) -> None:
    """--check-fragments: a page's links into anchors and its anchors are stored (none
    found is not none looked for), and a page stored without them is asked for whole."""
    path = tmp_path / "s.db"
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    looked = page("http://h/a", ["http://h/b"])
    looked.record.fragment_links = (("http://h/b", "part"),)
    looked.record.anchor_ids = ("top-of-a", "café")
    state.save(looked)
    bare = page("http://h/b", [])
    bare.record.anchor_ids = ()  # looked, and found none
    state.save(bare)
    state.save(page("http://h/c", []))  # a run without --check-fragments
    state.finish()
    state.close()
    stored = CrawlState(path, ROOT)
    kept = stored.previous("http://h/a")
    assert kept is not None
    assert kept.record.fragment_links == (("http://h/b", "part"),)
    assert kept.record.anchor_ids == ("top-of-a", "café")
    none = stored.previous("http://h/b")
    assert none is not None and none.record.anchor_ids == ()
    never = stored.previous("http://h/c")
    assert never is not None and never.record.anchor_ids is None
    assert stored.validators("http://h/a", fragments=True) == {"If-None-Match": '"v1"',
        "If-Modified-Since": "Wed, 21 Oct 2015 07:28:00 GMT"}
    assert stored.validators("http://h/b", fragments=True) != {}
    assert stored.validators("http://h/c", fragments=True) == {}  # its anchors: unknown
    assert stored.validators("http://h/c") != {}
    stored.close()


def _urls_in(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {url for (url,) in db.execute("SELECT url FROM urls")}


def test_a_run_of_304s_alone_skips_the_pruning_pass(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Pruning reads every page's outlinks; a run that added no URL, stored no page
    anew and forgot none cannot have left a URL behind, and does not prune. A page
    no longer reached, a page stored anew, a new URL or an unfinished run before
    this one each make the run prune, and the URLs left behind go. A page fetched
    again (not a 304) with the same links changes nothing."""
    path = tmp_path / "s.db"
    pruned: list[int] = []
    prune = CrawlState._prune_urls

    def counted(state: CrawlState) -> None:
        pruned.append(state.run)
        prune(state)

    monkeypatch.setattr(CrawlState, "_prune_urls", counted)

    def run(*steps: tuple[str, str, list[str]], finish: bool = True) -> None:
        state = CrawlState(path, ROOT)
        state.begin(resume=False)
        for kind, url, links in steps:
            if kind == "save":
                state.save(page(url, links))
            else:
                state.touch(url, 1, '"v1"', None)
        if finish:
            state.finish()
        state.close()
        if finish:
            mark_published(path)  # as the CLI does once the sitemaps are out

    run(("save", "http://h/a", ["http://h/b", "http://h/x"]), ("save", "http://h/b", []))
    assert pruned == [1]
    run(("touch", "http://h/a", []), ("touch", "http://h/b", []))  # all 304
    assert pruned == [1]
    assert _urls_in(path) == {"http://h/a", "http://h/b", "http://h/x"}
    run(("touch", "http://h/b", []))  # a is no longer reached: x goes with it
    assert pruned == [1, 3]
    assert _urls_in(path) == {"http://h/b"}
    run(("touch", "http://h/b", []), ("touch", "http://h/new", []))  # a URL added
    assert pruned == [1, 3, 4]
    run(("save", "http://h/b", []))  # stored again, with the same links
    assert pruned == [1, 3, 4]
    run(("save", "http://h/b", ["http://h/y"]))  # stored with other links
    assert pruned == [1, 3, 4, 6]
    run(("save", "http://h/b", ["http://h/z"]), finish=False)  # a run that did not end
    run(("touch", "http://h/b", []))
    assert pruned == [1, 3, 4, 6, 8]
    assert _urls_in(path) == {"http://h/b", "http://h/z"}


def _recrawl(path: Path, urls: list[str], statements: list[str] | None = None,
             etag: str = '"v2"') -> list[dict[str, str]]:
    """A 304 re-crawl as the coordinator drives the state: each page's validators,
    its stored self, its new outlinks (queued in order), then the touch."""
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    if statements is not None:
        state._db.set_trace_callback(statements.append)
    asked = []
    queue = [urls[0]]
    for url in queue:
        asked.append(state.validators(url))
        stored = state.previous(url, with_links=False)
        assert stored is not None
        queue += [link for link in state.new_outlinks(stored) if link not in queue]
        state.touch(url, 1, etag, None)
        state.checkpoint()
        assert len(state._rows) + len(state._ahead) <= 40 + 1
    state.finish()
    state.close()
    mark_published(path)
    return asked


def test_a_recrawl_reads_the_rows_it_needs_together(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows of pages about to be fetched are read in a few queries, not one a
    page, and never more than ROWS_AHEAD wait; what they say is what the file says,
    and a page this run wrote already is read as written."""
    monkeypatch.setattr("crawler.store.state.ROWS_AHEAD", 40)
    path = tmp_path / "s.db"
    urls = [f"http://h/p{n}" for n in range(120)]
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    for number, url in enumerate(urls):  # a tree: each page links the next three
        state.save(page(url, [*urls[3 * number + 1: 3 * number + 4], urls[0]]))
    state.finish()
    state.close()
    mark_published(path)
    statements: list[str] = []
    asked = _recrawl(path, urls, statements)
    assert asked == [{"If-None-Match": '"v1"', "If-Modified-Since":
                      "Wed, 21 Oct 2015 07:28:00 GMT"}] * 120
    one_by_one = [sql for sql in statements if "FROM pages WHERE url_id = ?" in sql]
    together = [sql for sql in statements if "FROM pages p JOIN urls" in sql]
    assert len(one_by_one) <= 12 and len(together) <= 12, (len(one_by_one), len(together))
    # the second re-crawl finds the validators the first one wrote, its own page too
    assert _recrawl(path, urls, etag='"v3"') == [{"If-None-Match": '"v2"'}] * 120
    assert _recrawl(path, urls) == [{"If-None-Match": '"v3"'}] * 120


def _next_run(path: Path, *pages: StoredPage) -> CrawlState:
    """A run that stored ``pages`` and was published, and the state of the next one."""
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    for stored in pages:
        state.save(stored)
    state.finish()
    state.close()
    mark_published(path)
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    return state


def test_a_page_fetched_again_in_a_run_reads_its_row_as_written(tmp_path: Path) -> None:
    """A row noted ahead for a page this run has already answered is not the one
    read: the page's own answer is (its new validators)."""
    state = _next_run(tmp_path / "s.db", page("http://h/a", ["http://h/b"]),
                      page("http://h/b", ["http://h/a"]))
    assert state.validators("http://h/a")["If-None-Match"] == '"v1"'
    stored = state.previous("http://h/a", with_links=False)
    assert stored is not None and state.new_outlinks(stored) == ["http://h/b"]
    state.touch("http://h/a", 0, '"v2"', None)
    assert state.validators("http://h/b")["If-None-Match"] == '"v1"'
    stored = state.previous("http://h/b", with_links=False)
    assert stored is not None and state.new_outlinks(stored) == ["http://h/a"]
    state.touch("http://h/b", 1, '"v2"', None)
    state.commit()
    assert state.validators("http://h/a") == {"If-None-Match": '"v2"'}  # as written
    state.close()


def test_a_small_file_answers_ids_from_memory_and_a_large_one_from_its_caches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to ALL_IDS_UP_TO URLs, every id and URL is held both ways: a URL the file
    lacks is known to be new without asking SQLite. Grown past it, the bounded
    caches take over and ids stay right."""
    monkeypatch.setattr("crawler.store.url_ids.ALL_IDS_UP_TO", 50)
    path = tmp_path / "s.db"
    statements: list[str] = []
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    state._db.set_trace_callback(statements.append)
    urls = [f"http://h/p{n}" for n in range(80)]
    for number in range(20):
        state.save(page(urls[number], urls[number + 1: number + 3]))
    assert not [sql for sql in statements if "SELECT id FROM urls" in sql]
    assert state._names is not None
    for number in range(20, 79):  # past 50 URLs: the caches
        state.save(page(urls[number], urls[number + 1: number + 3]))
    assert state._names is None
    state.finish()
    state.close()
    mark_published(path)
    again = CrawlState(path, ROOT)
    assert again._names is None  # 80 URLs: more than it holds
    for number in range(79):
        stored = again.previous(urls[number])
        assert stored is not None and stored.links == urls[number + 1: number + 3]
    again.close()


def test_a_first_crawl_never_asks_for_rows_its_pages_cannot_have_yet(tmp_path: Path) -> None:
    """A URL found in this run has no stored page until its page is stored: its
    validators and its previous page are known to be none without a query. A page
    stored (in this batch or an earlier one) is read as written."""
    state = _next_run(tmp_path / "s.db", page("http://h/old", ["http://h/a"]))
    statements: list[str] = []
    state._db.set_trace_callback(statements.append)
    urls = [f"http://h/p{n}" for n in range(30)]
    for number, url in enumerate(urls):
        state.enqueue(Job(url, 1))
        assert state.validators(url) == {}
        assert state.previous(url, with_links=False) is None
        state.save(page(url, urls[number + 1: number + 2]))
        if number % 7 == 0:
            state.commit()
    assert not [sql for sql in statements if "FROM pages WHERE url_id" in sql]
    assert state.validators("http://h/old")["If-None-Match"] == '"v1"'  # an earlier run's
    assert state.validators(urls[3])["If-None-Match"] == '"v1"'  # this run's, committed
    assert state.validators(urls[-1])["If-None-Match"] == '"v1"'  # this batch's
    stored = state.previous(urls[5])
    assert stored is not None and stored.links == [urls[6]]
    state.close()


def test_a_new_url_keeps_its_id_while_it_waits_for_the_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """New URLs reach the file with the batch (one executemany), not one INSERT each:
    one the small cache of outside URLs let go of before then is still known by the
    id it was given, never given a second one (the table's URLs are unique)."""
    monkeypatch.setattr("crawler.store.url_ids.FAR_IDS_CACHED", 4)
    monkeypatch.setattr("crawler.store.url_ids.ALL_IDS_UP_TO", 0)  # the caches, not all
    path = tmp_path / "s.db"
    state = CrawlState(path, ROOT)
    state.begin(resume=False)
    outside = [f"http://other/{n}" for n in range(20)]
    state.save(page("http://h/a", outside))
    state.save(page("http://h/b", outside[::-1]))  # each left the small cache by now
    with sqlite3.connect(path) as reader:  # nothing written before the batch ends
        assert reader.execute("SELECT count(*) FROM urls").fetchone() == (0,)
    assert state.all_outlinks(state.previous("http://h/a") or page("x", [])) == outside
    state.finish()
    state.close()
    with sqlite3.connect(path) as reader:
        assert reader.execute("SELECT count(*) FROM urls").fetchone() == (22,)
    again = CrawlState(path, ROOT)
    first, second = again.previous("http://h/a"), again.previous("http://h/b")
    assert first is not None and second is not None
    assert first.links == outside and second.links == outside[::-1]
    again.close()
