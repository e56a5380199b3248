"""The probes a crawl asks before its pages, to know what "not found" looks like here.

A site answering 200 at any URL shows its "not found" page there; a site that
redirects unknown URLs to its home page hides them all behind it. Before the
first page, the crawl asks a few URLs made up to exist nowhere (a random name,
with and without ``.html``) in the site's root directory and in the start URL's:
:data:`PROBE_BUDGET` requests at most. Then, as the crawl goes, one in each
directory it fetches pages in, for the first :data:`DIRECTORY_BUDGET`
(:class:`DirectoryProbes`): 20 requests a site at most, all through the same
fetcher, rate and robots rules as every page. What each answered is kept for the
report (the probes are named there), and the 200 answers become the pages others
are compared with (crawler.page.soft_404). A 404 or 410 is a site that says "not found" as it
should.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import anyio
from selectolax.lexbor import LexborHTMLParser

from crawler.engine.result import CrawlResult
from crawler.http.fetch import Fetcher
from crawler.page.decode import html_source
from crawler.page.extract import has_own_text, page_title
from crawler.page.read import HTML_TYPES, mime_type
from crawler.page.soft_404 import ProbeAnswer, sketch_of
from crawler.urls.normalize import origin_of, path_of, resolve_link
from crawler.urls.robots import RobotsPolicy
from crawler.urls.scope import Scope

PROBE_BUDGET = 4  # before the first page
DIRECTORY_BUDGET = 16  # as the crawl goes: one in each of this many more directories
DIRECTORY_DEPTH = 2  # levels below the root a probe's directory is cut to
SETTLED_FOLDERS = 10_000  # folders whose answer is looked up without a parse
PROBE_PREFIX = "sitemap-crawler-probe-"
REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True, slots=True)
class ProbeSite:
    """Where the probes go, and the rules they keep."""

    fetcher: Fetcher
    scope: Scope
    policy: RobotsPolicy
    home: str  # the site's home page: where a catch-all redirect sends unknown URLs
    token: str  # the made-up name every probe of the crawl asks for


def probe_urls(scope: Scope, start: str, token: str) -> list[str]:
    """The made-up URLs: a random name with and without ``.html``, in the scope's root
    directory and in the start URL's, :data:`PROBE_BUDGET` at most."""
    urls = [f"{directory}{token}{ending}" for directory in start_directories(scope, start)
            for ending in ("", ".html") if scope.contains(f"{directory}{token}{ending}")]
    return urls[:PROBE_BUDGET]


def start_directories(scope: Scope, start: str) -> list[str]:
    return list(dict.fromkeys([scope.root[: scope.root.rfind("/") + 1] or scope.origin + "/",
                               probe_directory(start)]))


def new_token() -> str:
    return PROBE_PREFIX + secrets.token_hex(8)


async def probe(site: ProbeSite, result: CrawlResult) -> tuple[ProbeAnswer, ...]:
    """Ask the probes; keep what each answered in ``result.soft_404_probes`` and return
    the pages the 200 answers showed (an app's shell aside)."""
    answers = [await ask(site, url, result)
               for url in probe_urls(site.scope, result.start_url, site.token)]
    return tuple(answer for answer in answers if answer is not None)


async def ask(site: ProbeSite, url: str, result: CrawlResult) -> ProbeAnswer | None:
    """One probe, asked as a page is (robots.txt permitting) and kept for the report:
    the page it showed, if it answered 200 with one."""
    if not site.policy.allows(url):
        result.soft_404_probes.append({"url": url, "status": None,
                                       "answer": "not asked: robots.txt disallows it"})
        return None
    response = await site.fetcher.fetch(
        url, want_body=lambda status, kind: status == 200 and mime_type(kind) in HTML_TYPES)
    seen: dict[str, object] = {"url": url, "status": response.status}
    answer = None
    if response.status in REDIRECTS:
        target = resolve_link(url, response.location or "")
        seen["redirect_to"] = target
        if target is not None and target.rstrip("/") in (site.home.rstrip("/"),
                                                         result.start_url.rstrip("/")):
            result.catch_all_home = target
            seen["answer"] = "redirects to the home page"
    elif response.status == 200 and response.body is not None:
        answer = _answer_page(url, response.body, response.content_type)
        seen["answer"] = "an app's shell" if answer is None else "a page, compared"
    else:
        seen["answer"] = "not found, as it should" if response.status in (404, 410) \
            else "other"
    result.soft_404_probes.append(seen)
    return answer


