"""From an HTTP answer to a :class:`PageRecord` and the URLs it leads to — pure.

This is where "is this page indexable?" is decided:
final status 200, an HTML content type, no error, not noindex, no meta
refresh away, and a canonical that is absent or the page's own URL.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from crawler.core.dates import trusted_lastmod
from crawler.core.errors import ErrorKind
from crawler.core.records import PageRecord, Verdict
from crawler.core.response import Response
from crawler.page.custom_extract import Rule
from crawler.page.decode import html_source
from crawler.page.extract import extract
from crawler.page.link_headers import alternates_from_link_headers, canonical_from_link_headers
from crawler.page.soft_404 import ProbeAnswer
from crawler.urls.normalize import resolve_link
from crawler.urls.robots import header_directives

# --render auto's answer for a page its rule does not render (crawler.page.client_rendered)
NO_SIGNS = "no sign of client-side rendering in the raw HTML"
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# hreflang alternates a page may keep: more than any site has languages and regions
# to offer, and a page declaring 5,000 (300 of them cost 878 MB) is cut here.
MAX_ALTERNATES = 300
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


def mime_type(content_type: str | None) -> str:
    return (content_type or "").partition(";")[0].strip().lower()


def wants_body(status: int, content_type: str | None) -> bool:
    """Only 200 HTML answers are worth downloading."""
    return status == 200 and mime_type(content_type) in HTML_TYPES


@dataclass(slots=True)
class PageOutcome:
    """A record plus where the crawl may go next from it."""

    record: PageRecord
    links: list[str] = field(default_factory=list)
    # redirect, refresh or canonical targets: same depth as the page
    siblings: list[str] = field(default_factory=list)
    # for the incremental state: validators and content fingerprint
    etag: str | None = None
    last_modified: str | None = None
    content_hash: bytes | None = None
    anchors: dict[str, str] = field(default_factory=dict)  # link -> anchor text (audits)
    # --links: (target, anchor text, rel values) of each a/area link, nofollow ones too
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    # Where ``links`` must be every link (the state stores them, an audit counts who
    # links where): those not handed over by this page's reader before, the ones the
    # crawl judges. None: ``links`` are those already.
    fresh: list[str] | None = None
    # links on the page leaving the crawl's scope, counted where ``links`` is cut to
    # the ones not handed over before (a plain crawl); None: count ``links``
    links_out: int | None = None


def targets(record: PageRecord) -> list[str]:
    """Where a page points besides its links: redirect, refresh, differing canonical."""
    found = [url for url in (record.redirect_to, record.refresh_to) if url is not None]
    if record.canonical is not None and record.canonical != record.url:
        found.append(record.canonical)
    return found


def judge(record: PageRecord, documents: frozenset[str] = frozenset()) -> Verdict:
    """Is this page listed in the sitemap, and if not, why? ``documents``: the
    content types (``--documents``) listed like pages."""
    if record.error is not None:
        return Verdict.ERROR
    if record.status in REDIRECT_STATUSES:
        return Verdict.REDIRECT
    if record.status != 200:
        return Verdict.NOT_OK
    mime = mime_type(record.content_type)
    if mime not in HTML_TYPES and mime not in documents:
        return Verdict.NOT_HTML
    if record.refresh_to is not None:
        return Verdict.REFRESH
    if record.noindex:
        return Verdict.NOINDEX
    if record.canonical is not None and record.canonical != record.url:
        return Verdict.CANONICALISED
    if record.soft_404 is not None:
        return Verdict.SOFT_404
    return Verdict.LISTED


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What reading a page keeps beyond its verdict: built once a crawl, from its
    configuration (``PageFetcher``), the same for every page."""

    # CSS selectors whose content the fingerprint ignores; None: no fingerprint
    fingerprint_ignoring: tuple[str, ...] | None = None
    # --strip-param: respells redirect, refresh and canonical targets before the page
    # is judged, so ?utm_source= on a canonical does not make a page look canonicalised
    clean: Callable[[str], str] | None = None
    images: bool = False
    documents: frozenset[str] = frozenset()  # --documents: content types listed like pages
    anchors: bool = False  # an audit: anchor texts and what the page says of itself
    # keep the declared alternates (up to MAX_ALTERNATES, the rest counted)
    hreflang: bool = True
    # --render: the page says whether it would be rendered and why (record.render_why);
    # the rendering itself is the caller's
    render: str = "never"
    fragments: bool = False  # --check-fragments
    extractions: tuple[Rule, ...] = ()  # --extract
    edges: bool = False  # --links
    news: bool = False
    videos: bool = False
    # soft 404s: the answers probes got (crawler.engine.soft_404); None: not judged
    soft_404: tuple[ProbeAnswer, ...] | None = None


PLAIN = ReadOptions()


