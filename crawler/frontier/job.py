"""One URL to fetch, as the frontier hands it out and the state keeps it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.page.soft_404 import ProbeAnswer


@dataclass(frozen=True, slots=True)
class Job:
    """One URL to fetch. ``hops`` counts the redirects that led here, ``chain``
    names them (kept in memory only, for loop detection)."""

    url: str
    depth: int
    hops: int = 0
    chain: tuple[str, ...] = ()
    # conditional-request headers from the state of earlier runs
    validators: tuple[tuple[str, str], ...] = ()
    # what a made-up URL in its directory answered, when that was a page: attached as
    # the job is fetched (crawler.engine.soft_404), never queued or stored
    probe: ProbeAnswer | None = None
