"""The audit as one self-contained HTML page: a person opens it, nothing is fetched.

Summary counts, bar charts drawn as inline SVG (status codes, depth, response
times, reasons for exclusion), a table per finding, and the table of every
URL, sortable by a click on a column and filtered by what is typed — all in
the one file, with a few lines of inline script and no external asset, so it
can be mailed or archived as it is.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from crawler.audit.grouping import describe
from crawler.audit.item import FindingItem
from crawler.audit.names import CHANGE_FINDINGS, CHANGES, FINDINGS, LIVE_FINDINGS, RENDER_FINDINGS
from crawler.audit.probe_summary import probe_groups
from crawler.audit.report_html_assets import HEAD as _HEAD
from crawler.audit.report_html_assets import SCRIPT as _SCRIPT
from crawler.audit.triage import (
    SEVERITIES,
    clean,
    fix_first,
    in_a_list,
    not_checked,
    ordered,
    so_far,
    triage_of,
)
from crawler.core.counts import EXTERNAL_NAMES

ROWS_SHOWN = 50  # a finding's rows in the page; the findings CSV holds every one
URL_ROWS_SHOWN = 100  # URLs of the scope in the page; the URLs CSV holds every one
# the reasons of URLs out of the scope: counted, sampled in the JSON and CSV, not pages
OUTSIDE_REASONS = frozenset({"external", "other-host-same-site", "out-of-scope"})
SAMPLE_URLS = 3  # URLs named under each finding in "Fix first"
# columns of the URL table whose lists show their first entry and a count: a page
# of 1,170 rows with five links each weighed 2.7 MB
_FIRST_ONLY = frozenset({"found_on", "chain", "redirect_chain"})
_TRIAGED = frozenset({*FINDINGS, *CHANGE_FINDINGS, *(f"new-{name}" for name in FINDINGS),
                      *(f"fixed-{name}" for name in FINDINGS)})

_TIME_BUCKETS = ((50, "<50 ms"), (100, "50-100 ms"), (250, "100-250 ms"), (500, "250-500 ms"),
                 (1000, "0.5-1 s"), (float("inf"), "≥1 s"))
_COLUMNS = (("url", "URL"), ("status", "Status"), ("reason", "Reason"), ("depth", "Depth"),
            ("title", "Title"), ("structured_data", "Structured data"),
            ("response_ms", "ms"), ("bytes", "Bytes"),
            ("linked_from", "Linked from"), ("found_on", "Found on"))
# with --render: whether each page was rendered, why, and its links before and after
_RENDER_COLUMNS = (("rendered", "Rendered"), ("render_reason", "Why"),
                   ("raw_links", "Raw links"), ("rendered_links", "Rendered links"))


@dataclass(frozen=True, slots=True)
class Beside:
    """The files written beside the page, named as it links to them."""

    findings_csv: str | None = None  # every item of every finding (a page shows the first)
    urls_csv: str | None = None  # every URL row (the page shows URL_ROWS_SHOWN)


def write_report_html(out: TextIO, document: dict[str, Any],
                      rows: Callable[[], Iterable[dict[str, Any]]],
                      beside: Beside = Beside()) -> None:
    """Write the page for a report document (what :func:`crawler.audit.report.report_head`
    holds) to ``out``. ``rows`` gives the URL rows afresh on each call (the charts,
    then the table), so no list of 100,000 rows is ever held.

    A page read in one sitting: what changed since the last audit, the sections,
    then "Fix first" (the findings present, worst first, each with why and how, each
    linking to its table); the counts and charts; each finding's first
    :data:`ROWS_SHOWN` rows, folded; the first :data:`URL_ROWS_SHOWN` URLs of the
    scope, those not listed first. Whatever is cut says how much more there is and
    which file beside the page holds it."""
    totals = document["totals"]
    found = document["findings"]
    charts = _charts(rows())
    parts = [_HEAD.replace("%TITLE%", _e(f"Audit of {document['start_url']}")),
             f"<h1>Audit of <a href=\"{_e(document['start_url'])}\">"
             f"{_e(document['start_url'])}</a></h1>",
             _interrupted(document),
             _since_section(document),
             sections_table(document.get("by_section")),
             fix_first_section(found),
             _cards(totals)]
    parts.append('<section class="charts">')
    parts += [_bar_chart(title, counts) for title, counts in charts]
    parts.append("</section>")
    parts += _finding_sections(document, found, beside.findings_csv)
    out.write("\n".join(part for part in parts if part) + "\n")
    columns = (_COLUMNS + (_RENDER_COLUMNS if document.get("render") else ())
               + tuple((name, name) for name in document.get("extract", ())))
    start = document["start_url"]
    origin = start[: start.find("/", start.find("//") + 2)] if "//" in start else ""
    _write_url_table(out, _UrlTable(rows, int(totals["seen"]), columns, origin), beside)
    out.write("\n" + _SCRIPT + "</body></html>\n")


def _cards(totals: dict[str, Any]) -> str:
    """The counts: the scope's URLs, then the three external numbers (crawler.core.counts)."""
    cards = [("URLs seen", f"{totals['seen']:,}"), ("fetched", f"{totals['fetched']:,}"),
             ("listed", f"{totals['listed']:,}"), ("not listed", f"{totals['not_listed']:,}"),
             ("errors", f"{totals['errors']:,}")]
    external = totals.get("external") or {}
    if external.get("urls"):
        about = "about " if external.get("estimated") else ""
        cards += [(EXTERNAL_NAMES[0], f"{about}{external['urls']:,}"),
                  (EXTERNAL_NAMES[1], f"{external['links']:,}"),
                  (EXTERNAL_NAMES[2], f"{external['pages']:,}")]
    return ('<section class="cards" id="summary">' + "".join(
        f'<div class="card{" out" if label in EXTERNAL_NAMES else ""}">'
        f'<b data-count="{_e(label)}">{value}</b><span>{_e(label)}</span></div>'
        for label, value in cards) + "</section>")


