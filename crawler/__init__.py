"""Crawl one site (scheme, host, port, path prefix) into page records.

Knows nothing of XML: turn the listed records into sitemap entries elsewhere.
The names below are imported when first used, so ``sitemap-crawler --help`` and
the launcher (``crawler.cli.launch``) do not pay for the crawler's imports.
"""

import importlib as _importlib
import typing as _typing

from crawler.__version__ import __version__

if _typing.TYPE_CHECKING:
    from crawler.config import CrawlConfig
    from crawler.core.errors import (
        ConfigError,
        CrawlerError,
        ErrorKind,
        NothingIndexable,
        StartUrlError,
    )
    from crawler.core.records import CrawlStats, PageRecord, SkippedUrl, Verdict
    from crawler.engine.coordinator import crawl
    from crawler.engine.result import CrawlResult

_WHERE = {
    "CrawlConfig": "crawler.config", "crawl": "crawler.engine.coordinator",
    "ConfigError": "crawler.core.errors", "CrawlerError": "crawler.core.errors",
    "ErrorKind": "crawler.core.errors", "NothingIndexable": "crawler.core.errors",
    "StartUrlError": "crawler.core.errors", "CrawlResult": "crawler.engine.result",
    "CrawlStats": "crawler.core.records", "PageRecord": "crawler.core.records",
    "SkippedUrl": "crawler.core.records", "Verdict": "crawler.core.records",
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