def probe_directory(url: str) -> str:
    """The directory a page's probe is asked in: the page's own, cut to
    :data:`DIRECTORY_DEPTH` levels below the root (a site's "not found" templates
    belong to its sections, not to every dated folder of a blog)."""
    path = path_of(url)
    names = [name for name in path[: path.rfind("/")].split("/") if name]
    return origin_of(url) + "/" + "".join(name + "/" for name in names[:DIRECTORY_DEPTH])


def probe_ending(url: str) -> str:
    """The extension a page's URL ends with (``.html``, ``.php``), for its directory's
    probe: a site may answer unknown names with and without one differently."""
    name = path_of(url).rpartition("/")[2]
    dot = name.rfind(".")
    ending = name[dot:] if dot > 0 else ""
    return ending if 1 < len(ending) <= 6 and ending[1:].isalnum() else ""


class DirectoryProbes:
    """One probe in each directory the crawl fetches pages in, for the first
    :data:`DIRECTORY_BUDGET` of them: a section with a "not found" template of its
    own (a shop's, a wiki's) answers unknown URLs there with a page the root's probes
    never saw. It is asked as the first page of its directory is fetched, and the
    pages fetched there are read with its answer (``Job.probe``), in whichever process
    reads them; a page whose fetch began while it was asked waits for it."""

    def __init__(self, site: ProbeSite, result: CrawlResult) -> None:
        self.site, self.result = site, result
        # the start-up probes' directories: their answers are in every reader already
        self._answers: dict[str, ProbeAnswer | None] = dict.fromkeys(
            start_directories(site.scope, result.start_url))
        self._asking: dict[str, anyio.Event] = {}
        self._left = DIRECTORY_BUDGET
        # a URL up to its last "/" -> its directory's answer, once settled: every page
        # asks, and this is a slice and a lookup where the directory is a parse and an
        # await (2 to 3 µs a page); bounded, for sites with a folder a page
        self.settled: dict[str, ProbeAnswer | None] = {}

    @staticmethod
    def folder_of(url: str) -> str:
        """``url`` up to its last ``/``: URLs that share it share their directory (a
        ``/`` in the query only makes the key longer)."""
        return url[: url.rfind("/") + 1]

    async def answer_for(self, url: str) -> ProbeAnswer | None:
        """What an unknown URL in ``url``'s directory showed, if a page (asked first
        if this is the directory's first page and the budget allows)."""
        answer = await self._answer_for(url)
        if len(self.settled) < SETTLED_FOLDERS:
            self.settled[self.folder_of(url)] = answer
        return answer

    async def _answer_for(self, url: str) -> ProbeAnswer | None:
        directory = probe_directory(url)
        answers = self._answers
        if directory in answers:
            return answers[directory]
        asking = self._asking.get(directory)
        if asking is not None:
            await asking.wait()
            return answers.get(directory)
        if self._left <= 0:
            return None
        self._left -= 1
        asking = self._asking[directory] = anyio.Event()
        probe_url = f"{directory}{self.site.token}{probe_ending(url)}"
        try:
            answers[directory] = (await ask(self.site, probe_url, self.result)
                                  if self.site.scope.contains(probe_url) else None)
        finally:
            answers.setdefault(directory, None)
            asking.set()
            del self._asking[directory]
        return answers[directory]


def _answer_page(url: str, body: bytes, content_type: str | None) -> ProbeAnswer | None:
    html = html_source(body, content_type)
    tree = LexborHTMLParser(html)
    if not tree.css_first("a[href]") and not has_own_text(tree):
        return None  # an app's shell: the same at every URL until a browser runs it
    title = page_title(tree, large=True)  # as the pages' own are read
    return ProbeAnswer(url, title, len(html), sketch_of(tree))
