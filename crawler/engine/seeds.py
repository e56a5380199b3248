"""URLs a crawl is given rather than finds: ``--urls`` and ``--from-sitemap`` (seeds
beside START_URL, or with ``--no-follow`` the whole of the list), and
``--add-urls`` (known pages no link reaches, fetched once the links are done).

A list is read a line at a time as it is admitted, never held: a list of a
million URLs costs the frontier's memory, which spills to disk, not a second
copy. Lines that are not absolute http(s) URLs are counted and the first few
reported; one bad line does not throw away a list of thousands.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from crawler.core.records import Verdict
from crawler.urls.normalize import normalize_url

EXAMPLES = 5  # bad lines, and refused --add-urls, named in the report
REFUSED_NAMED = 100


@dataclass(slots=True)
class SeedCounts:
    """What became of one list: for the report and the summary line."""

    given: int = 0  # URLs read (valid lines)
    invalid: int = 0
    invalid_examples: list[str] = field(default_factory=list)
    source: str | None = None  # --from-sitemap: robots.txt, well-known, given or none
    listed: int = 0  # --add-urls: how many turned out listable
    refused: int = 0
    refused_examples: list[dict[str, str]] = field(default_factory=list)
    judging: bool = False  # --add-urls: each is listed or refused

    def bad_line(self, number: int, line: str) -> None:
        self.invalid += 1
        if len(self.invalid_examples) < EXAMPLES:
            self.invalid_examples.append(f"line {number}: {line[:200]!r}")

    def judged(self, url: str, verdict: Verdict) -> None:
        if verdict is Verdict.LISTED:
            self.listed += 1
            return
        self.refused += 1
        if len(self.refused_examples) < REFUSED_NAMED:
            self.refused_examples.append({"url": url, "reason": verdict.value})

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"given": self.given}
        if self.invalid:
            shown["invalid"], shown["invalid_examples"] = self.invalid, self.invalid_examples
        if self.source is not None:
            shown["source"] = self.source
        if self.judging:
            shown["listed"], shown["refused"] = self.listed, self.refused
            shown["refused_examples"] = self.refused_examples
        return shown


def read_url_list(path: str, counts: SeedCounts) -> Iterator[str]:
    """The normalised URLs of a list file (``-``: standard input), one a line;
    blank lines and ``#`` comments skipped."""
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
    try:
        for number, raw in enumerate(stream, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            url = normalize_url(line)
            if url is None:
                counts.bad_line(number, line)
                continue
            counts.given += 1
            yield url
    finally:
        if stream is not sys.stdin:
            stream.close()
