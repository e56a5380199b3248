"""The record store: a list until its threshold, then a file, with the same answers."""

from __future__ import annotations

import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pytest

from crawler.core.errors import ErrorKind
from crawler.core.records import PageRecord, SkippedUrl, Verdict
from crawler.engine.duplicates import drop_duplicates
from crawler.engine.result import CrawlResult
from crawler.store.record_store import RecordStore


def _records() -> list[PageRecord]:
    urls = ["http://s.test/b", "http://s.test/a?x=1", "http://s.test/%C3%A9", "http://s.test/a",
            "http://s.test/\udcff", "http://s.test/Z", "http://s.test/\u00e9", "http://s.test/"]
    made = []
    for number, url in enumerate(urls):
        made.append(PageRecord(
            url=url, depth=number, status=200 if number % 3 else 404,
            lastmod=datetime(2026, 1, 1 + number, tzinfo=UTC),
            error=ErrorKind.TIMEOUT if number == 5 else None,
            verdict=Verdict.LISTED if number % 3 else Verdict.NOT_OK,
            alternates=(("de", url + "de"),) if number == 1 else (),
            images=("http://s.test/i.png",) if number == 2 else None, title=f"t{number}",
            fingerprint=b"\x00\x01" if number == 4 else None))
    return made


@pytest.mark.parametrize("keep", [0, 3, 100])
def test_spilled_or_not_the_store_answers_alike(keep: int, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    records = _records()
    store = RecordStore(keep=keep)
    for record in records:
        store.append(record)
    assert store.spilled is (keep < len(records))
    assert list(tmp_path.iterdir()) == []  # the file is unlinked once open
    assert len(store) == len(records)
    assert list(store) == records
    assert [store[i] for i in range(len(records))] == records
    assert store[-1] == records[-1]
    with pytest.raises(IndexError):
        store[len(records)]
    expected = sorted((r for r in records if r.verdict is Verdict.LISTED), key=lambda r: r.url)
    listed = store.listed()
    assert list(listed) == expected
    assert list(listed) == expected  # iterable again
    for record in records:
        assert store.is_listed(record.url) is (record.verdict is Verdict.LISTED)
    assert not store.is_listed("http://s.test/never")
    result = CrawlResult(start_url="http://s.test/", records=store)  # type: ignore[arg-type]
    assert list(result.listed()) == expected
    store.close()


def test_spilling_moves_the_kept_records_a_few_with_each_new_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its threshold the store moves what it kept in memory to the file a few
    records at a time: moved all at once, 50,000 records stalled the crawl for half a
    second (s100k), while no page was fetched or read. Rows are made a batch at a
    time, when written, so no append makes more than a batch of them."""
    store = RecordStore(keep=5_000)
    packed: list[int] = []
    pack = store._row

    def counting(index: int, record: PageRecord) -> tuple:
        packed.append(index)
        return pack(index, record)

    monkeypatch.setattr(store, "_row", counting)
    most = 0
    for number in range(5_200):
        before = len(packed)
        store.append(PageRecord(url=f"http://s.test/{number}", depth=1, status=200,
                                verdict=Verdict.LISTED))
        most = max(most, len(packed) - before)
    assert store.spilled
    assert 0 < most <= RecordStore._WRITE_BATCH + RecordStore.MOVE_PER_APPEND
    assert [record.url for record in store] == [f"http://s.test/{n}" for n in range(5_200)]
    assert sorted(packed) == list(range(5_200))  # every record packed once
    store.close()


@pytest.mark.parametrize("read", ["iterate", "index", "listed", "find", "replace", "groups"])
def test_a_store_read_while_it_moves_to_disk_answers_as_one_in_memory(
        read: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read in the middle of the move (records still in memory, others on disk or
    waiting to be written) sees every record, at its index."""
    monkeypatch.setattr(RecordStore, "MOVE_PER_APPEND", 1)
    records = _report_records()
    store, memory = RecordStore(keep=6), RecordStore.of(list(records))
    for record in records:
        store.append(record)
    assert store.spilled
    for candidate in (store, memory):
        if read == "iterate":
            assert list(candidate) == records
        elif read == "index":
            assert [candidate[i] for i in range(len(records))] == records
        elif read == "listed":
            assert list(candidate.listed()) == sorted(
                (r for r in records if r.verdict is Verdict.LISTED), key=lambda r: r.url)
            assert len(list(candidate.listed_unordered())) == 7
        elif read == "find":
            assert candidate.find("http://s.test/c") == (3, records[3])
            assert candidate.is_listed("http://s.test/e")
        elif read == "replace":
            edited = PageRecord(url="http://s.test/e", depth=2, status=200,
                                verdict=Verdict.NOINDEX)
            candidate.replace(5, edited)
            assert candidate[5] == edited and not candidate.is_listed("http://s.test/e")
        else:
            assert sorted(candidate.groups("fingerprint")) == [
                (b"f1", ["http://s.test/a", "http://s.test/b"]),
                (b"f2", ["http://s.test/\u00e9", "http://s.test/d.pdf"])]
    store.close()


@pytest.mark.slow(11)
def test_a_spilled_store_holds_its_records_in_bounded_memory() -> None:
    """30,000 records of ~0.4 KB would hold some 12.5 MB in a list (tracemalloc makes
    each append slow: more records would say no more)."""
    def fill(store: RecordStore) -> int:
        tracemalloc.start()
        for number in range(30_000):
            store.append(PageRecord(url=f"http://s.test/section-{number % 97}/page-{number}.html",
                                    depth=3, status=200, verdict=Verdict.LISTED,
                                    lastmod=datetime(2026, 1, 1, tzinfo=UTC),
                                    title=f"Page number {number} of the big site"))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak

    store = RecordStore(keep=1_000)
    spilled_peak = fill(store)
    assert spilled_peak < 6_000_000, spilled_peak
    assert sum(1 for _ in store.listed()) == 30_000
    store.close()


def _report_records() -> list[PageRecord]:
    """Records the report asks about: shared fingerprints and titles, a URL fetched
    twice, a non-HTML page, a page that is not listed."""
    html = "text/html; charset=utf-8"
    rows = [("http://s.test/a", Verdict.LISTED, b"f1", "Home", html),
            ("http://s.test/b", Verdict.LISTED, b"f1", "Home", html),
            ("http://s.test/\u00e9", Verdict.LISTED, b"f2", "Other", html),
            ("http://s.test/c", Verdict.NOINDEX, b"f2", "Other", html),
            ("http://s.test/d.pdf", Verdict.LISTED, b"f2", "Other", "application/pdf"),
            ("http://s.test/e", Verdict.LISTED, None, "", html),
            ("http://s.test/f", Verdict.LISTED, None, "", html),
            ("http://s.test/a", Verdict.LISTED, b"f3", "Again", html)]
    # pages with a link: a page with none is nobody's duplicate (crawler.page.read)
    return [PageRecord(url=url, depth=1, status=200, verdict=verdict, fingerprint=fingerprint,
                       title=title, content_type=content_type, links_found=1)
            for url, verdict, fingerprint, title, content_type in rows]


@pytest.mark.parametrize("keep", [0, 2, 100])
def test_lookups_groups_and_edits_answer_alike_on_disk(keep: int) -> None:
    records = _report_records()
    store = RecordStore(keep=keep)
    for record in records:
        store.append(record)
    memory = RecordStore.of(list(records))
    assert store.spilled is (keep < len(records)) and not memory.spilled
    for candidate in (store, memory):
        assert candidate.find("http://s.test/a") == (7, records[7])  # the last of the two
        assert candidate.get("http://s.test/\u00e9") == records[2]
        assert candidate.get("http://s.test/never") is None
        assert [i for i, _record in candidate.by_url()] == [0, 7, 1, 3, 4, 5, 6, 2]
        assert sorted(candidate.groups("fingerprint")) == [
            (b"f1", ["http://s.test/a", "http://s.test/b"]),
            (b"f2", ["http://s.test/\u00e9", "http://s.test/d.pdf"])]
        # titles compare among listed HTML pages only, and an empty one is no title
        assert candidate.groups("html_title") == [("Home", ["http://s.test/a", "http://s.test/b"])]
        edited = PageRecord(url="http://s.test/b", depth=1, status=200, verdict=Verdict.DUPLICATE,
                            fingerprint=b"f1", title="Home", content_type="text/html",
                            duplicate_of="http://s.test/a", links_found=1)
        candidate.replace(1, edited)
        assert candidate[1] == edited and candidate.get("http://s.test/b") == edited
        assert not candidate.is_listed("http://s.test/b")
        assert candidate.groups("html_title") == []
        assert [key for key, _urls in candidate.groups("fingerprint")] == [b"f2"]
        assert [r.url for r in candidate.listed()] == [
            "http://s.test/a", "http://s.test/a", "http://s.test/d.pdf", "http://s.test/e",
            "http://s.test/f", "http://s.test/\u00e9"]
    store.close()


def test_the_thresholds_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from crawler.store.referrers import Referrers
    from crawler.store.skipped_store import SkippedStore

    record = _report_records()[0]
    assert not _filled(RecordStore(), record).spilled
    monkeypatch.setenv("SITEMAP_CRAWLER_RECORDS_IN_MEMORY", "0")
    monkeypatch.setenv("SITEMAP_CRAWLER_SKIPPED_IN_MEMORY", "0")
    monkeypatch.setenv("SITEMAP_CRAWLER_REFERRERS_IN_MEMORY", "0")
    assert _filled(RecordStore(), record).spilled
    skipped = SkippedStore()
    skipped.append(SkippedUrl("http://s.test/x", 1, Verdict.DISALLOWED))
    assert skipped.spilled
    referrers = Referrers()
    referrers.add("http://s.test/x", "http://s.test/", None)
    referrers.add("http://s.test/y", "http://s.test/", None)
    assert referrers.spilled


def _filled(store: RecordStore, record: PageRecord) -> RecordStore:
    store.append(record)
    return store


def test_records_come_back_as_they_went_in_whatever_they_hold() -> None:
    """Records are stored in a compact form (marshal, UTC dates as microseconds);
    a date in another zone, or without one, goes the slow, general way."""
    from datetime import timedelta, timezone

    from crawler.store.record_store import _pack, _unpack

    plain = _records()
    odd = [PageRecord(url="http://s.test/x", depth=1,
                      lastmod=datetime(2026, 3, 1, 12, tzinfo=timezone(timedelta(hours=2)))),
           PageRecord(url="http://s.test/y", depth=1, last_modified=datetime(2026, 3, 1, 12)),
           PageRecord(url="http://s.test/z", depth=1, verdict=Verdict.DUPLICATE,
                      lastmod=datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                      duplicate_of="http://s.test/a", change_interval=86400.5,
                      error=ErrorKind.INTERNAL, detail="ValueError: \udcff")]
    for record in [*plain, *odd]:
        packed = _pack(record)
        assert _unpack(packed) == record
        assert packed[:1] == (b"p" if record in odd[:2] else b"m")
    assert _unpack(_pack(odd[0])).lastmod.utcoffset() == timedelta(hours=2)


class _CountingList(list):
    """A list that counts the full passes made over it."""

    passes = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        _CountingList.passes += 1
        return super().__iter__()


def test_drop_duplicates_reads_an_in_memory_crawl_a_bounded_number_of_times() -> None:
    # Each edit used to throw the URL lookup away, so every duplicate dropped cost a
    # pass over all records: 40,000 duplicates took minutes. The number of passes must
    # not grow with the number of duplicates.
    passes = []
    for pages in (10, 200):
        records = _CountingList(
            PageRecord(url=f"http://s.test/p{i}", depth=1, status=200, content_type="text/html",
                       verdict=Verdict.LISTED, fingerprint=bytes([i % 2]), links_found=1)
            for i in range(pages))
        result = CrawlResult(start_url="http://s.test/", records=records)
        result.stats.listed = pages
        _CountingList.passes = 0
        assert drop_duplicates(result) == pages - 2
        passes.append(_CountingList.passes)
        assert [r.url for r in result.records if r.verdict is Verdict.LISTED] == [
            "http://s.test/p0", "http://s.test/p1"]
        assert all(r.duplicate_of in ("http://s.test/p0", "http://s.test/p1")
                   for r in result.records if r.verdict is Verdict.DUPLICATE)
    assert passes[0] == passes[1] <= 5, passes


@pytest.mark.parametrize("keep", [0, 3, 100])
def test_readings_in_kept_order_answer_alike_on_disk(keep: int) -> None:
    """What hreflang and the namespaces read where order does not matter: the listed
    records, those declaring alternates and those carrying images or videos, as they
    were kept (edits included)."""
    records = _records()
    store = RecordStore(keep=keep)
    for record in records:
        store.append(record)
    listed = [record for record in records if record.verdict is Verdict.LISTED]
    assert list(store.listed_unordered()) == listed
    assert list(store.listed_unordered()) == listed  # iterable again
    assert [record.url for record in store.declaring_alternates()] == ["http://s.test/a?x=1"]
    # an edit that drops the page's alternates, and one that lists a page declaring some
    store.replace(1, PageRecord(url=records[1].url, depth=1, status=200, verdict=Verdict.LISTED))
    store.replace(0, PageRecord(url=records[0].url, depth=0, status=200, verdict=Verdict.LISTED,
                                alternates=(("fr", "http://s.test/fr"),)))
    assert [record.url for record in store.declaring_alternates()] == ["http://s.test/b"]
    assert [record.url for record in store.carrying_media()] == [records[2].url]
    # media on a page that is not listed counts for nothing; on a listed one, it does
    store.replace(3, PageRecord(url=records[3].url, depth=1, status=404,
                                verdict=Verdict.NOT_OK, images=("http://s.test/j.png",)))
    store.replace(4, PageRecord(url=records[4].url, depth=1, status=200, verdict=Verdict.LISTED,
                                videos=(("http://s.test/t.jpg", "T", "D", "http://s.test/v.mp4",
                                         None, None, None),)))
    assert [record.url for record in store.carrying_media()] == [records[2].url, records[4].url]
    store.replace(2, PageRecord(url=records[2].url, depth=1, status=200, verdict=Verdict.LISTED))
    assert [record.url for record in store.carrying_media()] == [records[4].url]
    assert [record.url for record in store.listed_unordered()] == [
        records[0].url, records[1].url, records[2].url, records[4].url, records[5].url,
        records[7].url]
    store.close()


def test_publishing_a_spilled_crawl_reads_its_file_in_url_order_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """hreflang reads the file as it lies; only the write needs URL order, the costly
    reading (on s100k, three such passes were 3 s of a 37 s crawl)."""
    from click.testing import CliRunner

    import crawler.cli.commands as cli_module
    import crawler.cli.crawl_command as run_module
    from crawler.store import record_store

    store = RecordStore(keep=0)
    pages = [f"http://s.test/{name}" for name in ("en", "de", "fr", "z", "a")]
    for url in pages:
        alternates = (("en", pages[0]), ("de", pages[1])) if url in pages[:2] else ()
        store.append(PageRecord(url=url, depth=1, status=200, content_type="text/html",
                                verdict=Verdict.LISTED, alternates=alternates))
    monkeypatch.setattr(run_module, "crawl_site", lambda _display, _config: CrawlResult(
        start_url="http://s.test/", records=store))  # type: ignore[arg-type]
    passes: list[str] = []
    in_url_order = record_store._Listed.__iter__

    def counted(listing: record_store._Listed) -> object:
        passes.append("url order")
        return in_url_order(listing)

    monkeypatch.setattr(record_store._Listed, "__iter__", counted)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli_module.cli, [
        "crawl", "http://s.test/", "--out", str(out), "--no-gzip", "--quiet"])
    assert result.exit_code == 0, result.output
    assert passes == ["url order"]
    written = (out / "sitemap-00001.xml").read_text()
    assert [written.index(f"<loc>{url}</loc>") for url in sorted(pages)] == sorted(
        written.index(f"<loc>{url}</loc>") for url in pages)  # in URL order
    assert 'hreflang="de"' in written  # the alternates were read


