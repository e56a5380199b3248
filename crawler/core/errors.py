"""Errors of the crawl, and the kinds of failure a single page can have.

Only *setup* failures raise; a page that fails becomes a record carrying an
:class:`ErrorKind`, so one bad page never stops a crawl. The hierarchy is small
on purpose, because the CLI maps each class to one documented exit code::

    CrawlerError                 anything the crawler raises on purpose
    ├── ConfigError              an option is invalid                 (exit 2)
    ├── StorageError             the --state file cannot be written:
    │                            disk full, I/O error                 (exit 4)
    ├── WorkerError              a --workers process died or failed   (exit 1)
    └── StartUrlError            start URL unreachable, out of scope,
        │                        or disallowed by robots.txt          (exit 3)
        └── NothingIndexable     the crawl ran but found no page to
                                 list; the message says why           (exit 3)

Interruptions are not errors of ours: the CLI catches ``KeyboardInterrupt``
and cancellation and exits 130.
"""

from __future__ import annotations

import enum


class CrawlerError(Exception):
    """Base of every error the crawler raises deliberately."""


class ConfigError(CrawlerError, ValueError):
    """An option has a value the crawl cannot run with."""


class StorageError(CrawlerError):
    """The state file could not be written (a full disk, an I/O error)."""


class WorkerError(CrawlerError):
    """A ``--workers`` process died or failed: the crawl cannot be completed."""


class StartUrlError(CrawlerError):
    """The crawl cannot begin: the start URL is not fetchable for us."""


class NothingIndexable(StartUrlError):
    """The crawl ended without a single page that belongs in a sitemap.

    Publishing an empty sitemap would silently de-list a whole site, so this is
    an error and the previous output stays in place.
    """


class ErrorKind(enum.Enum):
    """Why fetching or reading one page failed; the value is shown in reports."""

    TIMEOUT = "timeout"
    CONNECT = "connect-error"
    TLS = "tls-error"  # handshake failed: certificate not trusted, wrong host, old protocol
    PROXY = "proxy-error"  # the proxy from http_proxy/https_proxy refused or failed
    NETWORK = "network-error"
    TOO_LARGE = "too-large"
    DECODING = "decoding-error"
    PROTOCOL = "protocol-error"
    BAD_REDIRECT = "bad-redirect"
    # the page was not read within --max-parse-seconds (or its parser's memory cap)
    PARSE_TIMEOUT = "parse-timeout"
    # the address it resolves to is private, and the start URL's is not
    # (crawler.http.address_rule): never requested
    PRIVATE_ADDRESS = "private-address"
    # reading the page failed in a way nobody foresaw: a bug of ours, kept to that page
    INTERNAL = "internal-error"
