"""The audit as a JUnit XML report, the format CI services show as test results.

Each finding is a test suite and each of its items a test case; the items of
the findings ``--fail-on`` names are failures (the run fails on them: exit 6),
the others pass with their details in ``system-out``. A finding with no item
is one passing case, so a dashboard shows the check was made. GitHub, GitLab and
Jenkins read this shape (the schema the tests validate it against is theirs in
common: ``tests/schemas/junit.xsd``).
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from crawler.audit.item import FindingItem
from crawler.audit.names import CHANGES, FINDINGS
from crawler.audit.triage import triage_of
from sitemap_writer.serialize import xml_text


def write_junit(out: TextIO, document: dict[str, Any], failing: list[str]) -> None:
    found = document["findings"]
    names = [*FINDINGS, *(name for name in CHANGES if name in found)]
    suites = []
    total = failures = 0
    for name in names:
        items = found[name]["items"]
        fails = name in failing
        cases = [_case(name, item, fails) for item in items] or [
            f'    <testcase classname={quoteattr(name)} name={quoteattr("none")}/>']
        count = max(1, len(items))
        failed = len(items) if fails else 0
        total += count
        failures += failed
        suites.append(f'  <testsuite name={quoteattr(name)} tests="{count}" '
                      f'failures="{failed}" errors="0" skipped="0">\n'
                      + "\n".join(cases) + "\n  </testsuite>")
    title = f"sitemap-crawler audit of {document['start_url']}"
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n'
              f'<testsuites name={quoteattr(title)} tests="{total}" failures="{failures}" '
              f'errors="0" time="{document["totals"]["elapsed_seconds"]}">\n')
    out.write("\n".join(suites))
    out.write("\n</testsuites>\n")


def _case(name: str, item: dict[str, Any], fails: bool) -> str:
    what = FindingItem.of(item).label
    details = xml_text(json.dumps(item, ensure_ascii=False, indent=1))
    head = f"    <testcase classname={quoteattr(name)} name={quoteattr(what)}>"
    if fails:
        triage = triage_of(name)
        message = quoteattr(f"{name}: {what} ({triage.severity}: {triage.why} How to fix: "
                            f"{triage.how})")
        body = f"      <failure message={message} type={quoteattr(name)}>{details}</failure>"
    else:
        triage = triage_of(name)
        body = (f"      <system-out>[{triage.severity}] {xml_text(triage.why)} How to fix: "
                f"{xml_text(triage.how)}\n{details}</system-out>")
    return f"{head}\n{body}\n    </testcase>"


def quoteattr(text: str) -> str:
    """An attribute's value, quoted: the one XML text function, escaped (its quotes too)."""
    return f'"{xml_text(text)}"'
