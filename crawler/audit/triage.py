"""What to fix first: each finding's severity, why it matters and how to fix it — pure.

One table for every format (JSON keys, HTML, Markdown, JUnit, the terminal), so
a finding never says one thing in the report and another in CI. Severities
follow what a search engine does with the problem:

* ``error``: a visitor or a search engine meets a dead end, or the sitemap says
  something that is not true; fix these first;
* ``warning``: signals that contradict each other or waste crawl budget;
* ``notice``: opportunities; worth doing, nothing is broken.

Within a severity, findings are ordered by reach: how many pages (for a link,
how many links on pages) the finding touches.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from crawler.audit.item import FindingItem
from crawler.audit.names import CHANGE_FINDINGS, FINDINGS

SEVERITIES = ("error", "warning", "notice")


@dataclass(frozen=True, slots=True)
class Triage:
    """How a person should weigh one finding."""

    title: str  # a few words a person reads ("Broken links")
    severity: str  # one of SEVERITIES
    why: str  # one line: what it costs the site
    how: str  # one line: what to change


TRIAGE: dict[str, Triage] = {
    "broken-links": Triage(
        "Broken links", "error",
        "Visitors and search engines following these links reach an error page; the "
        "pages they point to cannot be indexed.",
        "Correct or remove each link on the pages named (found on), or restore the "
        "missing page, or redirect it to its replacement."),
    "broken-external-links": Triage(
        "Broken external links", "error",
        "Links to other sites that answer with an error or not at all: a dead end "
        "for readers and a sign of a neglected page.",
        "Update each link to the page's new address, or remove it."),
    "non-indexable-in-sitemap": Triage(
        "Non-indexable URLs in the sitemap", "error",
        "The sitemap lists URLs that redirect, fail, are noindex or canonicalised "
        "elsewhere; search engines report them as sitemap errors and trust the "
        "sitemap less.",
        "List only final, indexable, canonical URLs (this tool's own sitemap does)."),
    "sitemap-errors": Triage(
        "Sitemap errors", "error",
        "A sitemap that cannot be fetched or read is ignored whole by search engines.",
        "Serve every sitemap with status 200 and valid XML, within 50,000 URLs and "
        "50 MiB."),
    "canonical-problems": Triage(
        "Canonical problems", "error",
        "A canonical link naming a page that redirects, fails, is noindex or points "
        "on again is ignored, so search engines pick the canonical themselves.",
        "Point each rel=canonical at the final, indexable URL of the page."),
    "titles": Triage(
        "Missing, empty or shared titles", "warning",
        "The title is the headline of a search result; a missing or shared one makes "
        "results vague and pages compete with each other.",
        "Give each page a <title> of its own that says what the page is about."),
    "redirected-links": Triage(
        "Links through redirects", "warning",
        "Each link through a redirect costs visitors a round trip and search "
        "engines a request of their crawl budget.",
        "Link to the final URL shown (use instead) on the pages named."),
    "noindex-linked": Triage(
        "Links to noindex pages", "warning",
        "Internal links lead to pages kept out of the index: either the link or the "
        "noindex is a mistake.",
        "Remove the noindex if the page should be found, otherwise stop linking it."),
    "duplicates": Triage(
        "Duplicate pages", "warning",
        "The same content at several URLs splits links and ranking between them; "
        "search engines choose one for you.",
        "Redirect the copies to the kept URL, or give them rel=canonical to it."),
    "orphans": Triage(
        "Orphan pages", "warning",
        "Pages the sitemap lists that no link reaches are hard to find and rank "
        "poorly.",
        "Link to them from a relevant page, or drop them from the sitemap."),
    "missing-from-sitemap": Triage(
        "Pages missing from the sitemap", "warning",
        "Indexable pages the live sitemap forgets are found later, or only through "
        "links.",
        "Regenerate the sitemap (sitemap-crawler crawl) so it lists every indexable "
        "page."),
    "structured-data-errors": Triage(
        "Structured data errors", "warning",
        "Markup that cannot be read earns no rich result.",
        "Fix the JSON-LD or microdata named, and check it with a rich-results test."),
    "incomplete-videos": Triage(
        "Incomplete videos", "warning",
        "A video without its required fields is left out of video results.",
        "Add the missing fields (title, description, thumbnail, content or player "
        "URL)."),
    "expiring-certificates": Triage(
        "Certificates about to expire", "warning",
        "When a linked origin's certificate expires, browsers refuse its pages.",
        "Tell the owner of the origin, or be ready to update the links."),
    "broken-fragments": Triage(
        "Links to missing anchors", "warning",
        "A link to #anchor that the page does not have lands readers at the top of "
        "the page instead of the part they were promised.",
        "Fix the fragment, or add the id to the target page."),
    "render-errors": Triage(
        "Rendering errors", "warning",
        "JavaScript errors, blocked scripts and timeouts can leave search engines a "
        "different page than visitors see.",
        "Fix the script errors, and let robots.txt allow the scripts pages need."),
    "redirected-external-links": Triage(
        "External links through redirects", "notice",
        "The link still works, but costs a round trip and may one day break.",
        "Link to the final URL shown (use instead)."),
    "unchecked-external-links": Triage(
        "External links not checked", "notice",
        "Nothing is known of these links: the check was not allowed, not asked in "
        "time, or no external origin could be reached.",
        "Run the audit again where the sites are reachable, or with a longer "
        "--external-deadline."),
    "missing-descriptions": Triage(
        "Missing meta descriptions", "notice",
        "Without a description, search engines write the result's snippet from "
        "whatever text they find.",
        "Add a <meta name=\"description\"> of one or two sentences to each page."),
    "duplicate-descriptions": Triage(
        "Shared meta descriptions", "notice",
        "The same snippet on several results makes them look alike.",
        "Write a description of its own for each page."),
    "missing-h1": Triage(
        "Pages without an h1", "notice",
        "The h1 tells readers and search engines what the page is about.",
        "Give each page one <h1> heading, usually in its template."),
    "multiple-h1": Triage(
        "Pages with several h1", "notice",
        "Several top headings blur what the page is about.",
        "Keep one <h1> and make the others <h2>."),
    "sitemap-lastmod": Triage(
        "Untrustworthy lastmod", "notice",
        "A lastmod in the future or older than the page's Last-Modified teaches "
        "search engines to ignore it.",
        "Write lastmod from the page's real modification time."),
    "no-sitemap": Triage(
        "No sitemap", "warning",
        "Search engines then find pages through links alone, and learn nothing of when "
        "they changed: a sitemap is how a site tells them what to index.",
        "Write one (sitemap-crawler crawl START_URL --out DIR), serve it from the site, and "
        "name it in robots.txt with a Sitemap: line; the item gives both."),
    "legacy-sitemap-namespace": Triage(
        "Sitemaps in Google's 0.84 namespace", "warning",
        "The namespace of the protocol's first texts (2005): search engines still read "
        "it, but the protocol is 0.9, and other tools may not.",
        "Write the 0.9 namespace, http://www.sitemaps.org/schemas/sitemap/0.9, on the "
        "root element (sitemap-crawler crawl writes it)."),
    "deprecated-sitemap-tags": Triage(
        "Ignored sitemap tags", "notice",
        "changefreq and priority are ignored by Google and Bing: bytes for nothing.",
        "Drop them from the sitemaps."),
    "rendered-links": Triage(
        "Links only JavaScript shows", "notice",
        "Links that exist only after rendering are found late, or not at all by "
        "crawlers that do not render.",
        "Put the links in the HTML the server sends."),
    "render-changes": Triage(
        "Changes JavaScript makes", "notice",
        "A canonical, robots or title that JavaScript changes is read two ways.",
        "Serve the final value in the HTML itself."),
    "misleading-last-modified": Triage(
        "Misleading Last-Modified", "warning",
        "Search engines use a sitemap's lastmod only while it is consistently accurate: a "
        "server that restamps pages whose content did not change (a build time), or keeps "
        "the date of pages whose content did, teaches them to ignore it.",
        "Send Last-Modified from when the content last changed. Meanwhile crawl with "
        "--state: where the header misleads, the sitemap gets the content's own change "
        "time."),
    "soft-404": Triage(
        "Soft 404s", "error",
        "These URLs answer 200 (or redirect to the home page) but are a \"not found\" "
        "page: search engines spend crawl budget on them, may index an error page, and "
        "a sitemap listing them would call them content.",
        "Answer 404 or 410 where a page does not exist; redirect a page that moved to "
        "its replacement, not to the home page; fix the links to them."),
    "added-pages": Triage(
        "Pages added", "notice", "Listable now, and not reached or failing at the last "
        "audit.", "Check they are meant."),
    "removed-pages": Triage(
        "Pages removed", "warning",
        "Pages that answered at the last audit and now fail (their status says how) or "
        "are no longer linked lose their links and ranking.",
        "Redirect each to its replacement, or restore it."),
    "changed": Triage(
        "Pages changed", "notice", "Status, title or listing changed since the last "
        "audit.", "Check the changes are meant."),
}
assert set(TRIAGE) == {*FINDINGS, *CHANGE_FINDINGS}, "every finding is triaged"


def triage_of(name: str) -> Triage:
    """A finding's triage; ``new-X`` weighs as X, ``fixed-X`` is good news."""
    if name.startswith("new-") and name[4:] in TRIAGE:
        base = TRIAGE[name[4:]]
        return Triage(f"New: {base.title.lower()}", base.severity, base.why, base.how)
    if name.startswith("fixed-") and name[6:] in TRIAGE:
        base = TRIAGE[name[6:]]
        return Triage(f"Fixed: {base.title.lower()}", "notice",
                      "Fixed since the last audit.", "Nothing to do.")
    return TRIAGE[name]