def _charts(rows: Iterable[dict[str, Any]]) -> list[tuple[str, Counter[str]]]:
    """The four charts' counts, in one pass over the rows. URLs out of the scope are
    none of them: they are the three external counts, not pages."""
    statuses: Counter[str] = Counter()
    depths: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    times = _time_buckets(())
    for row in rows:
        if row["reason"] in OUTSIDE_REASONS:
            continue
        if row.get("status") is not None or row["reason"] == "error":
            statuses[str(row["status"]) if row["status"] is not None else "none"] += 1
        if row.get("status") is not None and row["depth"] is not None:
            depths[str(row["depth"])] += 1
        if not row["listed"]:
            reasons[row["reason"]] += 1
        if (ms := row.get("response_ms")) is not None:
            times[_time_label(ms)] += 1
    return [("Status codes", statuses), ("Depth", depths),
            ("Response times", times), ("Reasons not listed", reasons)]


def sections_table(by_section: list[dict[str, Any]] | None) -> str:
    """The sections (``--section``, ``--sections auto``): pages and finding items of each
    severity, the worst first."""
    if not by_section:
        return ""
    body = "".join(
        f"<tr><td>{_e(row['section'])}</td><td>{row['pages']:,}</td>"
        + "".join(f'<td class="{"bad" if row[severity] and severity == "error" else ""}">'
                  f"{row[severity]:,}</td>" for severity in SEVERITIES)
        + "</tr>" for row in by_section)
    heads = "".join(f"<th>{severity}s</th>" for severity in SEVERITIES)
    return ('<section id="sections"><h2>Sections <small>finding items where they are '
            'fixed</small></h2><table class="sortable compact"><thead><tr><th>section</th>'
            f"<th>pages</th>{heads}</tr></thead><tbody>{body}</tbody></table></section>")


def _finding_sections(document: dict[str, Any], found: dict[str, dict[str, Any]],
                      findings_csv: str | None) -> list[str]:
    """The live sitemap's and rendering's sections, then each finding present."""
    parts = []
    for name in FINDINGS:
        if name == LIVE_FINDINGS[0] and document.get("live_sitemap") is not None:
            parts.append(_live_section(document.get("live_sitemap")))
        if name == RENDER_FINDINGS[0] and document.get("render") is not None:
            parts.append(_render_section(document.get("render")))
    parts += [_finding_table(name, found[name], findings_csv=findings_csv)
              for name in ordered(found) if found[name]["count"]]
    return parts


def _interrupted(document: dict[str, Any]) -> str:
    """A run stopped before it ended says which phase it did not finish."""
    stopped = document.get("interrupted")
    if not stopped:
        return ""
    return (f'<p class="banner" id="interrupted"><b>Interrupted:</b> {_e(stopped)}. '
            "What follows is what was known then.</p>")


