"""The sitemap a site publishes now, fetched so an audit can hold it against the crawl.

Where it is: the ``Sitemap:`` lines of robots.txt, else ``/sitemap.xml`` and
``/sitemap_index.xml`` (at the root, and under the crawl's prefix when there
is one), or the URL the user gives. An index is followed one level, as the
protocol allows; an index inside an index is reported, not followed.

XML is not read here (the crawler knows nothing of it): the caller hands in a
parser, the CLI's being :func:`sitemap_writer.read_sitemap`. Everything that
goes wrong — unreachable, 404, not XML, over the protocol's limits — becomes a
problem of that file, never an exception: an audit reports a broken sitemap,
it does not die of one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from crawler.audit.names import KEPT
from crawler.http.fetch import Fetcher
from crawler.store.live_sitemap import LiveSitemap, SitemapFile
from crawler.urls.normalize import normalize_url, resolve_link
from crawler.urls.robots import sitemap_lines
from crawler.urls.scope import Scope

# The protocol's limit on a file, uncompressed; the parser reports a file over it.
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
MAX_FILES = 1000  # sitemaps read in one audit: 50 million URLs' worth
MAX_REDIRECTS = 5
SAME_LASTMOD_AT_LEAST = 3
WELL_KNOWN = ("sitemap.xml", "sitemap_index.xml")
REDIRECTS = frozenset({301, 302, 303, 307, 308})


class ParsedSitemap(Protocol):
    kind: str | None  # urlset, sitemapindex, text, rss, atom, or None when unreadable
    entries: list[tuple[str, str | None]]  # (loc, lastmod as written)
    problems: list[str]
    deprecated: dict[str, int]  # tags Google no longer reads, and how often


SitemapParser = Callable[[bytes], ParsedSitemap]


async def read_live_sitemap(fetcher: Fetcher, asked: str, scope: Scope, *,
                            robots_txt: bytes | None, parse: SitemapParser,
                            clean: Callable[[str], str],
                            secret: Callable[[str], bool] | None = None) -> LiveSitemap:
    """Find and read the site's sitemaps; ``asked`` is ``auto`` or a sitemap URL.
    Entries for which ``secret`` holds (they carry a credential) are only counted."""
    reader = _Reader(fetcher, LiveSitemap(asked), parse, clean)
    reader.secret = secret
    live = reader.live
    if asked != "auto":
        live.source = "given"
        await reader.read_tree(asked, scope.origin + "/")
        return live
    robots_url = scope.origin + "/robots.txt"
    named = [url for line in sitemap_lines(robots_txt)
             if (url := resolve_link(robots_url, line)) is not None]
    if named:
        live.source = "robots.txt"
        for url in named:  # robots.txt speaks for its whole host (cross-submission)
            await reader.read_tree(url, scope.origin + "/")
        return live
    live.source = "well-known"
    roots = dict.fromkeys((scope.origin + "/", scope.root))
    for root in roots:
        for name in WELL_KNOWN:
            await reader.read_tree(root + name, root, quiet_404=True)
    if not live.files:
        live.source = "none"
    return live


def _nothing_like_a_sitemap(parsed: ParsedSitemap) -> bool:
    return parsed.kind is None and bool(parsed.problems) and all(
        problem.startswith("not-a-sitemap") for problem in parsed.problems)


class _Reader:
    def __init__(self, fetcher: Fetcher, live: LiveSitemap, parse: SitemapParser,
                 clean: Callable[[str], str]) -> None:
        self.fetcher, self.live, self.parse, self.clean = fetcher, live, parse, clean
        self.read: set[str] = set()
        self.secret: Callable[[str], bool] | None = None

    async def read_tree(self, url: str, authority: str, *, quiet_404: bool = False) -> None:
        """A sitemap and, if it is an index, the sitemaps it names (one level)."""
        top = await self.read_one(url, None, authority, quiet_404=quiet_404)
        if top is None:
            return
        index, children = top
        for child in children:
            if len(self.read) >= MAX_FILES:
                index.problems.append(f"too-many-sitemaps: only the first {MAX_FILES} "
                                      "sitemaps of this audit were read")
                return
            read = await self.read_one(child, index.url, authority)
            if read is not None and read[0].kind == "sitemapindex":
                read[0].problems.append("nested-index: an index inside an index, which the "
                                        "protocol does not allow; not followed")

    async def read_one(self, url: str, parent: str | None, authority: str, *,
                       quiet_404: bool = False) -> tuple[SitemapFile, list[str]] | None:
        """Fetch and parse one sitemap: the file as read, and the sitemaps it names if
        it is an index; ``None`` when there is nothing to read (noted in ``live``)."""
        target = normalize_url(url)
        if target is None:
            file = SitemapFile(url, parent, problems=["invalid-url: not an absolute http(s) "
                                                      "URL"])
            self.live.files.append(file)
            return None
        if target in self.read:
            return None
        self.read.add(target)
        file = SitemapFile(target, parent)
        body = await self._fetch(file)
        if body is None:
            if quiet_404 and file.status in (404, 410) and not file.problems:
                self.live.tried.append(target)  # not there is not a problem of a guess
                return None
            if file.status is not None and not file.problems:
                file.problems.append(f"http-{file.status}: the sitemap answered "
                                     f"HTTP {file.status}")
            self.live.files.append(file)
            return None
        parsed = self.parse(body)
        if quiet_404 and _nothing_like_a_sitemap(parsed):
            # a guessed name answered by the site's "not found" page served with 200, or
            # by a page of its own: no sitemap is there, which is no sitemap's error
            self.live.tried.append(target)
            return None
        self.live.files.append(file)
        file.kind = parsed.kind
        file.problems += parsed.problems
        file.deprecated = dict(parsed.deprecated)
        file.legacy_namespace = parsed.legacy_namespace
        file.entries = len(parsed.entries)
        if parsed.kind == "sitemapindex":
            return file, [link for loc, _lastmod in parsed.entries
                          if (link := resolve_link(target, loc)) is not None]
        if parsed.kind is not None:
            self._take(file, parsed.entries, authority)
        return file, []

    async def _fetch(self, file: SitemapFile) -> bytes | None:
        """The body of a 200 answer, following up to five redirects; else ``None``
        with the status or the problem noted on ``file``."""
        url = file.url
        for _ in range(MAX_REDIRECTS + 1):
            answer = await self.fetcher.fetch(url, want_body=lambda status, _type: status == 200,
                                              max_bytes=MAX_SITEMAP_BYTES + 1)
            file.status = answer.status
            if answer.error is not None:
                file.problems.append(f"{answer.error.value}: the sitemap could not be read")
                return None
            if answer.status not in REDIRECTS:
                return answer.body  # a 200's; None for any other status, named by the caller
            following = resolve_link(url, answer.location or "")
            if following is None:
                break
            url = following
        file.problems.append("redirects: too many redirects, or one to nowhere")
        return None

    def _take(self, file: SitemapFile, entries: list[tuple[str, str | None]],
              authority: str) -> None:
        live, clean = self.live, self.clean
        for loc, lastmod in entries:
            url = normalize_url(loc)
            if url is None:
                live.invalid_count += 1
                if len(live.invalid) < KEPT:
                    live.invalid.append((loc, file.url))
                continue
            url = clean(url)
            if self.secret is not None and self.secret(url):
                live.carrying_secrets += 1
                continue
            if not url.startswith(authority):
                live.outside_count += 1
                if len(live.outside) < KEPT:
                    live.outside.append((url, file.url))
                continue
            if not live.entries.add(url, lastmod, file.url):
                live.repeated += 1
        values = {lastmod for _loc, lastmod in entries}
        if len(entries) >= SAME_LASTMOD_AT_LEAST and len(values) == 1:
            only = values.pop()
            file.same_lastmod = only or None

