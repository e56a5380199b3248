"""What checking one external link found (``external.py``), and the reasons a link
was not asked: values the audit's findings and the state file read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.config import CrawlConfig
    from crawler.http.address_rule import NetworkRule

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


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """What checking external links needs of a crawl's configuration, taken once."""

    timeout: float  # --external-timeout: a request's total seconds
    rate: float  # --external-rate: requests a second to an origin, at first
    max_rate: float  # --external-max-rate
    deadline: float  # --external-deadline: the whole phase's seconds (0: none)
    retries: int  # 429 and 503 asked again, this many times at most
    max_retry_after: float
    max_page_bytes: int  # --check-fragments: a page read for its anchors, at most
    concurrency: int  # origins checked at once
    user_agent: str
    robots_token: str
    rule: NetworkRule  # where a check may connect (address_rule.py)

    @classmethod
    def of(cls, config: CrawlConfig) -> CheckOptions:
        from crawler.http.address_rule import rule_for_config

        return cls(timeout=config.external_timeout, rate=config.external_rate,
                   max_rate=config.external_max_rate, deadline=config.external_deadline,
                   retries=config.retries, max_retry_after=config.max_retry_after,
                   max_page_bytes=config.max_page_bytes, concurrency=config.concurrency,
                   user_agent=config.user_agent, robots_token=config.robots_token,
                   rule=rule_for_config(config))
