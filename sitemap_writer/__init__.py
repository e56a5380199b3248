"""Write Sitemaps 0.9 files: sharded, gzip-compressed, indexed, published atomically;
and read the ones a site already publishes, for audits.

Knows nothing of HTTP or crawling: give it sorted :class:`SitemapEntry` values,
or the bytes of a sitemap someone else fetched.
"""

from sitemap_writer.entry import (
    CHANGEFREQS,
    MAX_IMAGES_PER_URL,
    MAX_LOC_LENGTH,
    MAX_SITEMAP_BYTES,
    MAX_URLS_PER_SITEMAP,
    SitemapEntry,
    Video,
)
from sitemap_writer.errors import InvalidEntry, LimitError, OutputError, SitemapError
from sitemap_writer.existing import published_url_count
from sitemap_writer.index import INDEX_NAME
from sitemap_writer.news import MAX_NEWS_URLS, NEWS_LANGUAGE, NEWS_NAME, NewsEntry
from sitemap_writer.publish import ensure_output_dir, output_lock
from sitemap_writer.reader import ReadSitemap, read_sitemap
from sitemap_writer.robots_txt import with_sitemap_line
from sitemap_writer.shards import smallest_shard_bytes
from sitemap_writer.stylesheet import BUILTIN as BUILTIN_STYLESHEET
from sitemap_writer.writer import (
    WriteResult,
    normalize_base_url,
    write_sitemaps,
    writes_or_prunes,
)

__all__ = [
    "BUILTIN_STYLESHEET",
    "CHANGEFREQS",
    "INDEX_NAME",
    "MAX_IMAGES_PER_URL",
    "MAX_LOC_LENGTH",
    "MAX_NEWS_URLS",
    "MAX_SITEMAP_BYTES",
    "MAX_URLS_PER_SITEMAP",
    "NEWS_LANGUAGE",
    "NEWS_NAME",
    "InvalidEntry",
    "LimitError",
    "NewsEntry",
    "OutputError",
    "ReadSitemap",
    "SitemapEntry",
    "SitemapError",
    "Video",
    "WriteResult",
    "ensure_output_dir",
    "normalize_base_url",
    "output_lock",
    "published_url_count",
    "read_sitemap",
    "smallest_shard_bytes",
    "with_sitemap_line",
    "write_sitemaps",
    "writes_or_prunes",
]
