"""The sitemap index: one ``<sitemap>`` per shard — pure."""

from __future__ import annotations

from collections.abc import Sequence

from sitemap_writer.entry import MAX_SITEMAP_BYTES, MAX_SITEMAPS_PER_INDEX
from sitemap_writer.errors import LimitError
from sitemap_writer.serialize import INDEX_FOOT, index_head, sitemap_element
from sitemap_writer.shards import Shard

INDEX_NAME = "sitemap_index.xml"


def index_bytes(shards: Sequence[Shard], base_url: str, stylesheet: str | None = None) -> bytes:
    """The index document; each ``<lastmod>`` is the newest lastmod in that shard."""
    if len(shards) > MAX_SITEMAPS_PER_INDEX:
        raise LimitError(f"{len(shards)} shards exceed the index limit of 50,000 sitemaps")
    body = b"".join(sitemap_element(base_url + shard.name, shard.newest) for shard in shards)
    document = index_head(stylesheet) + body + INDEX_FOOT
    if len(document) > MAX_SITEMAP_BYTES:
        raise LimitError("the sitemap index would exceed 52,428,800 bytes")
    return document
