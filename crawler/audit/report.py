"""The audit report and the explanations a user reads — pure.

The report has one row per URL the crawl saw: fetched pages with their
status, and URLs it chose not to fetch, each with the reason it is or is not
in the sitemap. That reason column is what turns "why is my page missing?"
into a lookup.
"""

from __future__ import annotations

import csv
import heapq
import io
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any, TextIO

from crawler.audit.findings import RecordLookup, final_target, findings, findings_by_url
from crawler.core.dates import EARLIEST_TRUSTED
from crawler.core.records import REPORT_COLUMNS, PageRecord, SkippedUrl, Verdict
from crawler.engine.result import CrawlResult
from crawler.store.record_store import RecordStore
from crawler.store.skipped_store import SkippedStore

# 2: top-level crawl_delay; a row's detail for an internal-error
# 3: totals.outside_scope; out-of-scope URLs listed as rows up to 1,000 per reason;
#    reasons excluded, not-included, no-list; from the CLI a top-level "hreflang" list
#    of declared alternates left out of the sitemap
# 4: rows carry content_type, bytes, response_ms, title, noindex, nofollow,
#    redirect_chain, linked_from, found_on, anchor; top-level "findings"
# 5: findings non-indexable-in-sitemap, orphans, missing-from-sitemap, sitemap-lastmod,
#    sitemap-errors; top-level "live_sitemap" (null unless compared); rows carry
#    in_live_sitemap and orphan when compared; reason "orphan"
# 6: rows carry hreflang_dropped (alternates past the cap a page keeps); error
#    parse-timeout; reason secret-in-url; top-level workers_lost; live_sitemap
#    orphans_unchecked (past --max-orphans); sitemap-lastmod lists at most 1,000 URLs
# 7: findings rendered-links, render-changes, render-errors; top-level "render"
#    (null unless --render); rows carry rendered, render_reason, raw_links,
#    rendered_links under --render; findings broken-external-links,
#    redirected-external-links, expiring-certificates, broken-fragments; with a
#    comparison, "compared_with" and the change findings (crawler.audit.changes)
# 8: each finding carries severity, title, why, how and reach (crawler.audit.triage),
#    not_checked (why its check was not made) and, for the per-page findings, groups
#    (templates and path prefix); top-level "interrupted" when a run was stopped;
#    rows carry template
# 9: totals.seen and not_listed count URLs in the scope only; totals.external holds the
#    three external counts (urls, estimated, links, pages); findings soft-404 and
#    no-sitemap
REPORT_VERSION = 9
CSV_COLUMNS = REPORT_COLUMNS
# A cell starting with one of these is a formula to a spreadsheet (OWASP, "CSV
# Injection"): a page title "=HYPERLINK(…)" would run when the report is opened.
# Fullwidth forms too, which some spreadsheets read as the ASCII ones.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def spreadsheet_safe(value: str) -> str:
    """A text cell a spreadsheet shows as text: one starting like a formula gets a
    leading apostrophe, as OWASP advises (the cell then reads as the text itself)."""
    return "'" + value if value.startswith(_FORMULA_STARTS) else value


def _iso(record: PageRecord) -> str | None:
    if record.lastmod is None or record.lastmod < EARLIEST_TRUSTED:
        return None
    return record.lastmod.strftime("%Y-%m-%dT%H:%M:%SZ")


def iter_rows(result: CrawlResult) -> Iterator[dict[str, Any]]:
    """The report's rows, sorted by URL, made one at a time: 100,000 rows held as
    dicts would cost more than the crawl that found them. Records and skipped URLs
    come sorted from their stores (from disk on a large site) and are merged."""
    records, skipped = RecordStore.of(result.records), SkippedStore.of(result.skipped)
    live = result.live_sitemap
    orphans = set(live.orphans) if live is not None else set()
    # who links where, read in URL order beside the rows (a merge, not a query a row)
    linked = result.referrers.in_url_order() if result.referrers is not None else None
    linked_url, linked_entry = next(linked, (None, None)) if linked is not None else (None, None)
    fetched = ((record.url, 0, _record_row(record, records)) for _i, record in records.by_url())
    passed = ((item.url, 1, _skipped_row(item)) for item in skipped.by_url())
    for url, _kind, row in heapq.merge(fetched, passed, key=lambda entry: entry[:2]):
        if live is not None:
            row["in_live_sitemap"] = url in live.entries
            row["orphan"] = url in orphans
            if row["orphan"]:
                row["depth"] = None  # reached through the sitemap, not through links
        if linked is not None:
            while linked_url is not None and linked_url < url:
                linked_url, linked_entry = next(linked, (None, None))
            count, first, anchor = (linked_entry if linked_url == url and linked_entry
                                    else (0, [], None))
            row["linked_from"] = count
            row["found_on"] = first
            row["anchor"] = anchor
        yield row


