"""What a site's live sitemaps were found to list: kept for the audit's comparison.

The reading is the audit's (``crawler.audit.live_sitemap``); this is the data
it leaves, which the crawl (its orphan phase) and the report read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from crawler.store.live_entries import LiveEntries


@dataclass(slots=True)
class SitemapFile:
    """One file read: where it was named, what it answered and what it held."""

    url: str
    parent: str | None = None  # the index that named it
    status: int | None = None
    kind: str | None = None
    entries: int = 0
    problems: list[str] = field(default_factory=list)
    # image and video tags Google no longer reads, and how often (sitemap_writer.reader)
    deprecated: dict[str, int] = field(default_factory=dict)
    legacy_namespace: str | None = None  # Google's 0.84 namespace, read but to replace
    # every entry (SAME_LASTMOD_AT_LEAST or more) carries this one lastmod: a build date
    same_lastmod: str | None = None


@dataclass(slots=True)
class LiveSitemap:
    """Every URL the live sitemaps list (normalised, as the crawl spells URLs), with
    its lastmod as written and the file naming it."""

    asked: str  # "auto" or the URL given
    source: str = "none"  # robots.txt, well-known, given or none
    files: list[SitemapFile] = field(default_factory=list)
    entries: LiveEntries = field(default_factory=LiveEntries)  # on disk past a threshold
    invalid: list[tuple[str, str]] = field(default_factory=list)  # (loc, sitemap)
    invalid_count: int = 0
    # listed by a sitemap that may not speak for them (another host): (url, sitemap)
    outside: list[tuple[str, str]] = field(default_factory=list)
    outside_count: int = 0
    repeated: int = 0  # entries listed a second time
    outside_crawl: int = 0  # entries outside the crawl's scope (--prefix): not compared
    tried: list[str] = field(default_factory=list)  # well-known URLs that held nothing
    # in-scope entries no link reached: filled in by the crawl, which fetches them
    # (the first --max-orphans of them; the rest are counted)
    orphans: list[str] = field(default_factory=list)
    orphans_unchecked: int = 0
    lastmods_unlisted: int = 0  # wrong lastmods past the KEPT the report names
    carrying_secrets: int = 0  # entries holding a credential given for the crawl: dropped

    @property
    def readable(self) -> bool:
        """At least one file of URLs was read: "not in the sitemap" means something."""
        return any(file.kind in ("urlset", "text") for file in self.files)
