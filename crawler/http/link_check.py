"""What checking one external link found (``external.py``), and the reasons a link
was not asked: values the audit's findings and the state file read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# what a LinkCheck's error says when the link was not asked: neither broken nor fine
NOT_CHECKED = "not-checked"  # the phase's deadline came first
PRIVATE = "private-address"  # the network rule keeps it closed
UNREACHABLE = "origin-unreachable"  # its origin failed UNREACHABLE_AFTER times in a row
UNASKED = frozenset({NOT_CHECKED, PRIVATE, UNREACHABLE})
FAILED_TO_ANSWER = frozenset({"timeout", "connection"})  # what a given-up origin's links said


@dataclass(slots=True)
class LinkCheck:
    """What one external URL answered."""

    url: str
    status: int | None = None  # the final answer's, after redirects
    final_url: str | None = None  # where its redirects end (None: it did not redirect)
    hops: int = 0
    error: str | None = None  # timeout, connection, tls, too-many-redirects, …
    disallowed: bool = False  # its robots.txt disallows it to us: not requested
    checked_at: float = 0.0  # epoch seconds
    cached: bool = False
    # --check-fragments: the anchors of the page, when a link points into it (None: not read)
    ids: list[str] | None = None

    @property
    def unchecked(self) -> bool:
        """Never asked (deadline, network rule): nothing is known of it."""
        return self.error in UNASKED

    @property
    def broken(self) -> bool:
        return not self.disallowed and not self.unchecked and (
            self.error is not None or (self.status or 0) >= 400)


@dataclass(slots=True)
class Certificate:
    origin: str
    expires: datetime