def _record_row(record: PageRecord, by_url: RecordLookup) -> dict[str, Any]:
    row: dict[str, Any] = {
        "url": record.url,
        "status": record.status,
        "depth": record.depth,
        "lastmod": _iso(record),
        "listed": record.verdict is Verdict.LISTED,
        "reason": record.verdict.value,
        "content_type": record.content_type,
        "bytes": record.bytes,
        "response_ms": round(record.elapsed * 1000, 1),
        "title": record.title,
        "noindex": record.noindex,
        "nofollow": record.nofollow,
    }
    if record.redirect_to is not None:
        row["redirect_chain"] = final_target(record, by_url)[0][1:]
    if record.error is not None:
        row["error"] = record.error.value
    if record.detail is not None:
        row["detail"] = record.detail
    if record.redirect_to or record.refresh_to:
        row["target"] = record.redirect_to or record.refresh_to
    if record.canonical is not None:
        row["canonical"] = record.canonical
    if record.duplicate_of is not None:
        row["duplicate_of"] = record.duplicate_of
    if record.alternates_dropped:
        row["hreflang_dropped"] = record.alternates_dropped
    if record.word_count is not None:  # read for audits and reports
        row["description"], row["h1"] = record.description, record.h1
        row["h1_count"], row["word_count"] = record.h1_count, record.word_count
        row["template"] = record.template
        row["structured_data"] = list(record.structured_types)
    for name, value in record.extracted:
        row[name] = value
    if record.render_why is not None:
        row["rendered"] = record.rendered
        row["render_reason"] = record.render_why
        row["raw_links"] = record.raw_links if record.rendered else record.links_found
        row["rendered_links"] = record.links_found if record.rendered else None
    return row


def _skipped_row(skipped: SkippedUrl) -> dict[str, Any]:
    return {"url": skipped.url, "status": None, "depth": skipped.depth, "lastmod": None,
            "listed": False, "reason": skipped.reason.value}


def report_rows(result: CrawlResult) -> list[dict[str, Any]]:
    return list(iter_rows(result))


def write_report_csv(out: TextIO, result: CrawlResult,
                     found: dict[str, dict[str, Any]] | None = None) -> None:
    """One row per URL, the columns of :data:`CSV_COLUMNS`; opens in any spreadsheet.
    The ``findings`` column names the findings each URL is part of, so filtering on
    it gives a finding's URLs. Text a site wrote (titles, anchors, URLs) that would
    start a formula is written as text (:func:`spreadsheet_safe`)."""
    named = findings_by_url(found if found is not None else findings(result))
    writer = csv.writer(out, lineterminator="\r\n")
    columns = (*CSV_COLUMNS, *result.extract_names)  # then one column per --extract NAME
    writer.writerow(columns)
    for row in iter_rows(result):
        row["findings"] = named.get(row["url"], [])
        values = []
        for column in columns:
            value = row.get(column)
            if isinstance(value, list):
                value = " ".join(value)
            elif isinstance(value, bool):
                value = "yes" if value else "no"
            if isinstance(value, str):
                value = spreadsheet_safe(value)
            values.append("" if value is None else value)
        writer.writerow(values)


def report_csv(result: CrawlResult) -> str:
    out = io.StringIO()
    write_report_csv(out, result)
    return out.getvalue()


def totals(result: CrawlResult) -> dict[str, Any]:
    """The counts a report opens with. URLs out of the scope are not "not listed"
    pages: they are counted in ``external`` (three numbers, crawler.core.counts), and
    per reason in ``outside_scope``, whose rows the report samples."""
    reasons = Counter(record.verdict.value for record in result.records)
    reasons.update(skipped.reason.value for skipped in result.skipped)
    listed = reasons.get(Verdict.LISTED.value, 0)
    sampled = sum(int(outside["in_report"]) for outside in result.outside.values())
    in_scope = len(result.records) + len(result.skipped) - sampled
    return {
        "seen": in_scope,  # URLs in the scope: fetched, or skipped with a reason
        "fetched": len(result.records),
        "listed": listed,
        "not_listed": in_scope - listed,
        "errors": reasons.get(Verdict.ERROR.value, 0),
        "by_reason": dict(sorted(reasons.items())),
        "external": dict(result.external_totals),
        # every distinct out-of-scope URL, though at most 1,000 of each reason are rows
        "outside_scope": result.outside,
        "elapsed_seconds": round(result.elapsed, 3),
    }


