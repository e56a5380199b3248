"""Crawl one site (scheme, host, port, path prefix) into page records.

Knows nothing of XML: turn the listed records into sitemap entries elsewhere.
The names below are imported when first used, so ``sitemap-crawler --help`` and
the launcher (``crawler.launch``) do not pay for the crawler's imports.
"""

import importlib as _importlib
import typing as _typing

from crawler.__version__ import __version__

if _typing.TYPE_CHECKING:
    from crawler.config import CrawlConfig
    from crawler.engine import crawl
    from crawler.errors import (
        ConfigError,
        CrawlerError,
        ErrorKind,
        NothingIndexable,
        StartUrlError,
    )
    from crawler.records import CrawlResult, CrawlStats, PageRecord, SkippedUrl, Verdict

_WHERE = {
    "CrawlConfig": "crawler.config", "crawl": "crawler.engine",
    "ConfigError": "crawler.errors", "CrawlerError": "crawler.errors",
    "ErrorKind": "crawler.errors", "NothingIndexable": "crawler.errors",
    "StartUrlError": "crawler.errors", "CrawlResult": "crawler.records",
    "CrawlStats": "crawler.records", "PageRecord": "crawler.records",
    "SkippedUrl": "crawler.records", "Verdict": "crawler.records",
}

__all__ = [
    "ConfigError",
    "CrawlConfig",
    "CrawlResult",
    "CrawlStats",
    "CrawlerError",
    "ErrorKind",
    "NothingIndexable",
    "PageRecord",
    "SkippedUrl",
    "StartUrlError",
    "Verdict",
    "__version__",
    "crawl",
]


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'crawler' has no attribute {name!r}")
    return getattr(_importlib.import_module(module), name)
