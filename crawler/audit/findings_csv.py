"""Every finding's items as one CSV: what the HTML report links to when it shows only
the first rows of a large finding — pure.

One row an item, in the "Fix first" order: the finding, its severity, the URL the
item is about, how many pages link to it and the first of them, and the item's
other fields as JSON (their shape differs from one finding to the next).
"""

from __future__ import annotations

import csv
import json
from typing import Any, TextIO

from crawler.audit.item import items_of
from crawler.audit.report import spreadsheet_safe
from crawler.audit.triage import ordered, triage_of

COLUMNS = ("finding", "severity", "url", "linked_from", "found_on", "details")
_SHOWN = frozenset({"url", "linked_from", "found_on"})


def write_findings_csv(out: TextIO, found: dict[str, dict[str, Any]]) -> None:
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for name in ordered(found):
        severity = triage_of(name).severity
        for raw, item in zip(found[name]["items"], items_of(found[name]), strict=True):
            details = {key: value for key, value in raw.items() if key not in _SHOWN}
            writer.writerow([name, severity, spreadsheet_safe(item.where),
                             "" if item.linked_from is None else item.linked_from,
                             spreadsheet_safe(item.found_on[0]) if item.found_on else "",
                             spreadsheet_safe(json.dumps(details, ensure_ascii=False))
                             if details else ""])
