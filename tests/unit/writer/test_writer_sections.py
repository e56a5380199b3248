"""write_sitemaps with sections: each section's shards numbered on their own, the index
in the sections' order, the counts per section read back from what is published."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sitemap_writer import (
    SitemapEntry,
    SitemapError,
    published_url_count,
    published_url_counts,
    shard_section,
    write_sitemaps,
    writes_or_prunes,
)

BASE = "https://www.example.com/"


def _entries(*paths: str) -> list[SitemapEntry]:
    return [SitemapEntry(BASE + path, datetime(2026, 1, 1 + n, tzinfo=UTC))
            for n, path in enumerate(sorted(paths))]


def _by_folder(loc: str) -> str:
    rest = loc[len(BASE):]
    return rest.split("/")[0] if "/" in rest else "other"


def test_each_section_is_sharded_alone_and_the_index_follows_the_order(tmp_path: Path) -> None:
    entries = _entries("a", "blog/1", "blog/2", "blog/3", "docs/1", "z")
    written = write_sitemaps(entries, out_dir=tmp_path, base_url=BASE, max_urls=2,
                             section_of=_by_folder, sections=["docs", "blog", "other"])
    assert [shard.name for shard in written.shards] == [
        "sitemap-docs-00001.xml.gz", "sitemap-blog-00001.xml.gz",
        "sitemap-blog-00002.xml.gz", "sitemap-other-00001.xml.gz"]
    assert written.sections == {"docs": 1, "blog": 3, "other": 2}
    index = (tmp_path / "sitemap_index.xml").read_text()
    assert index.index("sitemap-docs-") < index.index("sitemap-blog-") < index.index(
        "sitemap-other-")
    blog = gzip.decompress((tmp_path / "sitemap-blog-00002.xml.gz").read_bytes())
    assert blog.count(b"<url>") == 1 and b"blog/3" in blog
    assert published_url_counts(tmp_path) == {"docs": 1, "blog": 3, "other": 2}
    assert published_url_count(tmp_path) == 6


def test_a_section_not_in_the_order_comes_after_those_that_are(tmp_path: Path) -> None:
    written = write_sitemaps(_entries("b/1", "c/1", "a/1"), out_dir=tmp_path, base_url=BASE,
                             section_of=_by_folder, sections=["c"])
    assert [shard.name for shard in written.shards] == [
        "sitemap-c-00001.xml.gz", "sitemap-a-00001.xml.gz", "sitemap-b-00001.xml.gz"]


def test_switching_to_sections_removes_the_unsectioned_shards_and_back(tmp_path: Path) -> None:
    entries = _entries("blog/1", "docs/1")
    write_sitemaps(entries, out_dir=tmp_path, base_url=BASE)
    assert published_url_counts(tmp_path) == {"": 2}
    write_sitemaps(entries, out_dir=tmp_path, base_url=BASE, section_of=_by_folder)
    assert sorted(path.name for path in tmp_path.glob("sitemap-*")) == [
        "sitemap-blog-00001.xml.gz", "sitemap-docs-00001.xml.gz"]
    write_sitemaps(entries, out_dir=tmp_path, base_url=BASE)
    assert sorted(path.name for path in tmp_path.glob("sitemap-*")) == ["sitemap-00001.xml.gz"]


def test_an_unchanged_section_keeps_its_file(tmp_path: Path) -> None:
    first = _entries("blog/1", "docs/1")
    write_sitemaps(first, out_dir=tmp_path, base_url=BASE, section_of=_by_folder)
    second = [first[0], SitemapEntry(first[1].loc, datetime(2026, 6, 1, tzinfo=UTC))]
    result = write_sitemaps(second, out_dir=tmp_path, base_url=BASE, section_of=_by_folder)
    assert "sitemap-blog-00001.xml.gz" in result.published.unchanged
    assert "sitemap-docs-00001.xml.gz" in result.published.changed


@pytest.mark.parametrize("name", ["Blog", "1blog", "", "a" * 41, "blog/x", "blog.x", "-a"])
def test_a_section_name_unsafe_in_a_file_name_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(SitemapError, match="section name"):
        write_sitemaps(_entries("x"), out_dir=tmp_path, base_url=BASE,
                       section_of=lambda _loc: name)
    assert not list(tmp_path.glob("sitemap*"))


def test_the_judge_sees_each_sections_count_before_anything_is_published(
        tmp_path: Path) -> None:
    seen: list[dict[str, int]] = []

    def refuse(counts: dict[str, int]) -> None:
        seen.append(counts)
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        write_sitemaps(_entries("blog/1", "blog/2", "docs/1"), out_dir=tmp_path,
                       base_url=BASE, section_of=_by_folder, before_publish_sections=refuse)
    assert seen == [{"blog": 2, "docs": 1}]
    assert not list(tmp_path.glob("sitemap*"))


@pytest.mark.parametrize(("name", "section", "ours"), [
    ("sitemap-00001.xml.gz", "", True),
    ("sitemap-blog-00001.xml.gz", "blog", True),
    ("sitemap-news-00012.xml", "news", True),
    ("sitemap-news.xml", "", True),
    ("sitemap-Blog-00001.xml.gz", "", False),
    ("sitemap-blog-1.xml.gz", "", False),
    ("sitemap-blog.xml", "", False),
])
def test_which_files_are_shards_and_of_which_section(name: str, section: str,
                                                     ours: bool) -> None:
    assert writes_or_prunes(name) is ours
    assert shard_section(name) == section
