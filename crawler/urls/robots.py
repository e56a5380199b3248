"""robots.txt (RFC 9309) and page-level robots directives — pure.

What the status of ``/robots.txt`` means (RFC 9309 §2.3.1):

====================  ===========================================
status                policy
====================  ===========================================
2xx                   obey the rules (protego; our token, ``*``)
4xx (and too many     allow everything: "unavailable"
redirects)
5xx, network error    disallow everything: "unreachable"
====================  ===========================================

Protego implements the matching (longest match wins, Allow wins ties, ``*``
and ``$``); the stdlib parser does first-match and no wildcards, so it would
publish pages a site disallows.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from protego import Protego


# RFC 9309 §2.5: crawlers must parse at least the first 500 KiB.
MAX_ROBOTS_BYTES = 512 * 1024
# Page-level directives that carry a value after a colon; any other "word:"
# at the start of an X-Robots-Tag value names a user agent.
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)


class RobotsMode(enum.Enum):
    OBEY = "obey"
    ALLOW_ALL = "allow-all"
    DISALLOW_ALL = "disallow-all"


@dataclass(frozen=True, slots=True)
class RobotsPolicy:
    """The answer to "may we fetch this URL?" for one site and one token."""

    mode: RobotsMode
    token: str
    rules: Protego | None = None

    def allows(self, url: str) -> bool:
        if self.mode is RobotsMode.OBEY and self.rules is not None:
            return bool(self.rules.can_fetch(url, self.token))
        return self.mode is RobotsMode.ALLOW_ALL

    def crawl_delay(self) -> float | None:
        if self.rules is None:
            return None
        delay = self.rules.crawl_delay(self.token)
        return float(delay) if delay is not None else None


def parsed_part(body: bytes | None) -> str:
    """The part of a robots.txt we obey: its first 512 KiB, cut after the last whole
    line in them. Cut mid-line, ``Disallow: /private-area/`` would read ``Disallow: /``."""
    head = (body or b"")[:MAX_ROBOTS_BYTES]
    if len(body or b"") > MAX_ROBOTS_BYTES:
        end = max(head.rfind(b"\n"), head.rfind(b"\r"))
        head = head[:end + 1]
    return head.decode("utf-8", errors="replace")


def rules_of(body: bytes | None) -> Protego:
    """robots.txt's rules, as protego reads them; protego is imported by the first
    robots.txt read (``coordinator.py`` has it loaded while that one travels)."""
    from protego import Protego

    return Protego.parse(parsed_part(body))


def allow_all(token: str) -> RobotsPolicy:
    return RobotsPolicy(RobotsMode.ALLOW_ALL, token)


def policy_from_response(status: int | None, body: bytes | None, token: str) -> RobotsPolicy:
    """Turn the outcome of fetching robots.txt into a policy.

    ``status`` is ``None`` when the server could not be reached at all.
    """
    if status is None or status >= 500:
        return RobotsPolicy(RobotsMode.DISALLOW_ALL, token)
    if 200 <= status < 300:
        return RobotsPolicy(RobotsMode.OBEY, token, rules_of(body))
    return RobotsPolicy(RobotsMode.ALLOW_ALL, token)


@dataclass(frozen=True, slots=True)
class Directives:
    noindex: bool = False
    nofollow: bool = False

    def __or__(self, other: Directives) -> Directives:
        return Directives(self.noindex or other.noindex, self.nofollow or other.nofollow)


def _apply(words: Iterable[str]) -> Directives:
    noindex = nofollow = False
    for word in words:
        word = word.strip().lower()
        if word in ("noindex", "none"):
            noindex = True
        if word in ("nofollow", "none"):
            nofollow = True
    return Directives(noindex, nofollow)


def meta_directives(contents: Iterable[str]) -> Directives:
    """Directives from ``<meta name="robots|TOKEN" content=...>`` values."""
    return _apply(word for content in contents for word in content.split(","))


def header_directives(values: Iterable[str], token: str) -> Directives:
    """Directives from ``X-Robots-Tag`` headers that apply to us.

    ``X-Robots-Tag: otherbot: noindex`` addresses another crawler and is ignored;
    ``X-Robots-Tag: sitemap-crawler: noindex`` and a bare ``noindex`` apply.
    """
    result = Directives()
    for value in values:
        head, colon, tail = value.partition(":")
        agent = head.strip().lower()
        if colon and agent not in _VALUED_DIRECTIVES and " " not in agent and "," not in agent:
            if agent != token:
                continue
            value = tail
        result = result | _apply(value.split(","))
    return result


def sitemap_lines(body: bytes | None) -> list[str]:
    """The ``Sitemap:`` URLs a robots.txt names, in order, each once (RFC 9309 §2.2.4
    leaves them to the Sitemaps protocol: absolute URLs, any host)."""
    if not body:
        return []
    return list(dict.fromkeys(url.strip() for url in rules_of(body).sitemaps
                              if url.strip()))