def fix_first_section(found: dict[str, Any]) -> str:
    """What to fix first, worst first; then one line for the clean findings and one
    for those not checked (never a count of 0 for a check that was not made)."""
    entries = []
    for entry in fix_first(found):
        triage, finding = entry.triage, found[entry.name]
        sample = [FindingItem.of(item).where for item in finding["items"][:SAMPLE_URLS]]
        where = describe(finding.get("groups"))
        reach = (f"<small>{entry.reach_words}</small>" if entry.reach != entry.count
                 else "")
        more = entry.count - len([url for url in sample if url])
        entries.append(
            f'<li class="sev-{triage.severity}"><span class="badge {triage.severity}">'
            f'{triage.severity}</span> <a href="#{entry.name}">{_e(triage.title)}</a> '
            f'<b data-finding="{entry.name}">{entry.count:,}</b> {reach}'
            f'<p class="why">{_e(triage.why)}</p>'
            f'<p class="how"><b>How to fix:</b> {_e(triage.how)}</p>'
            + (f'<p class="where">{_e(where)}</p>' if where else "")
            + '<p class="sample">' + ", ".join(_cell(url) for url in sample if url)
            + (f" <small>and {more:,} more</small>" if more > 0 else "")
            + "</p></li>")
    severities = Counter(entry.triage.severity for entry in fix_first(found))
    tally = " · ".join(f'<span class="badge {severity}">{severities[severity]} '
                       f'{severity}{"s" if severities[severity] != 1 else ""}</span>'
                       for severity in SEVERITIES if severities[severity])
    head = f'<section id="fix-first"><h2>Fix first <small>{tally}</small></h2>'
    body = (f'<ol class="fix-first">{"".join(entries)}</ol>' if entries
            else '<p class="all-clean">Nothing to fix: every check made came back clean.</p>')
    spotless = clean(found)
    lines = ""
    if spotless:
        lines += ('<p class="clean"><b>Checked and clean:</b> '
                  + ", ".join(_e(in_a_list(name)) for name in spotless) + ".</p>")
    for why, names in not_checked(found).items():
        lines += (f'<p class="unchecked"><b>Not checked</b> ({_e(why)}): '
                  f'{_e(", ".join(names))}.</p>')
    for reached, names in so_far(found).items():
        lines += (f'<p class="unchecked"><b>Checked so far</b> ({_e(reached)}), nothing '
                  f'found yet: {_e(", ".join(names))}.</p>')
    return head + body + lines + _probes(found.get("soft-404", {}).get("probes")) + "</section>"


def _probes(probes: list[dict[str, Any]] | None) -> str:
    """The URLs asked to learn what "not found" looks like here, and what they answered:
    grouped, the first few of each named, the others unfolded on a click."""
    if not probes:
        return ""
    told = "; ".join(
        group.said() + ": " + ", ".join(_cell(url) for url in group.named)
        + (f' <details class="more"><summary>and {len(group.more):,} more</summary>'
           + ", ".join(_cell(url) for url in group.more) + "</details>" if group.more else "")
        for group in probe_groups(probes))
    # a <div>: the folded rest is a <details>, which no <p> may hold
    return (f'<div class="unchecked" id="probes"><b>Soft-404 probes</b> ({len(probes):,} '
            f"made-up URLs): {told}</div>")


def _since_section(document: dict[str, Any]) -> str:
    """What changed since the last audit, first thing on the page, when compared."""
    compared = document.get("compared_with")
    if not compared:
        return ""
    found = document["findings"]
    changed = [name for name in CHANGES if found.get(name, {}).get("count")]
    shown = compared.rsplit("/", 1)[-1]  # the file's name; its whole path on hover
    head = (f'<section id="since"><h2>Since the last audit <small>compared with '
            f'<span title="{_e(compared)}">{_e(shown)}</span></small></h2>')
    if not changed:
        return head + "<p>No change.</p></section>"
    cards = "".join(
        f'<div class="card finding{" bad" if name.startswith(("new-", "removed")) else ""}">'
        f'<b data-change="{name}">{found[name]["count"]:,}</b>'
        f'<span><a href="#{name}">{name}</a></span></div>' for name in changed)
    tables = "".join(_finding_table(name, found[name], level=3)
                     for name in changed)  # headed under this section's own
    return f'{head}<div class="cards">{cards}</div>{tables}</section>'


