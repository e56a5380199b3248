"""The soft-404 probes as a report tells them: grouped by what they answered.

A crawl asks up to 20 of them (crawler.engine.soft_404), one line each would
fill a screen with "answered 404", so a report says how many answered each way
and names the first few of each, the others a click away."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NAMED = 3  # probes named in each group; the rest counted


@dataclass(frozen=True, slots=True)
class ProbeGroup:
    """Probes that answered alike: the status, what it meant, and their URLs."""

    count: int
    status: int | None
    answer: str | None
    urls: tuple[str, ...]

    @property
    def named(self) -> tuple[str, ...]:
        return self.urls[:NAMED]

    @property
    def more(self) -> tuple[str, ...]:
        return self.urls[NAMED:]

    def said(self) -> str:
        """"2 answered 200 (a page, compared)", without the URLs."""
        unasked = "was not asked" if self.count == 1 else "were not asked"
        answered = f"answered {self.status}" if self.status is not None else unasked
        if self.status is not None and self.answer:
            answered += f" ({self.answer})"
        elif self.answer:
            answered = f"{unasked} ({self.answer.removeprefix('not asked: ')})"
        return f"{self.count:,} {answered}"


def probe_groups(probes: list[dict[str, Any]]) -> list[ProbeGroup]:
    """The probes by (status, answer), in the order each answer first came."""
    grouped: dict[tuple[int | None, str | None], list[str]] = {}
    for probe in probes:
        grouped.setdefault((probe.get("status"), probe.get("answer")), []).append(probe["url"])
    return [ProbeGroup(len(urls), status, answer, tuple(urls))
            for (status, answer), urls in grouped.items()]