def in_a_list(name: str) -> str:
    """A finding's title as it reads inside a sentence ("Broken links" → "broken
    links"; "URLs" and "JavaScript" keep their capitals)."""
    title = triage_of(name).title
    return title[0].lower() + title[1:] if title[1:2].islower() else title


def reach(items: Iterable[dict[str, Any]]) -> int:
    """Pages a finding touches: for a link, the pages carrying it (``linked_from``);
    otherwise the URLs its items name (a sitemap file counts one)."""
    return sum(FindingItem.of(item).reach for item in items)


def reach_unit(items: Iterable[dict[str, Any]]) -> str:
    """What :func:`reach` counts: "links" for a finding of links (a page's link to a
    URL counts once: 1,675 URLs may be 1,698 links), else "pages"."""
    return "links" if any(FindingItem.of(item).linked_from is not None for item in items) \
        else "pages"


@dataclass(frozen=True, slots=True)
class Ranked:
    name: str
    triage: Triage
    count: int
    reach: int
    unit: str = "pages"  # what reach counts (reach_unit)

    @property
    def reach_words(self) -> str:
        """"1,698 links", "1 page"."""
        return f"{self.reach:,} {self.unit if self.reach != 1 else self.unit[:-1]}"


def fix_first(found: dict[str, dict[str, Any]], names: Iterable[str] = FINDINGS
              ) -> list[Ranked]:
    """The findings present, errors before warnings before notices, then by reach."""
    ranked = [Ranked(name, triage_of(name), found[name]["count"],
                     reach(found[name]["items"]), reach_unit(found[name]["items"]))
              for name in names if found.get(name, {}).get("count")]
    return sorted(ranked, key=lambda entry: (SEVERITIES.index(entry.triage.severity),
                                             -entry.reach, entry.name))


