"""Links that leave the crawl's scope, kept in kilobytes however many there are.

A page can link 100,000 other sites; a crawler that remembers each as a string
(in its seen set, its skipped list and its state) spends megabytes on URLs it
will never request. Per reason (``external``, ``other-host-same-site``,
``out-of-scope``) this keeps:

* a **sample**: the first :data:`SAMPLE_SIZE` distinct URLs, with their depth,
  which the report lists as rows (on most sites that is all of them);
* a **distinct count**: exact up to :data:`EXACT_UP_TO` URLs (their 64-bit
  hashes kept), then a HyperLogLog estimate (2,048 one-byte registers, about
  ±2.3 %) — a sketch that counts a URL seen twice once, so a re-crawl that
  replays stored links, or a resumed run that meets a page's links again,
  counts what a fresh run counts.

Across reasons it also counts the **links** to those URLs (a page's link to a
URL counts once) and the **pages** holding at least one: with the distinct URLs,
the three numbers every summary and report gives, under the same three names.

The sketches are plain bytes, saved in the state with the pages that fed them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from dataclasses import dataclass, field

from crawler.core.records import SkippedUrl, Verdict

SAMPLE_SIZE = 1000
# distinct URLs of a reason counted exactly (a hash each, about 60 bytes: 1.2 MB at
# most, dropped when passed) before the estimate: the PostgreSQL and Python docs link
# 1,675 and 3,662, and their summaries must give the number the audit's link checks,
# which count exactly, give
EXACT_UP_TO = 20_000
_BITS = 11
_REGISTERS = 1 << _BITS
_ALPHA = 0.7213 / (1 + 1.079 / _REGISTERS)


@dataclass(slots=True)
class _Kind:
    sample: dict[str, int] = field(default_factory=dict)  # url -> depth, in order found
    sketch: bytearray = field(default_factory=lambda: bytearray(_REGISTERS))
    full: bool = False  # a URL was left out of the sample
    # the hashes of the URLs past the sample, up to EXACT_UP_TO; None past them
    hashes: set[int] | None = field(default_factory=set)

    def count(self) -> tuple[int, bool]:
        """(distinct URLs, whether that is an estimate)."""
        if not self.full:
            return len(self.sample), False
        if self.hashes is not None:
            return len(self.sample) + len(self.hashes), False
        return max(len(self.sample) + 1, round(_estimate(self.sketch))), True


class OutsideLinks:
    """Out-of-scope URLs by reason: a bounded sample and a distinct count each."""

    def __init__(self) -> None:
        self._kinds: dict[Verdict, _Kind] = {}
        self.links = 0  # links to out-of-scope URLs (once a page for each URL)
        self.pages = 0  # pages holding at least one

    def page_links(self, count: int) -> None:
        """A page holding ``count`` distinct links out of the scope."""
        if count:
            self.links += count
            self.pages += 1

    def add(self, url: str, depth: int, reason: Verdict) -> SkippedUrl | None:
        """Count ``url``; the :class:`SkippedUrl` to report if it joins the sample."""
        kind = self._kinds.get(reason)
        if kind is None:
            kind = self._kinds[reason] = _Kind()
        if url in kind.sample:
            return None
        value = _record(kind.sketch, url)
        if len(kind.sample) >= SAMPLE_SIZE:
            kind.full = True
            if kind.hashes is not None:
                kind.hashes.add(value)
                if len(kind.hashes) + SAMPLE_SIZE > EXACT_UP_TO:
                    kind.hashes = None  # the sketch counts from here
            return None
        kind.sample[url] = depth
        return SkippedUrl(url, depth, reason)

    def restore(self, item: SkippedUrl) -> None:
        """Re-enter a sampled URL of an interrupted run (its sketch comes from ``load``)."""
        kind = self._kinds.setdefault(item.reason, _Kind())
        kind.sample[item.url] = item.depth

    def totals(self) -> dict[str, int | bool]:
        """The three numbers: distinct out-of-scope URLs (``estimated`` when any
        reason's count is), the links to them, the pages holding those links."""
        counted = [kind.count() for kind in self._kinds.values()]
        return {"urls": sum(total for total, _about in counted),
                "estimated": any(about for _total, about in counted),
                "links": self.links, "pages": self.pages}

    def counts(self) -> dict[str, dict[str, int | bool]]:
        """For the report: per reason, distinct URLs, whether estimated, how many listed."""
        summary: dict[str, dict[str, int | bool]] = {}
        for reason, kind in sorted(self._kinds.items(), key=lambda pair: pair[0].value):
            total, estimated = kind.count()
            summary[reason.value] = {"urls": total, "estimated": estimated,
                                     "in_report": len(kind.sample)}
        return summary

    def dump(self) -> str:
        """The sketches and counts, for the state (the samples are stored as skipped
        rows; the exact hashes past them are not: a resumed run past the sample
        counts by the sketch)."""
        kinds: dict[str, object] = {
            reason.value: [kind.full, base64.b64encode(kind.sketch).decode()]
            for reason, kind in self._kinds.items()}
        kinds["~links"] = [self.links, self.pages]
        return json.dumps(kinds)

    def load(self, text: str | None) -> None:
        kinds = json.loads(text or "{}")
        self.links, self.pages = kinds.pop("~links", (0, 0))
        for value, (full, sketch) in kinds.items():
            kind = self._kinds.setdefault(Verdict(value), _Kind())
            kind.full = bool(full)
            kind.sketch = bytearray(base64.b64decode(sketch))
            if kind.full:
                kind.hashes = None


def _record(sketch: bytearray, url: str) -> int:
    """Enter ``url`` in the sketch; its 64-bit hash."""
    value = int.from_bytes(hashlib.blake2b(url.encode("utf-8", "surrogatepass"),
                                           digest_size=8).digest(), "big")
    index = value >> (64 - _BITS)
    rest = value & ((1 << (64 - _BITS)) - 1)
    rank = (64 - _BITS) - rest.bit_length() + 1
    if rank > sketch[index]:
        sketch[index] = rank
    return value


def _estimate(sketch: bytearray) -> float:
    raw = _ALPHA * _REGISTERS * _REGISTERS / sum(2.0 ** -rank for rank in sketch)
    zeros = sketch.count(0)
    if raw <= 2.5 * _REGISTERS and zeros:
        return _REGISTERS * math.log(_REGISTERS / zeros)  # linear counting for small sets
    return raw
