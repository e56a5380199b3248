"""Shard rotation at the exact limits, counted in URLs and in uncompressed bytes."""

from __future__ import annotations

import gzip
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sitemap_writer.entry import SitemapEntry
from sitemap_writer.errors import LimitError
from sitemap_writer.serialize import URLSET_FOOT, URLSET_HEAD, url_element
from sitemap_writer.shards import ShardWriter


def entries(n: int) -> list[SitemapEntry]:
    return [SitemapEntry(f"http://h/p{i:04d}") for i in range(n)]


def write(tmp_path: Path, items: list[SitemapEntry], **limits: int) -> list:
    writer = ShardWriter(tmp_path, compressed=False, **{"max_urls": 50_000,
                                                        "max_bytes": 52_428_800, **limits})
    for item in items:
        writer.add(item)
    return writer.close()


@pytest.mark.parametrize(("n", "max_urls", "counts"), [
    (1, 1, [1]), (3, 1, [1, 1, 1]), (4, 2, [2, 2]), (5, 2, [2, 2, 1]), (6, 3, [3, 3]),
])
def test_rotation_on_count(tmp_path: Path, n: int, max_urls: int, counts: list[int]) -> None:
    shards = write(tmp_path, entries(n), max_urls=max_urls)
    assert [shard.count for shard in shards] == counts


def test_rotation_on_bytes_at_the_exact_boundary(tmp_path: Path) -> None:
    items = entries(5)
    element = len(url_element(items[0]))
    frame = len(URLSET_HEAD) + len(URLSET_FOOT)
    exactly_two = frame + 2 * element
    shards = write(tmp_path, items, max_bytes=exactly_two)
    assert [shard.count for shard in shards] == [2, 2, 1]
    for shard in shards:
        size = (tmp_path / shard.name).stat().st_size
        assert size == shard.size <= exactly_two
    assert (tmp_path / shards[0].name).stat().st_size == exactly_two
    smaller = tmp_path / "smaller"
    smaller.mkdir()
    one_byte_less = write(smaller, items, max_bytes=exactly_two - 1)
    assert [shard.count for shard in one_byte_less] == [1, 1, 1, 1, 1]


def test_an_element_larger_than_the_limit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LimitError):
        write(tmp_path, entries(1), max_bytes=len(URLSET_HEAD) + len(URLSET_FOOT) + 5)


def test_gzip_is_deterministic_and_shard_lastmod_is_newest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = [SitemapEntry("http://h/a", datetime(2020, 1, 1, tzinfo=UTC)),
             SitemapEntry("http://h/b", datetime(2023, 5, 1, tzinfo=UTC)),
             SitemapEntry("http://h/c")]
    first, second = tmp_path / "1", tmp_path / "2"
    first.mkdir()
    second.mkdir()
    # The two writes happen a day apart, as two nightly runs do: the clock gzip
    # would stamp into its header must not reach the bytes.
    for directory, clock in ((first, 1_700_000_000.0), (second, 1_700_086_400.0)):
        monkeypatch.setattr(time, "time", lambda clock=clock: clock)
        writer = ShardWriter(directory, compressed=True, max_urls=50_000, max_bytes=52_428_800)
        for item in items:
            writer.add(item)
        shards = writer.close()
    assert shards[0].newest == datetime(2023, 5, 1, tzinfo=UTC)
    name = shards[0].name
    assert name == "sitemap-00001.xml.gz"
    assert (first / name).read_bytes() == (second / name).read_bytes()
    assert gzip.decompress((first / name).read_bytes()).startswith(URLSET_HEAD)


def test_alternates_and_images_count_toward_the_byte_limit(tmp_path: Path) -> None:
    from sitemap_writer.serialize import urlset_head

    head = urlset_head(alternates=True, images=True)
    items = [SitemapEntry(f"http://h/p{i}", alternates=(("de", f"http://h/de/p{i}"),
                                                        ("en", f"http://h/p{i}")),
                          images=tuple(f"http://cdn/i{i}-{k}.png" for k in range(5)))
             for i in range(6)]
    element = len(url_element(items[0]))
    assert element > 300  # the extensions are in the element's size
    limit = len(head) + 2 * element + len(URLSET_FOOT)
    writer = ShardWriter(tmp_path, compressed=False, max_urls=50_000, max_bytes=limit,
                         head=head)
    for item in items:
        writer.add(item)
    shards = writer.close()
    assert [shard.count for shard in shards] == [2, 2, 2]
    assert all((tmp_path / shard.name).stat().st_size <= limit for shard in shards)
    assert all(shard.size == (tmp_path / shard.name).stat().st_size for shard in shards)


@pytest.mark.parametrize("compressed", [True, False])
def test_elements_written_in_runs_make_the_bytes_written_one_at_a_time(
        tmp_path: Path, compressed: bool) -> None:
    """The writer hands elements to the file in runs; the file must be the one an
    element-by-element write made (a site that did not change keeps its bytes across
    an upgrade), across shard boundaries and runs of many sizes."""
    items = [SitemapEntry(f"http://h/section-{i % 7}/page-{i}.html",
                          datetime(2024, 1, 1 + i % 28, tzinfo=UTC)) for i in range(3_000)]
    writer = ShardWriter(tmp_path, compressed=compressed, max_urls=1_700, max_bytes=52_428_800)
    for item in items:
        writer.add(item)
    shards = writer.close()
    assert [shard.count for shard in shards] == [1_700, 1_300]
    for shard, chunk in zip(shards, (items[:1_700], items[1_700:]), strict=True):
        body = URLSET_HEAD + b"".join(url_element(item) for item in chunk) + URLSET_FOOT
        assert shard.size == len(body)
        written = (tmp_path / shard.name).read_bytes()
        if compressed:
            one_at_a_time = tmp_path / "reference.gz"
            with one_at_a_time.open("wb") as raw, gzip.GzipFile(
                    filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as out:
                for part in (URLSET_HEAD, *(url_element(item) for item in chunk), URLSET_FOOT):
                    out.write(part)
            assert written == one_at_a_time.read_bytes()
            written = gzip.decompress(written)
        assert written == body
