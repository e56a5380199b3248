from __future__ import annotations

from pathlib import Path

from sitemap_writer import SitemapEntry, published_url_count, write_sitemaps


def test_counts_urls_of_the_published_shards(tmp_path: Path) -> None:
    assert published_url_count(tmp_path) == 0
    entries = [SitemapEntry(f"https://h/p{n:03d}") for n in range(25)]
    write_sitemaps(entries, out_dir=tmp_path, base_url="https://h/", max_urls=10)
    assert published_url_count(tmp_path) == 25
    write_sitemaps(entries, out_dir=tmp_path / "plain", base_url="https://h/", compressed=False)
    assert published_url_count(tmp_path / "plain") == 25


def test_a_broken_shard_counts_as_nothing(tmp_path: Path) -> None:
    write_sitemaps([SitemapEntry("https://h/a")], out_dir=tmp_path, base_url="https://h/")
    (tmp_path / "sitemap-00001.xml.gz").write_bytes(b"not gzip")
    assert published_url_count(tmp_path) == 0
