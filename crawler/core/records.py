"""What a crawl produces — data only, so the writer and the report can trust it.

A :class:`PageRecord` keeps just what the sitemap and the report need (never a
body), which is what keeps memory flat on large sites.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime

from crawler.core.errors import ErrorKind


class Verdict(enum.Enum):
    """Whether a URL is in the sitemap, and if not, why. Values appear in reports."""

    LISTED = "listed"
    # fetched, but not listed
    NOT_OK = "status-not-200"
    REDIRECT = "redirect"
    REDIRECT_LOOP = "redirect-loop"
    REFRESH = "meta-refresh"
    NOT_HTML = "not-html"
    NOINDEX = "noindex"
    CANONICALISED = "canonical-elsewhere"
    NO_LIST = "no-list"  # indexable, but --no-list keeps it out
    DUPLICATE = "duplicate-of"  # --drop-duplicates: another page has the same content
    ORPHAN = "orphan"  # indexable, in the live sitemap, but no link reaches it
    ERROR = "error"
    # never fetched
    OUT_OF_SCOPE = "out-of-scope"
    OTHER_HOST = "other-host-same-site"
    EXTERNAL = "external"
    DISALLOWED = "robots-disallowed"
    MAX_DEPTH = "max-depth"
    MAX_PAGES = "max-pages"
    URL_TOO_LONG = "url-too-long"
    REPEATED_SEGMENT = "repeated-path-segment"
    QUERY_VARIANTS = "too-many-query-variants"
    REDIRECT_LIMIT = "redirect-chain-too-long"
    EXCLUDED = "excluded"  # --exclude
    NOT_INCLUDED = "not-included"  # --include given, and it does not match
    SECRET_IN_URL = "secret-in-url"  # it carries a credential given for the crawl
    SOFT_404 = "soft-404"  # answers 200, but is a "not found" page (crawler.page.soft_404)


@dataclass(slots=True)
class PageRecord:
    """One fetched URL and what was learnt from it."""

    url: str
    depth: int
    status: int | None = None
    content_type: str | None = None
    lastmod: datetime | None = None
    error: ErrorKind | None = None
    redirect_to: str | None = None
    refresh_to: str | None = None
    canonical: str | None = None
    noindex: bool = False
    nofollow: bool = False
    links_found: int = 0
    elapsed: float = 0.0
    attempts: int = 1
    verdict: Verdict = Verdict.ERROR
    # what went wrong, for an INTERNAL error: the only free text a record carries
    detail: str | None = None
    # language versions the page declares (hreflang code as written, URL)
    alternates: tuple[tuple[str, str], ...] = ()
    # its images (with --images; None: not looked for)
    images: tuple[str, ...] | None = None
    # median seconds between the content changes the state has seen (two or more)
    change_interval: float | None = None
    title: str | None = None
    bytes: int | None = None  # the body's size (decoded), or Content-Length when unread
    fingerprint: bytes | None = None  # of the meaningful content, when computed
    duplicate_of: str | None = None  # a duplicate's kept page, listed instead of it
    # what makes two pages duplicates (crawler.page.read.duplicate_key): the content
    # fingerprint where one is made, else a hash of the body; a rendered page's is its
    # DOM's. None for a page with no link (an app's shell: the same at every URL)
    duplicate_key: bytes | None = None
    # its Last-Modified header, when a live sitemap's lastmod is held against it
    last_modified: datetime | None = None
    # hreflang alternates declared past the cap a page may keep (crawler.page.read)
    alternates_dropped: int = 0
    # --render: why the page was (or was not) rendered; None when rendering is off
    render_why: str | None = None
    rendered: bool = False
    raw_links: int | None = None  # links in the raw HTML, when rendered (links_found: after)
    # what rendering changed or met: ("links-added", n, first…), ("change", what, raw,
    # rendered), ("js-error", message), ("robots-blocked", type, url), ("timeout", why), …
    render_notes: tuple[tuple[str, ...], ...] = ()
    # --check-fragments: its links into an anchor (URL, fragment), and its own anchors
    fragment_links: tuple[tuple[str, str], ...] = ()
    anchor_ids: tuple[str, ...] | None = None
    # audits: what the page says of itself (crawler.page.page_facts), and --extract's values
    description: str | None = None  # its meta description, whitespace collapsed
    h1: str | None = None  # the first <h1>'s text
    h1_count: int = 0
    word_count: int | None = None  # words of visible text in its body
    template: str | None = None  # its body's tag outline, hashed (crawler.page.page_facts)
    extracted: tuple[tuple[str, object], ...] = ()
    # audits: the types its structured data declares (schema.org names, og:TYPE) and
    # what is wrong with it (crawler.page.structured_data)
    structured_types: tuple[str, ...] = ()
    structured_errors: tuple[str, ...] = ()
    # --news: when the article was published (UTC) and its headline
    # (crawler.page.news_video); --videos: its complete videos as tuples of
    # crawler.page.news_video.VIDEO_FIELDS, and what the incomplete ones lack (None:
    # not looked for)
    published: datetime | None = None
    headline: str | None = None
    videos: tuple[tuple[object, ...], ...] | None = None
    video_problems: tuple[str, ...] = ()
    # why this 200 page is a "not found" page (crawler.page.soft_404), if it is one
    soft_404: str | None = None
    # with --state, what this run saw change since the last (never stored): its content;
    # and a Last-Modified that moved while the content did not ("restamped"), or that
    # stayed while it changed ("stale"), with the header before and now
    content_changed: bool | None = None  # None: not known (no earlier fetch to hold it to)
    lastmod_note: tuple[str, str, str] | None = None


# The columns of a report's rows (crawler.audit.report), in CSV order; an --extract NAME
# may not be one of them.
REPORT_COLUMNS = ("url", "status", "content_type", "bytes", "response_ms", "depth", "title",
                  "canonical", "noindex", "nofollow", "target", "redirect_chain", "listed",
                  "reason", "error", "lastmod", "linked_from", "found_on", "anchor",
                  "in_live_sitemap", "orphan", "findings", "hreflang_dropped", "rendered",
                  "render_reason", "raw_links", "rendered_links", "description", "h1",
                  "h1_count", "word_count", "structured_data")


@dataclass(slots=True, frozen=True)
class SkippedUrl:
    """A URL the crawl saw but deliberately did not request."""

    url: str
    depth: int
    reason: Verdict


@dataclass(slots=True)
class CrawlStats:
    """Running counters, owned by the coordinator and shown by the progress display."""

    started: float = 0.0
    fetched: int = 0
    not_modified: int = 0
    queued: int = 0
    in_flight: int = 0
    listed: int = 0
    errors: int = 0
    internal_errors: int = 0  # of those, faults of ours nobody foresaw (internal-error)
    videos_left_out: int = 0  # --videos: incomplete videos, not written
    skipped: int = 0
    # URLs not fetched, by reason (a Verdict's value): what the summary's "skipped" is
    skipped_by: dict[str, int] = field(default_factory=dict)
