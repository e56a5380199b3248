"""Links that leave the crawl's scope, kept in kilobytes however many there are.

A page can link 100,000 other sites; a crawler that remembers each as a string
(in its seen set, its skipped list and its state) spends megabytes on URLs it
will never request. Per reason (``external``, ``other-host-same-site``,
``out-of-scope``) this keeps:

* a **sample**: the first :data:`SAMPLE_SIZE` distinct URLs, with their depth,
  which the report lists as rows (on most sites that is all of them);
* a **distinct count**: exact while the sample holds every URL, then a
  HyperLogLog estimate (2,048 one-byte registers, about ±2.3 %) — a sketch
  that counts a URL seen twice once, so a re-crawl that replays stored links,
  or a resumed run that meets a page's links again, counts what a fresh run
  counts.

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
_BITS = 11
_REGISTERS = 1 << _BITS
_ALPHA = 0.7213 / (1 + 1.079 / _REGISTERS)


@dataclass(slots=True)
class _Kind:
    sample: dict[str, int] = field(default_factory=dict)  # url -> depth, in order found
    sketch: bytearray = field(default_factory=lambda: bytearray(_REGISTERS))
    full: bool = False  # a URL was left out of the sample

    def count(self) -> tuple[int, bool]:
        """(distinct URLs, whether that is an estimate)."""
        if not self.full:
            return len(self.sample), False
        return max(len(self.sample) + 1, round(_estimate(self.sketch))), True


class OutsideLinks:
    """Out-of-scope URLs by reason: a bounded sample and a distinct count each."""

    def __init__(self) -> None:
        self._kinds: dict[Verdict, _Kind] = {}

    def add(self, url: str, depth: int, reason: Verdict) -> SkippedUrl | None:
        """Count ``url``; the :class:`SkippedUrl` to report if it joins the sample."""
        kind = self._kinds.get(reason)
        if kind is None:
            kind = self._kinds[reason] = _Kind()
        if url in kind.sample:
            return None
        _record(kind.sketch, url)
        if len(kind.sample) >= SAMPLE_SIZE:
            kind.full = True
            return None
        kind.sample[url] = depth
        return SkippedUrl(url, depth, reason)

    def restore(self, item: SkippedUrl) -> None:
        """Re-enter a sampled URL of an interrupted run (its sketch comes from ``load``)."""
        kind = self._kinds.setdefault(item.reason, _Kind())
        kind.sample[item.url] = item.depth

    def counts(self) -> dict[str, dict[str, int | bool]]:
        """For the report: per reason, distinct URLs, whether estimated, how many listed."""
        summary: dict[str, dict[str, int | bool]] = {}
        for reason, kind in sorted(self._kinds.items(), key=lambda pair: pair[0].value):
            total, estimated = kind.count()
            summary[reason.value] = {"urls": total, "estimated": estimated,
                                     "in_report": len(kind.sample)}
        return summary

    def dump(self) -> str:
        """The sketches, for the state (the samples are stored as skipped rows)."""
        return json.dumps({reason.value: [kind.full, base64.b64encode(kind.sketch).decode()]
                           for reason, kind in self._kinds.items()})

    def load(self, text: str | None) -> None:
        for value, (full, sketch) in json.loads(text or "{}").items():
            kind = self._kinds.setdefault(Verdict(value), _Kind())
            kind.full = bool(full)
            kind.sketch = bytearray(base64.b64decode(sketch))


def _record(sketch: bytearray, url: str) -> None:
    value = int.from_bytes(hashlib.blake2b(url.encode("utf-8", "surrogatepass"),
                                           digest_size=8).digest(), "big")
    index = value >> (64 - _BITS)
    rest = value & ((1 << (64 - _BITS)) - 1)
    rank = (64 - _BITS) - rest.bit_length() + 1
    if rank > sketch[index]:
        sketch[index] = rank


def _estimate(sketch: bytearray) -> float:
    raw = _ALPHA * _REGISTERS * _REGISTERS / sum(2.0 ** -rank for rank in sketch)
    zeros = sketch.count(0)
    if raw <= 2.5 * _REGISTERS and zeros:
        return _REGISTERS * math.log(_REGISTERS / zeros)  # linear counting for small sets
    return raw