def read_page(response: Response, depth: int, token: str, now: datetime,
              options: ReadOptions = PLAIN) -> PageOutcome:
    """Turn one fetched URL into its record and onward URLs."""
    url = response.url
    record = PageRecord(
        url=url,
        depth=depth,
        status=response.status,
        content_type=response.content_type,
        error=response.error,
        elapsed=response.elapsed,
        attempts=response.attempts,
        detail=response.detail,
    )
    outcome = PageOutcome(record, etag=response.etag, last_modified=response.last_modified)
    record.bytes = len(response.body) if response.body is not None else response.length
    if response.error is None and response.status is not None:
        header = header_directives(response.x_robots_tag, token)
        record.noindex, record.nofollow = header.noindex, header.nofollow
        record.lastmod = trusted_lastmod(response.last_modified, now)
        if response.status in REDIRECT_STATUSES:
            location = (response.location or "").strip()
            target = resolve_link(url, location) if location else None
            if target is None:
                record.error = ErrorKind.BAD_REDIRECT
            else:
                record.redirect_to = target
        elif response.body is not None:
            _read_html(response, token, outcome, options)
        elif mime_type(response.content_type) in options.documents:
            # a PDF can name its canonical only in a header (Google reads it there)
            record.canonical = canonical_from_link_headers(response.link, url)
    clean = options.clean
    if clean is not None:
        for name in ("redirect_to", "refresh_to", "canonical"):
            value = getattr(record, name)
            if value is not None:
                setattr(record, name, clean(value))
        record.alternates = tuple((code, clean(url)) for code, url in record.alternates)
        record.fragment_links = tuple((clean(url), fragment)
                                      for url, fragment in record.fragment_links)
    record.verdict = judge(record, options.documents)
    outcome.siblings = targets(record)
    return outcome


def unread_page(response: Response, depth: int, error: ErrorKind, detail: str) -> PageOutcome:
    """The record of a page whose body could not be read: what its answer's status
    and headers say (X-Robots-Tag, Last-Modified, size), an error, and no links."""
    headers_only = replace(response, body=None)
    outcome = read_page(headers_only, depth, "", datetime.now(UTC))
    record = outcome.record
    record.bytes = len(response.body) if response.body is not None else response.length
    record.error, record.detail, record.verdict = error, detail, Verdict.ERROR
    outcome.siblings = []
    return outcome


def failed_page(response: Response, depth: int, exc: Exception) -> PageOutcome:
    """The record of a page whose reading raised: an error of that page only."""
    record = PageRecord(url=response.url, depth=depth, status=response.status,
                        content_type=response.content_type, error=ErrorKind.INTERNAL,
                        elapsed=response.elapsed, attempts=response.attempts,
                        detail=f"{type(exc).__name__}: {exc}"[:300])
    return PageOutcome(record)


def duplicate_key(html: str | bytes, fingerprint: bytes | None, shell: bool) -> bytes | None:
    """What two pages must share to be one page at two URLs (listed once by default).

    The content fingerprint when the crawl makes one (audits, --state): the same
    text and links, whatever scripts or tokens differ; otherwise the body's own
    bytes, hashed. A single-page app's shell (no link and no text of its own) gets
    none: it is the same at every URL until a browser runs it, and is no duplicate
    of anything (a rendered page is judged by its DOM: crawler.page.rendered). A
    page without a link that does show text (terms, a landing page) is a page.

    Every page's body is hashed, so the hash is SHA-256 (cut to 16 bytes), which
    most processors of the last years compute in hardware: 12 µs for a 20 KB page
    where BLAKE2b took 49 on this project's machine, a tenth of the parse child's
    CPU (one without SHA instructions is slower at it than at BLAKE2b). The key lives for one
    run only (the record store), so nothing kept is hashed another way."""
    if shell:
        return None
    if fingerprint is not None:
        return fingerprint
    data = html.encode("utf-8", "surrogatepass") if isinstance(html, str) else html
    return hashlib.sha256(data).digest()[:16]


def _read_html(response: Response, token: str, outcome: PageOutcome,
               options: ReadOptions) -> None:
    record = outcome.record
    html = html_source(response.body or b"", response.content_type)
    render, fragments = options.render, options.fragments
    facts = extract(html, record.url, token, fingerprint_ignoring=options.fingerprint_ignoring,
                    images=options.images, anchors=options.anchors,
                    client_rendering=render == "auto", fragments=fragments,
                    extractions=options.extractions, structured=options.anchors,
                    edges=options.edges, news=options.news, videos=options.videos,
                    soft_404=options.soft_404)
    outcome.edges = facts.edges
    if facts.page is not None:
        record.description, record.h1 = facts.page.description, facts.page.h1
        record.h1_count, record.word_count = facts.page.h1_count, facts.page.word_count
        record.template = facts.page.outline
    record.extracted = facts.extracted
    record.published, record.headline = facts.published, facts.headline
    if options.videos:
        record.videos, record.video_problems = tuple(facts.videos), tuple(facts.video_problems)
    if facts.structured is not None:
        record.structured_types = facts.structured.types
        record.structured_errors = facts.structured.errors
    if fragments:
        record.fragment_links = tuple(dict.fromkeys(facts.fragment_links))
        record.anchor_ids = tuple(facts.ids)
    if render == "always":
        record.render_why = "--render always"
    elif render == "auto":
        record.render_why = facts.client_rendered or NO_SIGNS
    record.title = facts.title
    record.soft_404 = facts.soft_404
    record.fingerprint = facts.content_hash
    outcome.anchors = facts.anchors
    if options.hreflang:
        declared = tuple(dict.fromkeys(
            (code, url) for code, url in facts.alternates
            + alternates_from_link_headers(response.link, record.url) if url is not None))
        record.alternates = declared[:MAX_ALTERNATES]
        record.alternates_dropped = len(declared) - len(record.alternates)
    if options.images:
        record.images = tuple(facts.images)
    outcome.content_hash = facts.content_hash
    record.noindex = record.noindex or facts.directives.noindex
    record.nofollow = record.nofollow or facts.directives.nofollow
    record.canonical = facts.canonical or canonical_from_link_headers(response.link, record.url)
    record.refresh_to = facts.refresh_to
    record.links_found = len(facts.links)
    record.duplicate_key = duplicate_key(html, facts.content_hash, facts.shell)
    if not record.nofollow:
        outcome.links = facts.links