def annotate(found: dict[str, dict[str, Any]]) -> None:
    """Add ``severity``, ``title``, ``why``, ``how`` and ``reach`` to every finding in
    place, so a JSON reader gets the weighing with the items."""
    for name, finding in found.items():
        triage = triage_of(name)
        finding.update(severity=triage.severity, title=triage.title, why=triage.why,
                       how=triage.how, reach=reach(finding["items"]),
                       reach_unit=reach_unit(finding["items"]))


def clean(found: dict[str, dict[str, Any]], names: Iterable[str] = FINDINGS) -> list[str]:
    """The findings that were checked and found nothing."""
    return [name for name in names if name in found and not found[name]["count"]
            and not found[name].get("not_checked") and not found[name].get("so_far")
            and name != "unchecked-external-links"]


def so_far(found: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The checks a stopped run made on the pages it read, with nothing found yet, by
    how far it got: ``{"233 of 1,163 pages": ["broken links", …]}``. Never clean."""
    partial: dict[str, list[str]] = {}
    for name in FINDINGS:
        reached = found.get(name, {}).get("so_far")
        if reached and not found[name]["count"] and not found[name].get("not_checked"):
            partial.setdefault(reached, []).append(in_a_list(name))
    return partial


def not_checked(found: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The findings whose check was not made, by why: ``{"--render never": ["links
    only JavaScript shows", …]}``, titles as they read in a sentence."""
    unchecked: dict[str, list[str]] = {}
    for name in FINDINGS:
        why = found.get(name, {}).get("not_checked")
        if why and not found[name]["count"]:
            unchecked.setdefault(why, []).append(in_a_list(name))
    return unchecked


def ordered(found: dict[str, dict[str, Any]]) -> Iterator[str]:
    """Every finding's name, the fix-first order first, then the clean ones."""
    first = [entry.name for entry in fix_first(found)]
    yield from first
    yield from (name for name in FINDINGS if name not in first)
