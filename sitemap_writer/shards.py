"""Streams ``<url>`` elements into numbered shard files.

A shard is closed *before* adding an element would break either limit — the
URL count or the uncompressed byte size including the XML head and foot —
so no file ever needs rewriting. Gzip output is deterministic (mtime 0, no
file name), so an unchanged site gives byte-identical files.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from sitemap_writer.entry import MAX_LOC_LENGTH, SitemapEntry
from sitemap_writer.errors import LimitError
from sitemap_writer.serialize import URLSET_FOOT, URLSET_HEAD, url_element

GZIP_LEVEL = 6
# Elements go to the file in runs of about this many bytes: gzip's write() costs
# more per call than deflating a 120-byte element does (the output is the same).
_RUN_BYTES = 1 << 16


def smallest_shard_bytes() -> int:
    """The fewest uncompressed bytes a shard needs to hold any one URL a sitemap may
    list: the longest ``<loc>`` (2,047 characters, each one an ``&`` that escapes to
    five) with a ``<lastmod>``, between the urlset's head and foot. A byte limit
    under this could fail on a URL the crawl finds, so it is refused up front."""
    worst = SitemapEntry("http://a/?" + "&" * (MAX_LOC_LENGTH - len("http://a/?")),
                         datetime(2000, 1, 1, tzinfo=UTC))
    return len(URLSET_HEAD) + len(url_element(worst)) + len(URLSET_FOOT)


def shard_name(number: int, *, compressed: bool, section: str | None = None) -> str:
    """``sitemap-00001.xml.gz``, or ``sitemap-blog-00001.xml.gz`` in section ``blog``:
    each section numbered on its own, so a change in one renames nothing in another."""
    middle = f"{section}-" if section else ""
    return f"sitemap-{middle}{number:05d}.xml" + (".gz" if compressed else "")


@dataclass(slots=True)
class Shard:
    """A written shard: its file name, how many URLs, bytes before gzip, newest lastmod."""

    name: str
    count: int = 0
    size: int = 0
    newest: datetime | None = None


class ShardWriter:
    """Writes shards into ``directory`` (a staging directory) as entries arrive."""

    def __init__(self, directory: Path, *, compressed: bool, max_urls: int, max_bytes: int,
                 head: bytes = URLSET_HEAD, section: str | None = None):
        self.directory = directory
        self.section = section
        self.head = head
        self.compressed = compressed
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.shards: list[Shard] = []
        self._raw: BinaryIO | None = None
        self._out: BinaryIO | None = None
        self._run: list[bytes] = []  # elements not yet handed to the file
        self._run_bytes = 0

    def add(self, entry: SitemapEntry) -> None:
        element = url_element(entry)
        if len(self.head) + len(element) + len(URLSET_FOOT) > self.max_bytes:
            raise LimitError(
                f"one <url> for {entry.loc[:80]} does not fit in a sitemap of "
                f"{self.max_bytes} bytes"
            )
        shard = self.shards[-1] if self._out is not None else None
        if (
            shard is None
            or shard.count + 1 > self.max_urls
            or shard.size + len(element) + len(URLSET_FOOT) > self.max_bytes
        ):
            shard = self._rotate()
        self._run.append(element)
        self._run_bytes += len(element)
        if self._run_bytes >= _RUN_BYTES:
            self._write_run()
        shard.count += 1
        shard.size += len(element)
        lastmod = entry.lastmod_utc
        if lastmod is not None and (shard.newest is None or lastmod > shard.newest):
            shard.newest = lastmod

    def close(self) -> list[Shard]:
        self._finish()
        return self.shards

    def _rotate(self) -> Shard:
        self._finish()
        shard = Shard(shard_name(len(self.shards) + 1, compressed=self.compressed,
                                 section=self.section))
        self._raw = open(self.directory / shard.name, "wb")  # noqa: SIM115 (closed in _finish)
        self._out = (
            gzip.GzipFile(filename="", mode="wb", fileobj=self._raw, mtime=0,
                          compresslevel=GZIP_LEVEL)
            if self.compressed
            else self._raw
        )
        self._out.write(self.head)
        shard.size = len(self.head)
        self.shards.append(shard)
        return shard

    def _write_run(self) -> None:
        assert self._out is not None
        self._out.write(b"".join(self._run))
        self._run.clear()
        self._run_bytes = 0

    def _finish(self) -> None:
        if self._out is None or self._raw is None:
            return
        self._write_run()
        self._out.write(URLSET_FOOT)
        self.shards[-1].size += len(URLSET_FOOT)
        if self._out is not self._raw:
            self._out.close()
        self._raw.flush()
        os.fsync(self._raw.fileno())
        self._raw.close()
        self._out = self._raw = None
