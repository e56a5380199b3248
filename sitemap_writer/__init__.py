"""Write Sitemaps 0.9 files: sharded, gzip-compressed, indexed, published atomically;
and read the ones a site already publishes, for audits.

Knows nothing of HTTP or crawling: give it sorted :class:`SitemapEntry` values,
or the bytes of a sitemap someone else fetched.

Each name is imported from its module when first asked for (PEP 562), so a
program that needs one constant (the CLI's ``--help`` shows two) does not load
the reader, the publisher and the gzip writer with it.
"""

import importlib as _importlib
import typing as _typing

# name -> (module, name in it)
_EXPORTS = {
    "CHANGEFREQS": ("entry", "CHANGEFREQS"),
    "MAX_IMAGES_PER_URL": ("entry", "MAX_IMAGES_PER_URL"),
    "MAX_LOC_LENGTH": ("entry", "MAX_LOC_LENGTH"),
    "MAX_SITEMAP_BYTES": ("entry", "MAX_SITEMAP_BYTES"),
    "MAX_URLS_PER_SITEMAP": ("entry", "MAX_URLS_PER_SITEMAP"),
    "SitemapEntry": ("entry", "SitemapEntry"),
    "Video": ("entry", "Video"),
    "InvalidEntry": ("errors", "InvalidEntry"),
    "LimitError": ("errors", "LimitError"),
    "OutputError": ("errors", "OutputError"),
    "SitemapError": ("errors", "SitemapError"),
    "published_url_count": ("existing", "published_url_count"),
    "published_url_counts": ("existing", "published_url_counts"),
    "INDEX_NAME": ("index", "INDEX_NAME"),
    "MAX_NEWS_URLS": ("news", "MAX_NEWS_URLS"),
    "NEWS_LANGUAGE": ("news", "NEWS_LANGUAGE"),
    "NEWS_NAME": ("news", "NEWS_NAME"),
    "NewsEntry": ("news", "NewsEntry"),
    "ensure_output_dir": ("publish", "ensure_output_dir"),
    "output_lock": ("publish", "output_lock"),
    "ReadSitemap": ("reader", "ReadSitemap"),
    "read_sitemap": ("reader", "read_sitemap"),
    "with_sitemap_line": ("robots_txt", "with_sitemap_line"),
    "smallest_shard_bytes": ("shards", "smallest_shard_bytes"),
    "BUILTIN_STYLESHEET": ("stylesheet", "BUILTIN"),
    "WriteResult": ("writer", "WriteResult"),
    "normalize_base_url": ("writer", "normalize_base_url"),
    "write_sitemaps": ("writer", "write_sitemaps"),
    "writes_or_prunes": ("writer", "writes_or_prunes"),
    "check_section_name": ("writer", "check_section_name"),
    "is_url_shard": ("writer", "is_url_shard"),
    "shard_section": ("writer", "shard_section"),
}
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
    "check_section_name",
    "ensure_output_dir",
    "is_url_shard",
    "normalize_base_url",
    "output_lock",
    "published_url_count",
    "published_url_counts",
    "read_sitemap",
    "shard_section",
    "smallest_shard_bytes",
    "with_sitemap_line",
    "write_sitemaps",
    "writes_or_prunes",
]


def __getattr__(name: str) -> _typing.Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'sitemap_writer' has no attribute {name!r}") from None
    value = getattr(_importlib.import_module(f"sitemap_writer.{module}"), attribute)
    globals()[name] = value  # asked once
    return value


def __dir__() -> list[str]:
    return __all__


if _typing.TYPE_CHECKING:  # what type checkers and editors see
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
    from sitemap_writer.existing import published_url_count, published_url_counts
    from sitemap_writer.index import INDEX_NAME
    from sitemap_writer.news import MAX_NEWS_URLS, NEWS_LANGUAGE, NEWS_NAME, NewsEntry
    from sitemap_writer.publish import ensure_output_dir, output_lock
    from sitemap_writer.reader import ReadSitemap, read_sitemap
    from sitemap_writer.robots_txt import with_sitemap_line
    from sitemap_writer.shards import smallest_shard_bytes
    from sitemap_writer.stylesheet import BUILTIN as BUILTIN_STYLESHEET
    from sitemap_writer.writer import (
        WriteResult,
        check_section_name,
        is_url_shard,
        normalize_base_url,
        shard_section,
        write_sitemaps,
        writes_or_prunes,
    )
