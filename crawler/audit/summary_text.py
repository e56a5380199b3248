"""The audit in a terminal: what ``audit URL`` prints when no ``--report`` is named — pure.

The "Fix first" list, worst first, each finding with its count, why it matters,
how to fix it and its worst few URLs; then what came back clean, what was not
checked, and the counts. Returned as lines of (text, style) pieces, so the
caller colours them on a terminal and writes plain text anywhere else.
"""

from __future__ import annotations

from typing import Any

from crawler.audit.grouping import describe
from crawler.audit.item import FindingItem
from crawler.audit.triage import clean, fix_first, in_a_list, not_checked, so_far
from crawler.core.counts import external_words

URLS_SHOWN = 3
STYLES = {"error": "bold red", "warning": "bold yellow", "notice": "bold blue"}
Line = list[tuple[str, str]]  # (text, rich style or "")


def summary_lines(document: dict[str, Any]) -> list[Line]:
    found, totals = document["findings"], document["totals"]
    ranked = fix_first(found)
    lines: list[Line] = []
    if document.get("interrupted"):
        lines.append([("Interrupted: ", "bold"), (document["interrupted"], "")])
    for row in document.get("by_section") or ():
        counts = ", ".join(f"{row[severity]:,} {severity}{'s' if row[severity] != 1 else ''}"
                           for severity in STYLES if row[severity]) or "nothing to fix"
        lines.append([("Section ", "dim"), (f"{row['section']}", "bold"),
                      (f": {row['pages']:,} pages, {counts}", "")])
    if ranked:
        tally = {severity: sum(entry.triage.severity == severity for entry in ranked)
                 for severity in STYLES}
        lines.append([("Fix first", "bold"), (" (" + ", ".join(
            f"{count} {severity}{'s' if count != 1 else ''}"
            for severity, count in tally.items() if count) + ")", "")])
    else:
        lines.append([("Nothing to fix: every check made came back clean.", "bold green")])
    for entry in ranked:
        triage, finding = entry.triage, found[entry.name]
        lines.append([("", "")])
        lines.append([(f"{triage.severity.upper():<8}", STYLES[triage.severity]),
                      (f"{triage.title} ", "bold"),
                      (f"{entry.count:,}" + (f" ({entry.reach_words})"
                                             if entry.reach != entry.count else ""), ""),
                      (f"  [{entry.name}]", "dim")])
        lines.append([("        why: ", "dim"), (triage.why, "")])
        lines.append([("        fix: ", "dim"), (triage.how, "")])
        where = describe(finding.get("groups"))
        if where:
            lines.append([("        where: ", "dim"), (where, "")])
        for item in map(FindingItem.of, finding["items"][:URLS_SHOWN]):
            problem = item.details.get("problem")  # what is wrong with it, by name
            if item.details.get("duplicate_of"):
                problem = f"duplicate of {item.details['duplicate_of']}"
            lines.append([("        - ", "dim"), (item.where, "")]
                         + ([(f": {problem}", "")] if problem else [])
                         + ([(f"  (on {item.found_on[0]})", "dim")] if item.found_on else []))
        if entry.count > URLS_SHOWN:
            lines.append([(f"        … and {entry.count - URLS_SHOWN:,} more", "dim")])
    lines.append([("", "")])
    spotless = clean(found)
    if spotless:
        lines.append([("Checked and clean: ", "bold green"),
                      (", ".join(in_a_list(name) for name in spotless), "")])
    for why, names in not_checked(found).items():
        lines.append([(f"Not checked ({why}): ", "bold"), (", ".join(names), "")])
    for reached, names in so_far(found).items():
        lines.append([(f"Checked so far ({reached}), nothing found yet: ", "bold"),
                      (", ".join(names), "")])
    if (external := totals.get("external")) and external["urls"]:
        lines.append([("Links out: ", "bold"), (external_words(external), "")])
    lines.append([(f"{totals['fetched']:,} pages fetched, {totals['listed']:,} listable, "
                   f"{totals['errors']:,} fetch errors, in {totals['elapsed_seconds']:.1f}s. Every "
                   "URL and every row: --report audit.html (or .json, .csv, .md).", "dim")])
    return lines


def plain(lines: list[Line]) -> str:
    return "".join("".join(text for text, _style in line) + "\n" for line in lines)
