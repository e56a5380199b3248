"""The audit as Markdown: what a pull-request comment can hold — pure text.

The counts first (and what changed since the last audit, when compared), then
each finding present with its first :data:`ITEMS_SHOWN` items, each naming the
page that links to it, so a reviewer sees where to fix it without the full
report. ``--report FILE.md`` writes it; ``--report -`` prints it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from crawler.audit.grouping import describe
from crawler.audit.item import FindingItem
from crawler.audit.names import CHANGES
from crawler.audit.probe_summary import probe_groups
from crawler.audit.triage import clean, fix_first, in_a_list, not_checked, so_far, triage_of
from crawler.core.counts import external_words

ITEMS_SHOWN = 50
# the fields that say what an item is, in the order they are shown after its name
_DETAILS = ("duplicate_of", "status", "error", "problem", "field", "before", "after",
            "use_instead", "what",
            "raw", "rendered", "canonical", "detail", "duplicates", "errors", "problems",
            "tags", "h1_count", "urls", "tried", "write_one", "robots_txt_line", "namespace",
            "write")


def report_markdown(document: dict[str, Any]) -> str:
    found = document["findings"]
    totals = document["totals"]
    lines = [f"# Audit of {document['start_url']}", "",
             f"{totals['seen']:,} URLs seen, {totals['fetched']:,} fetched, "
             f"{totals['listed']:,} listable, {totals['errors']:,} errors.", ""]
    if (external := totals.get("external")) and external["urls"]:
        lines[-1:-1] = ["", f"Links out: {external_words(external)}."]
    changed = [name for name in CHANGES if found.get(name, {}).get("count")]
    if document.get("interrupted"):
        lines += [f"**Interrupted:** {document['interrupted']}; what follows is what was "
                  "known then.", ""]
    if document.get("compared_with"):
        lines += ["## Since the last audit", ""]
        lines += _table(changed, found) if changed else ["No change.", ""]
    lines += _sections(document.get("by_section"))
    ranked = fix_first(found)
    lines += ["## Fix first", ""]
    if ranked:
        lines += ["| severity | finding | count | reach | why it matters |",
                  "| --- | --- | ---: | ---: | --- |"]
        lines += [f"| {entry.triage.severity} | [{entry.triage.title}](#{entry.name}) "
                  f"`{entry.name}` | {entry.count:,} | {entry.reach_words} | "
                  f"{entry.triage.why} |" for entry in ranked]
        lines.append("")
    else:
        lines += ["Nothing to fix: every check made came back clean.", ""]
    spotless = clean(found)
    if spotless:
        lines += ["Checked and clean: " + ", ".join(in_a_list(name) for name in spotless)
                  + ".", ""]
    unchecked = {**{f"Not checked ({why})": names for why, names in not_checked(found).items()},
                 **{f"Checked so far ({reached}), nothing found yet": names
                    for reached, names in so_far(found).items()}}
    lines += [f"{what}: {', '.join(names)}." for what, names in unchecked.items()]
    if probes := found.get("soft-404", {}).get("probes"):
        lines += [f"Soft-404 probes ({len(probes):,} made-up URLs): " + "; ".join(
            group.said() + ": " + ", ".join(_code(url) for url in group.urls)
            for group in probe_groups(probes)) + ".", ""]
    if unchecked:
        lines.append("")
    for name in [*changed, *(entry.name for entry in ranked)]:
        items = found[name]["items"]
        triage = triage_of(name)
        lines += [f'### {triage.title} <a id="{name}"></a>', "",
                  f"**{triage.severity}** · `{name}` · {len(items):,} · {triage.why}", "",
                  f"How to fix: {triage.how}", ""]
        where = describe(found[name].get("groups"))
        if where:
            lines += [f"Where: {where}", ""]
        lines += [f"- {_item(item)}" for item in items[:ITEMS_SHOWN]]
        if len(items) > ITEMS_SHOWN:
            lines.append(f"- … and {len(items) - ITEMS_SHOWN:,} more (see the full report)")
        lines.append("")
    return "\n".join(lines)


def _sections(by_section: list[dict[str, Any]] | None) -> list[str]:
    """Each section's pages and finding items by severity (``--section``)."""
    if not by_section:
        return []
    return ["## Sections", "", "| section | pages | errors | warnings | notices |",
            "| --- | ---: | ---: | ---: | ---: |",
            *(f"| {row['section']} | {row['pages']:,} | {row['error']:,} | "
              f"{row['warning']:,} | {row['notice']:,} |" for row in by_section), ""]


def _table(names: Iterable[str], found: dict[str, Any]) -> list[str]:
    rows = [f"| {name} | {found[name]['count']:,} |" for name in names]
    return ["| finding | count |", "| --- | ---: |", *rows, ""]


def _item(raw: dict[str, Any]) -> str:
    item = FindingItem.of(raw)
    parts = [_code(item.label or None)]
    details = [f"{key} {_value(raw[key])}" for key in _DETAILS
               if key in raw and raw[key] not in (None, "", []) and raw[key] != item.label]
    if details:
        parts.append("(" + "; ".join(details) + ")")
    if item.found_on:
        linked = item.linked_from if item.linked_from is not None else len(item.found_on)
        more = linked - 1
        parts.append(f"— linked from {_code(item.found_on[0])}"
                     + (f" and {more:,} more" if more > 0 else ""))
    return " ".join(parts)


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{_code(key)} {count}" for key, count in value.items())
    if isinstance(value, list):
        shown = ", ".join(_code(item) for item in value[:5])
        return shown + (f" and {len(value) - 5} more" if len(value) > 5 else "")
    return _code(value) if isinstance(value, str) else str(value)


def _code(value: Any) -> str:
    """Inline code, so a URL or a title is shown as written, never as Markdown."""
    text = " ".join(str(value).split()).replace("`", "'")
    return f"`{text}`"