def report_head(result: CrawlResult, extra: dict[str, Any] | None = None,
                found: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The report as data, all but its rows: what the JSON file holds before
    ``urls`` and what the HTML page shows above its table."""
    found = found if found is not None else findings(result)
    return {
        "version": REPORT_VERSION,
        "start_url": result.start_url,
        "robots_txt_status": result.robots_status,
        "crawl_delay": None if result.crawl_delay_asked is None else {
            "asked": result.crawl_delay_asked, "used": result.crawl_delay_used},
        "totals": totals(result),
        "live_sitemap": live_summary(result),
        "workers_lost": result.workers_lost,
        "render": result.render_summary,
        "extract": list(result.extract_names),
        "seeds": {name: counts.as_dict() for name, counts in result.seeds.items()} or None,
        **(extra or {}),
        "findings": found,
    }


def report_document(result: CrawlResult, extra: dict[str, Any] | None = None
                    ) -> dict[str, Any]:
    """The whole report as one value (tests, small sites); files are streamed."""
    return {**report_head(result, extra), "urls": report_rows(result)}


def write_report_json(out: TextIO, result: CrawlResult, extra: dict[str, Any] | None = None,
                      found: dict[str, dict[str, Any]] | None = None) -> None:
    """The JSON report, its rows written one a line as they are made."""
    head = json.dumps(report_head(result, extra, found), indent=1, ensure_ascii=False)
    out.write(head[:-2])  # all but the closing "\n}"
    out.write(',\n "urls": [')
    separator = "\n  "
    for row in iter_rows(result):
        out.write(separator)
        out.write(json.dumps(row, ensure_ascii=False))
        separator = ",\n  "
    out.write("\n ]\n}\n")


def live_summary(result: CrawlResult) -> dict[str, Any] | None:
    """Which sitemaps were read and what they held; ``None`` when not compared."""
    live = result.live_sitemap
    if live is None:
        return None
    orphans = set(live.orphans)
    return {
        "asked": live.asked,
        "source": live.source,
        "sitemaps": [{"url": file.url, "index": file.parent, "status": file.status,
                      "kind": file.kind, "entries": file.entries, "problems": file.problems}
                     for file in live.files],
        "urls": len(live.entries),
        "outside_crawl_scope": live.outside_crawl,  # listed, but not ours to compare
        "orphans": len(orphans),
        # orphans past --max-orphans: neither fetched nor listed
        "orphans_unchecked": live.orphans_unchecked,
        "carrying_secrets": live.carrying_secrets,  # dropped, never shown
        "repeated": live.repeated,
        "invalid": live.invalid_count,
        "outside_sitemap_scope": live.outside_count,
    }


def report_json(result: CrawlResult, extra: dict[str, Any] | None = None) -> str:
    out = io.StringIO()
    write_report_json(out, result, extra)
    return out.getvalue()


# Verdicts that send the start URL on to another URL: words, and the field naming it.
_FOLLOWED = {
    Verdict.REDIRECT: ("redirects to", "redirect_to"),
    Verdict.REFRESH: ("meta-refreshes to", "refresh_to"),
    Verdict.CANONICALISED: ("is canonicalised to", "canonical"),
}


def _final_reason(record: PageRecord) -> str:
    if record.verdict is Verdict.NOINDEX:
        return f"{record.url} is noindex"
    if record.verdict is Verdict.ERROR:
        return f"{record.url} failed ({record.error.value if record.error else 'error'})"
    if record.verdict is Verdict.NOT_OK:
        return f"{record.url} answered HTTP {record.status}"
    if record.verdict is Verdict.REDIRECT_LOOP:
        target = record.redirect_to or record.refresh_to
        return f"{record.url} redirects back to {target}, closing a loop"
    if record.verdict is Verdict.NOT_HTML:
        return f"{record.url} is not HTML ({record.content_type})"
    return f"{record.url}: {record.verdict.value}"


def explain_empty(result: CrawlResult) -> str:
    """Why a crawl found nothing to list, in words a site owner acts on."""
    records, skipped = RecordStore.of(result.records), SkippedStore.of(result.skipped)
    url: str | None = result.start_url
    trail: list[str] = []
    for _ in range(12):
        if url is None:
            break
        record = records.get(url)
        if record is None and not trail and skipped.reason(url) is None:
            break  # list mode: START_URL was never the crawl's to fetch
        if record is None:
            reason = skipped.reason(url)
            trail.append(f"{url} was not crawled ({reason.value if reason else 'unknown'})")
            break
        if record.verdict in _FOLLOWED:
            words, attribute = _FOLLOWED[record.verdict]
            url = getattr(record, attribute)
            trail.append(f"{record.url} {words} {url}")
            continue
        trail.append(_final_reason(record))
        break
    counts = Counter(record.verdict.value for record in result.records)
    summary = ", ".join(f"{n} {reason}" for reason, n in counts.most_common())
    return (
        f"no indexable page found: {'; '.join(trail) or 'no URL of the list is listable'} "
        f"({len(result.records)} fetched: {summary or 'none'})"
    )
