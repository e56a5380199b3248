"""One URL to fetch, as the frontier hands it out and the state keeps it."""

from __future__ import annotations

from dataclasses import dataclass


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
