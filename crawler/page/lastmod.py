"""Which ``<lastmod>`` a page gets, and when its content last changed — pure.

``--lastmod`` modes:

======  ==============================================================
auto    ``Last-Modified`` when the server sends a trustworthy one;
        otherwise, with ``--state``, the time the page's content
        fingerprint was first seen to change (unknown on a first run,
        so omitted)
header  ``Last-Modified`` only
none    never a lastmod
======  ==============================================================

A wrong lastmod is worse than none: search engines that catch a site
publishing inaccurate dates stop trusting all of them.
"""

from __future__ import annotations

from datetime import datetime
from itertools import pairwise

LASTMOD_MODES = ("auto", "header", "none")


def choose_lastmod(
    mode: str, header: datetime | None, content_changed: datetime | None
) -> datetime | None:
    if mode == "none":
        return None
    if mode == "header":
        return header
    return header if header is not None else content_changed


def content_history(
    new_hash: bytes | None,
    old_hash: bytes | None,
    old_changed: datetime | None,
    now: datetime,
) -> tuple[bytes | None, datetime | None]:
    """The fingerprint to keep and the time the content last changed.

    Only a difference between two *known* fingerprints is a change. A fetch
    that produced none (an error, a non-HTML answer) keeps the old history.
    """
    if new_hash is None:
        return old_hash, old_changed
    if old_hash is None or old_hash == new_hash:
        return new_hash, old_changed
    return new_hash, now


def median_interval(changes: tuple[int, ...]) -> float | None:
    """The median number of seconds between observed content changes; ``None`` until
    two changes were seen (one change tells when, not how often)."""
    if len(changes) < 2:
        return None
    gaps = sorted(later - earlier for earlier, later in pairwise(changes))
    middle = len(gaps) // 2
    return float(gaps[middle]) if len(gaps) % 2 else (gaps[middle - 1] + gaps[middle]) / 2
