"""Crawl one site (scheme, host, port, path prefix) into page records.

Knows nothing of XML: turn the listed records into sitemap entries elsewhere.
"""

from crawler.__version__ import __version__
from crawler.config import CrawlConfig
from crawler.engine import crawl
from crawler.errors import ConfigError, CrawlerError, ErrorKind, NothingIndexable, StartUrlError
from crawler.records import CrawlResult, CrawlStats, PageRecord, SkippedUrl, Verdict

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