def _render_section(render: dict[str, Any] | None) -> str:
    if render is None:
        return ('<section id="rendering"><h2>Rendering</h2><p>No page rendered '
                "(--render never).</p></section>")
    origins = "".join(f"<li>{_cell(origin)}</li>" for origin in render["third_party_origins"])
    return (f'<section id="rendering"><h2>Rendering <small>{render["pages_rendered"]:,} of '
            f'{render["pages_asked"]:,} pages rendered</small></h2>'
            f'<p>Requests robots.txt blocked: {render["robots_blocked_requests"]:,}. '
            f"Third-party origins pages contacted: {len(render['third_party_origins']):,}</p>"
            f"<ul>{origins}</ul></section>")


def _live_section(live: dict[str, Any] | None) -> str:
    """The sitemaps the site publishes: where they were found and what each held."""
    if live is None:
        return ('<section id="live-sitemap"><h2>Live sitemap</h2><p>Not compared '
                "(--compare-sitemap off).</p></section>")
    files = [{"sitemap": item["url"], "index": item["index"], "status": item["status"],
              "kind": item["kind"], "entries": item["entries"], "problems": item["problems"]}
             for item in live["sitemaps"]]
    table = _finding_table("live-sitemap-files", files).replace(
        "<h2>live-sitemap-files", "<h2>Sitemaps read", 1) if files else (
        '<p>No sitemap was found to read (see <a href="#no-sitemap">No sitemap</a>).</p>'
        if live["source"] == "none" else "<p>No sitemap could be read (see "
        '<a href="#sitemap-errors">Sitemap errors</a>).</p>')
    return (f'<section id="live-sitemap"><h2>Live sitemap <small>{live["urls"]:,} URLs, '
            f'found through {_e(live["source"])}; {live["orphans"]:,} orphans, '
            f'{live["outside_crawl_scope"]:,} outside the crawl\'s scope</small></h2>'
            f"{table}</section>")


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _time_buckets(values: Iterable[float | None]) -> Counter[str]:
    counts: Counter[str] = Counter({label: 0 for _limit, label in _TIME_BUCKETS})
    for value in values:
        if value is None:
            continue
        counts[_time_label(value)] += 1
    return counts


def _time_label(ms: float) -> str:
    return next(label for limit, label in _TIME_BUCKETS if ms < limit)


def _bar_chart(title: str, counts: Counter[str]) -> str:
    """A horizontal bar chart in inline SVG, one bar a key, largest first (numbers in
    their own order)."""
    items = sorted(counts.items(), key=lambda kv: (not kv[0].isdigit(), int(kv[0])
                                                    if kv[0].isdigit() else -kv[1], kv[0]))
    if title == "Response times":
        items = list(counts.items())
    items = items[:12]
    top = max((count for _key, count in items), default=0) or 1
    height = 22 * len(items) + 8
    bars = []
    for index, (key, count) in enumerate(items):
        y = 4 + 22 * index
        width = round(300 * count / top)
        bars.append(f'<text x="0" y="{y + 15}" class="k">{_e(key)}</text>'
                    f'<rect x="150" y="{y + 2}" width="{max(width, 1)}" height="16" rx="2">'
                    f"<title>{_e(key)}: {count}</title></rect>"
                    f'<text x="{156 + width}" y="{y + 15}" class="v">{count:,}</text>')
    return (f'<figure class="chart"><figcaption>{_e(title)}</figcaption>'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="520" height="{height}" '
            f'role="img" aria-label="{_e(title)}">{"".join(bars)}</svg></figure>')


def _finding_table(name: str, finding: dict[str, Any] | list[dict[str, Any]],
                   level: int = 2, findings_csv: str | None = None) -> str:
    """One finding: its weight, why and how, and its first :data:`ROWS_SHOWN` items."""
    items = finding if isinstance(finding, list) else finding["items"]
    if not items:  # only the live sitemap's files come here empty; findings never
        return (f'<section id="{name}"><h{level}>{name} <small>0</small></h{level}>'
                "<p>Nothing to show.</p></section>")
    keys: list[str] = []
    for item in items[:ROWS_SHOWN]:
        keys += [key for key in item if key not in keys]
    head = "".join(f"<th>{_e(key)}</th>" for key in keys)
    body = "".join("<tr>" + "".join(f"<td>{_cell(item.get(key), key)}</td>" for key in keys)
                   + "</tr>" for item in items[:ROWS_SHOWN])
    about = ""
    if isinstance(finding, dict) and name in _TRIAGED:
        triage = triage_of(name)
        about = (f'<p><span class="badge {triage.severity}">{triage.severity}</span> '
                 f'{_e(triage.why)}</p><p class="how"><b>How to fix:</b> {_e(triage.how)}</p>')
        where = describe(finding.get("groups"))
        if where:
            about += f'<p class="where">{_e(where)}</p>'
    more = ""
    if len(items) > ROWS_SHOWN:
        more = (f'<p class="more">Showing {ROWS_SHOWN:,} of {len(items):,}; '
                + (f'all of them are in <a href="{_e(findings_csv)}">{_e(findings_csv)}</a> '
                   f"(rows whose finding is {name})." if findings_csv else
                   "all of them are in the JSON and CSV reports.") + "</p>")
    title = triage_of(name).title if name in _TRIAGED else name
    heading = (f"<h{level}>{_e(title)} <small>{name} · {len(items):,}</small></h{level}>")
    table = (f'{about}{more}<table class="sortable"><thead><tr>{head}</tr></thead>'
             f"<tbody>{body}</tbody></table>")
    if isinstance(finding, dict):  # folded but for errors: "Fix first" said what and why
        opened = " open" if name in _TRIAGED and triage_of(name).severity == "error" else ""
        return (f'<section id="{name}"><details{opened}><summary>{heading}</summary>{table}'
                "</details></section>")
    return f'<section id="{name}">{heading}{table}</section>'


