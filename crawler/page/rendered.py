"""A page read twice — its raw HTML and the DOM a browser rendered — made one record (pure).

What search engines do decides each part: links, canonical, title, hreflang and
images come from the rendered DOM (what Google indexes after rendering); a
noindex or nofollow from either stands (Google does not render a page whose raw
HTML says noindex, so JavaScript removing it changes nothing; JavaScript adding
it is obeyed); status, headers, lastmod and the content fingerprint stay the
raw answer's, but duplicates are told by the DOM (an app's shell is the same at
every URL). What differs between the two readings is kept as notes for the
audit's ``rendered-links`` and ``render-changes`` findings.
"""

from __future__ import annotations

from collections.abc import Callable

from crawler.core.records import PageRecord
from crawler.page.read import NO_SIGNS, PageOutcome, judge, targets

FIRST_LINKS = 5  # links named in a note (the rest are counted)


def wants_render(record: PageRecord) -> bool:
    return record.render_why is not None and record.render_why != NO_SIGNS


def merge(raw: PageOutcome, rendered: PageOutcome, notes: list[tuple[str, ...]],
          in_scope: Callable[[str], bool], documents: frozenset[str] = frozenset()
          ) -> PageOutcome:
    """The page's outcome from both readings (``raw``'s record is updated in place)."""
    record, seen = raw.record, rendered.record
    found = list(notes)
    raw_links, shown_links = raw.links, rendered.links
    before, after = set(raw_links), set(shown_links)
    added = [link for link in shown_links
             if link not in before and link != record.url and in_scope(link)]
    lost = [link for link in raw_links if link not in after and in_scope(link)]
    if added:
        found.append(("links-added", str(len(added)), *added[:FIRST_LINKS]))
    if lost:
        found.append(("links-lost", str(len(lost)), *lost[:FIRST_LINKS]))
    found += _changes(record, seen)
    record.rendered = True
    record.raw_links = record.links_found
    record.links_found = seen.links_found
    record.canonical = seen.canonical
    record.title = seen.title
    record.alternates, record.alternates_dropped = seen.alternates, seen.alternates_dropped
    if record.images is not None:
        record.images = seen.images
    record.duplicate_key = seen.duplicate_key  # what the browser showed, never the shell
    record.noindex = record.noindex or seen.noindex
    record.nofollow = record.nofollow or seen.nofollow
    record.render_notes = tuple(found)
    record.verdict = judge(record, documents)
    raw.links = [] if record.nofollow else shown_links
    raw.anchors = {**raw.anchors, **rendered.anchors}
    raw.siblings = targets(record)
    return raw


def _changes(raw: PageRecord, shown: PageRecord) -> list[tuple[str, ...]]:
    """("change", what, raw value, rendered value) for each part JavaScript changed."""
    found: list[tuple[str, ...]] = []
    if raw.noindex and not shown.noindex:
        found.append(("change", "noindex-only-in-raw-html", "noindex", "index"))
    elif shown.noindex and not raw.noindex:
        found.append(("change", "noindex", "index", "noindex"))
    if raw.nofollow != shown.nofollow:
        found.append(("change", "nofollow", _follow(raw.nofollow), _follow(shown.nofollow)))
    for what in ("canonical", "title"):
        before, after = getattr(raw, what), getattr(shown, what)
        if before != after:
            found.append(("change", what, before or "", after or ""))
    if set(raw.alternates) != set(shown.alternates):
        found.append(("change", "hreflang", _codes(raw.alternates), _codes(shown.alternates)))
    return found


def _follow(nofollow: bool) -> str:
    return "nofollow" if nofollow else "follow"


def _codes(alternates: tuple[tuple[str, str], ...]) -> str:
    return " ".join(f"{code}={url}" for code, url in alternates)
