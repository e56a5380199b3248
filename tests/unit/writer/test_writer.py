"""write_sitemaps: index, robots.txt line, atomic publishing."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from lxml import etree

import sitemap_writer.writer as writer_module
from sitemap_writer import (
    InvalidEntry,
    OutputError,
    SitemapEntry,
    SitemapError,
    normalize_base_url,
    with_sitemap_line,
    write_sitemaps,
)

BASE = "https://www.example.com/"


def entries(n: int) -> list[SitemapEntry]:
    return [SitemapEntry(f"{BASE}p{i:04d}", datetime(2024, 1, 1 + i % 28, tzinfo=UTC))
            for i in range(n)]


@pytest.mark.parametrize(("raw", "base"), [
    ("https://www.example.com", "https://www.example.com/"),
    ("https://www.example.com/maps/", "https://www.example.com/maps/"),
    ("https://www.example.com/maps/index.html", "https://www.example.com/maps/"),
    ("HTTP://h:8080/x/", "http://h:8080/x/"),
])
def test_base_url(raw: str, base: str) -> None:
    assert normalize_base_url(raw) == base


@pytest.mark.parametrize("raw", ["ftp://h/", "/maps/", "https://h/?q", "https://"])
def test_bad_base_url(raw: str) -> None:
    with pytest.raises(SitemapError):
        normalize_base_url(raw)


@pytest.mark.parametrize(("robots", "expected"), [
    (None, b"Sitemap: https://h/sitemap_index.xml\n"),
    (b"", b"Sitemap: https://h/sitemap_index.xml\n"),
    (b"User-agent: *\nDisallow:", b"User-agent: *\nDisallow:\n\nSitemap: https://h/sitemap_index.xml\n"),
    (b"User-agent: *\r\n", b"User-agent: *\r\n\nSitemap: https://h/sitemap_index.xml\n"),
    (b"sitemap: https://h/sitemap_index.xml\nUser-agent: *\n",
     b"sitemap: https://h/sitemap_index.xml\nUser-agent: *\n"),
    (b"Sitemap: https://h/other.xml\n",
     b"Sitemap: https://h/other.xml\n\nSitemap: https://h/sitemap_index.xml\n"),
    (b"Sitemap: https://h/sitemap_index.xml\nSitemap: https://h/sitemap_index.xml\n",
     b"Sitemap: https://h/sitemap_index.xml\n"),
])
def test_sitemap_line(robots: bytes | None, expected: bytes) -> None:
    url = "https://h/sitemap_index.xml"
    assert with_sitemap_line(robots, url) == expected
    assert with_sitemap_line(expected, url) == expected  # idempotent


_LONG = b"User-agent: *\nDisallow: /private-area/\n" + b"# padding\n" * 52_000  # 520 KB
_LINE = b"Sitemap: https://h/sitemap_index.xml\n"


@pytest.mark.parametrize(("robots", "expected"), [
    (_LONG, _LINE + _LONG),  # at the end it would be past what readers must parse
    (b"\xef\xbb\xbf" + _LONG, b"\xef\xbb\xbf" + _LINE + _LONG),  # after the byte-order mark
    (_LONG + _LINE, _LINE + _LONG),  # ours, out of reach: moved up
    (_LINE + _LONG + _LINE, _LINE + _LONG),
])
def test_sitemap_line_stays_within_500_kib(robots: bytes, expected: bytes) -> None:
    url = "https://h/sitemap_index.xml"
    assert with_sitemap_line(robots, url) == expected
    assert with_sitemap_line(expected, url) == expected  # idempotent


def test_writes_index_shards_and_robots(tmp_path: Path) -> None:
    result = write_sitemaps(entries(5), out_dir=tmp_path, base_url=BASE, max_urls=2,
                            robots_txt=b"User-agent: *\nDisallow: /x\n")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["robots.txt", "sitemap-00001.xml.gz", "sitemap-00002.xml.gz",
                     "sitemap-00003.xml.gz", "sitemap_index.xml"]
    assert result.url_count == 5
    index = (tmp_path / "sitemap_index.xml").read_text()
    assert index.count("<sitemap>") == 3
    assert f"<loc>{BASE}sitemap-00002.xml.gz</loc><lastmod>2024-01-04T00:00:00Z</lastmod>" in index


def test_unsorted_duplicate_or_foreign_entries_are_refused(tmp_path: Path) -> None:
    for bad in ([SitemapEntry(BASE + "b"), SitemapEntry(BASE + "a")],
                [SitemapEntry(BASE + "a"), SitemapEntry(BASE + "a")],
                [SitemapEntry("https://other.example.com/a")]):
        with pytest.raises(InvalidEntry):
            write_sitemaps(bad, out_dir=tmp_path, base_url=BASE)
    assert list(tmp_path.iterdir()) == []  # nothing published, no staging left


def test_nothing_to_write_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SitemapError):
        write_sitemaps([], out_dir=tmp_path, base_url=BASE)


def test_the_count_is_told_before_anything_is_published(tmp_path: Path) -> None:
    """A caller refusing the count (an empty or shrunken sitemap) keeps the previous
    output whole, and no staging directory is left behind."""
    write_sitemaps(entries(3), out_dir=tmp_path, base_url=BASE)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    told: list[int] = []

    class Refused(Exception):
        pass

    def refuse(count: int) -> None:
        told.append(count)
        raise Refused

    with pytest.raises(Refused):
        write_sitemaps(entries(7), out_dir=tmp_path, base_url=BASE, max_urls=2,
                       before_publish=refuse)
    assert told == [7]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    with pytest.raises(Refused):
        write_sitemaps([], out_dir=tmp_path, base_url=BASE, before_publish=refuse)
    assert told == [7, 0]  # asked before "nothing to write", so the caller can explain
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    result = write_sitemaps(entries(5), out_dir=tmp_path, base_url=BASE,
                            before_publish=told.append)
    assert told[-1] == result.url_count == 5


def test_second_run_prunes_stale_shards_and_keeps_unchanged_files(tmp_path: Path) -> None:
    write_sitemaps(entries(6), out_dir=tmp_path, base_url=BASE, max_urls=2)
    first_shard = tmp_path / "sitemap-00001.xml.gz"
    os.utime(first_shard, (1_000_000, 1_000_000))
    result = write_sitemaps(entries(4), out_dir=tmp_path, base_url=BASE, max_urls=2)
    assert not (tmp_path / "sitemap-00003.xml.gz").exists()
    assert result.published.removed == ["sitemap-00003.xml.gz"]
    assert "sitemap-00001.xml.gz" in result.published.unchanged
    assert first_shard.stat().st_mtime == 1_000_000


def test_failure_while_publishing_leaves_previous_output(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    write_sitemaps(entries(3), out_dir=tmp_path, base_url=BASE)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(writer_module, "index_bytes", broken)
    with pytest.raises(RuntimeError):
        write_sitemaps(entries(9), out_dir=tmp_path, base_url=BASE)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == before


def test_a_publish_interrupted_between_renames(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Shards go first and the index last, each by an atomic rename: stopped after the
    first rename, every file in place is whole (old or new), the index is still the old
    one, nothing of the staging is left, and the next run completes the change."""
    from sitemap_writer import publish as publish_module

    write_sitemaps(entries(6), out_dir=tmp_path, base_url=BASE, max_urls=2,
                   compressed=False)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    renames = []
    real_replace = os.replace

    def replace_once(source: str | Path, target: str | Path) -> None:
        if renames:
            raise OSError(28, "No space left on device")
        renames.append(Path(target).name)
        real_replace(source, target)

    monkeypatch.setattr(publish_module.os, "replace", replace_once)
    changed = [SitemapEntry(f"{BASE}{n:02d}x") for n in range(6)]
    with pytest.raises(OutputError):
        write_sitemaps(changed, out_dir=tmp_path, base_url=BASE, max_urls=2, compressed=False)
    monkeypatch.setattr(publish_module.os, "replace", real_replace)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert renames == ["sitemap-00001.xml"]  # one shard went in, then the failure
    assert set(after) == set(before)  # no staging directory, no stray file
    assert after["sitemap_index.xml"] == before["sitemap_index.xml"]
    for name, data in after.items():
        if name.endswith(".xml"):
            etree.fromstring(data)  # every file whole
    assert [name for name in after if after[name] != before[name]] == ["sitemap-00001.xml"]
    write_sitemaps(changed, out_dir=tmp_path, base_url=BASE, max_urls=2, compressed=False)
    index = (tmp_path / "sitemap_index.xml").read_text()
    assert all(f"sitemap-0000{n}.xml" in index for n in (1, 2, 3))
    assert f"{BASE}00x" in (tmp_path / "sitemap-00001.xml").read_text()


def test_output_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(OutputError):
        write_sitemaps(entries(1), out_dir=target, base_url=BASE)
    with pytest.raises(OutputError):
        write_sitemaps(entries(1), out_dir=target / "sub", base_url=BASE)


def test_files_are_world_readable(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        write_sitemaps(entries(2), out_dir=tmp_path, base_url=BASE)
    finally:
        os.umask(old)
    for path in tmp_path.iterdir():
        assert path.stat().st_mode & 0o777 == 0o644, path


def test_output_lock_is_exclusive_and_clears_stale_staging(tmp_path: Path) -> None:
    from sitemap_writer import output_lock

    stale = tmp_path / ".sitemap-staging-dead"
    stale.mkdir()
    (stale / "sitemap-00001.xml.gz").write_bytes(b"half written")
    with output_lock(tmp_path):
        assert not stale.exists()  # a killed run's leftovers, safe to remove under the lock
        with pytest.raises(OutputError, match="another sitemap-crawler run"), \
                output_lock(tmp_path):
            pass
    with output_lock(tmp_path):  # released again
        pass