def _cell(value: Any, key: str = "", origin: str = "") -> str:
    """A table cell's HTML; a URL of the audited origin shows its path alone (the
    link is whole): a table of 2,000 rows spent a third of its bytes on the origin."""
    if isinstance(value, list):
        if key in _FIRST_ONLY and len(value) > 1:  # the rest are in the JSON report
            return f"{_cell(value[0], origin=origin)}<br><small>+{len(value) - 1} more</small>"
        return "<br>".join(_cell(item, origin=origin) for item in value)
    if isinstance(value, str) and value.startswith(("http://", "https://")):
        shown = value[len(origin):] if origin and value.startswith(origin + "/") else value
        return f'<a href="{_e(value)}">{_e(shown)}</a>'
    return _e(value)


@dataclass(frozen=True, slots=True)
class _UrlTable:
    rows: Callable[[], Iterable[dict[str, Any]]]
    count: int  # the URLs of the scope (the rows out of it are not shown)
    columns: tuple[tuple[str, str], ...]
    origin: str  # the audited origin, whose URLs show their path alone


def _write_url_table(out: TextIO, table: _UrlTable, beside: Beside) -> None:
    """The scope's URLs, a row each, those not listed first (where "why is my page
    missing?" is answered), :data:`URL_ROWS_SHOWN` at most; a cell carries a sort key
    only where it differs from what it shows (the PostgreSQL docs' 2,172 rows weighed
    1.4 MB with a key on every cell, and 845 KB without the cut)."""
    head = "".join(f'<th data-key="{key}">{_e(label)}</th>' for key, label in table.columns)
    shown = min(table.count, URL_ROWS_SHOWN)
    where = (f'<a href="{_e(beside.urls_csv)}">{_e(beside.urls_csv)}</a>' if beside.urls_csv
             else "the JSON and CSV reports")
    note = (f'<p class="more">Showing {shown:,} of {table.count:,}, those not listed first; '
            f"every URL, with every column, is in {where}.</p>" if table.count > shown else
            f'<p class="more">Every URL, with every column, is also in {where}.</p>')
    out.write('<section id="urls"><h2>URLs <small><span id="shown">'
              f"{shown:,}</span> of {table.count:,}</small></h2>{note}"
              '<input id="filter" type="search" placeholder="Filter: any text in a row" '
              'autocomplete="off">'
              f'<table class="sortable" id="url-table"><thead><tr>{head}</tr></thead><tbody>')
    left = shown
    for listed in (False, True):
        for row in table.rows():
            if left <= 0:
                break
            if row["listed"] is listed and row["reason"] not in OUTSIDE_REASONS:
                out.write(_url_row(row, table))
                left -= 1
    out.write("</tbody></table></section>")


def _url_row(row: dict[str, Any], table: _UrlTable) -> str:
    cells = []
    for key, _label in table.columns:
        value = row.get(key)
        shown = _cell(value, key, table.origin)
        if isinstance(value, list):
            sort = _e(value[0]) if value else ""
        elif isinstance(value, float):
            sort = repr(value)
        else:
            sort = None  # the text itself
        cells.append(f'<td data-sort="{sort}">{shown}</td>' if sort is not None
                     and sort != shown else f"<td>{shown}</td>")
    listed = "listed" if row["listed"] else "not-listed"
    return f'<tr class="{listed}">{"".join(cells)}</tr>'
