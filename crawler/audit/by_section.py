"""Every finding counted by section — pure.

The sections are the sitemap's (``--section NAME=PATTERN``, ``--sections auto``):
Search Console reports indexing per submitted sitemap, and a site owner who sees
"blog: 0 errors, docs: 40" knows which team to call. A page counts in its
section; a finding's item counts where it is fixed: a link in the section of the
page holding it (its first ``found_on``), anything else in the section of the URL
it names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from crawler.audit.item import FindingItem
from crawler.audit.names import FINDINGS
from crawler.audit.triage import SEVERITIES, triage_of


def count_by_section(found: dict[str, dict[str, Any]], pages: Iterable[str],
                     section_of: Callable[[str], str], order: list[str]
                     ) -> list[dict[str, Any]]:
    """``[{"section", "pages", "error", "warning", "notice", "findings": {name: n}}]``,
    in the sitemap index's order; sections with no page and no item left out."""
    page_counts = Counter(section_of(url) for url in pages)
    items: dict[str, Counter[str]] = {}
    severities: dict[str, Counter[str]] = {}
    for name in FINDINGS:
        finding = found.get(name)
        if not finding or not finding.get("count"):
            continue
        severity = triage_of(name).severity
        for raw in finding["items"]:
            item = FindingItem.of(raw)
            where = item.found_on[0] if item.found_on else item.where
            section = section_of(where) if where else order[-1]
            items.setdefault(section, Counter())[name] += 1
            severities.setdefault(section, Counter())[severity] += 1
    rows = []
    for section in dict.fromkeys([*order, *page_counts, *items]):
        if not page_counts[section] and section not in items:
            continue
        counted = severities.get(section, Counter())
        rows.append({"section": section, "pages": page_counts[section],
                     **{severity: counted[severity] for severity in SEVERITIES},
                     "findings": dict(items.get(section, {}))})
    return rows