def test_publishing_a_spilled_crawl_reads_each_record_once_but_the_few_with_extensions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The count comes from the write and the namespaces from the records that can
    need them: a spilled crawl's records are not read once more to count them (on
    s100k that pass was 0.7 s of the 2 s after the last page)."""
    from click.testing import CliRunner

    import crawler.cli.commands as cli_module
    import crawler.cli.crawl_command as run_module
    from crawler.store import record_store

    store = RecordStore(keep=0)
    pages = [f"http://s.test/p{number:02d}" for number in range(40)]
    for number, url in enumerate(pages):
        alternates = (("en", pages[0]), ("de", pages[1])) if number < 2 else ()
        images = ("http://s.test/i.png",) if number == 7 else None
        store.append(PageRecord(url=url, depth=1, status=200, content_type="text/html",
                                verdict=Verdict.LISTED, alternates=alternates, images=images))
    store.append(PageRecord(url="http://s.test/gone", depth=1, status=404,
                            verdict=Verdict.NOT_OK, images=("http://s.test/j.png",)))
    monkeypatch.setattr(run_module, "crawl_site", lambda _display, _config: CrawlResult(
        start_url="http://s.test/", records=store))  # type: ignore[arg-type]
    unpacked: list[str] = []
    unpack = record_store._unpack

    def counted(data: bytes) -> PageRecord:
        record = unpack(data)
        unpacked.append(record.url)
        return record

    monkeypatch.setattr(record_store, "_unpack", counted)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli_module.cli, [
        "crawl", "http://s.test/", "--out", str(out), "--no-gzip", "--quiet"])
    assert result.exit_code == 0, result.output
    # the write's pass, hreflang's two, and the first record with alternates and with media
    assert sorted(unpacked) == sorted([*pages, pages[0], pages[1], pages[0], pages[7]])
    written = (out / "sitemap-00001.xml").read_text()
    assert written.count("<url>") == 40
    assert 'xmlns:xhtml="http://www.w3.org/1999/xhtml"' in written
    assert 'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"' in written
    assert "xmlns:video=" not in written

