"""The probes a crawl asks before its pages, to know what "not found" looks like here.

A site answering 200 at any URL shows its "not found" page there; a site that
redirects unknown URLs to its home page hides them all behind it. Before the
first page, the crawl asks a few URLs made up to exist nowhere (a random name,
with and without ``.html``) in the site's root directory and in the start URL's:
:data:`PROBE_BUDGET` requests at most, through the same fetcher, rate and robots
rules as every page. What each answered is kept for the report (the probes are
named there), and the 200 answers become the pages others are compared with
(crawler.page.soft_404). A 404 or 410 is a site that says "not found" as it
should.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

from crawler.config import CrawlConfig
from crawler.engine.result import CrawlResult
from crawler.http.fetch import Fetcher
from crawler.page.decode import html_source
from crawler.page.extract import has_own_text, page_title
from crawler.page.read import HTML_TYPES, mime_type
from crawler.page.soft_404 import ProbeAnswer, sketch_of
from crawler.urls.normalize import resolve_link
from crawler.urls.robots import RobotsPolicy
from crawler.urls.scope import Scope

PROBE_BUDGET = 4
PROBE_PREFIX = "sitemap-crawler-probe-"
REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True, slots=True)
class ProbeSite:
    """Where the probes go, and the rules they keep."""

    fetcher: Fetcher
    scope: Scope
    policy: RobotsPolicy
    home: str  # the site's home page: where a catch-all redirect sends unknown URLs


def probe_urls(scope: Scope, start: str) -> list[str]:
    """The made-up URLs: a random name with and without ``.html``, in the scope's root
    directory and in the start URL's, :data:`PROBE_BUDGET` at most."""
    token = PROBE_PREFIX + secrets.token_hex(8)
    directories = dict.fromkeys([scope.root[: scope.root.rfind("/") + 1] or scope.origin + "/",
                                 start[: start.rfind("/") + 1]])
    urls = [f"{directory}{token}{ending}" for directory in directories
            for ending in ("", ".html") if scope.contains(f"{directory}{token}{ending}")]
    return urls[:PROBE_BUDGET]


async def probe(site: ProbeSite, config: CrawlConfig, result: CrawlResult
                ) -> tuple[ProbeAnswer, ...]:
    """Ask the probes; keep what each answered in ``result.soft_404_probes`` and return
    the pages the 200 answers showed (an app's shell aside)."""
    answers: list[ProbeAnswer] = []
    for url in probe_urls(site.scope, result.start_url):
        if not site.policy.allows(url):
            result.soft_404_probes.append({"url": url, "status": None,
                                           "answer": "not asked: robots.txt disallows it"})
            continue
        response = await site.fetcher.fetch(
            url, want_body=lambda status, kind: status == 200 and mime_type(kind) in HTML_TYPES)
        seen = {"url": url, "status": response.status}
        if response.status in REDIRECTS:
            target = resolve_link(url, response.location or "")
            seen["redirect_to"] = target
            if target is not None and target.rstrip("/") in (site.home.rstrip("/"),
                                                             result.start_url.rstrip("/")):
                result.catch_all_home = target
                seen["answer"] = "redirects to the home page"
        elif response.status == 200 and response.body is not None:
            answer = _answer_page(url, response.body, response.content_type)
            seen["answer"] = "an app's shell" if answer is None else "a page (compared)"
            if answer is not None:
                answers.append(answer)
        else:
            seen["answer"] = "not found, as it should" if response.status in (404, 410) \
                else "other"
        result.soft_404_probes.append(seen)
    return tuple(answers)


def _answer_page(url: str, body: bytes, content_type: str | None) -> ProbeAnswer | None:
    html = html_source(body, content_type)
    tree = LexborHTMLParser(html)
    if not tree.css_first("a[href]") and not has_own_text(tree):
        return None  # an app's shell: the same at every URL until a browser runs it
    title = page_title(tree, large=True)  # as the pages' own are read
    return ProbeAnswer(url, title, len(html), sketch_of(tree))
