"""Errors of the sitemap writer.

::

    SitemapError                 anything the writer refuses or cannot do
    ├── InvalidEntry             a URL or date that must not be published
    ├── LimitError               a protocol limit that cannot be met
    └── OutputError              the output directory cannot be written (exit 4)
"""

from __future__ import annotations


class SitemapError(Exception):
    """Base of the writer's errors."""


class InvalidEntry(SitemapError, ValueError):
    """An entry that would make the sitemap invalid; it is refused, not published."""


class LimitError(SitemapError):
    """A single entry or the whole set cannot fit the protocol's limits."""


class OutputError(SitemapError):
    """The output directory does not exist and cannot be made, or is not writable."""
