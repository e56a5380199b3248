"""robots.txt policy: RFC 9309's own examples, its status rules, and page-level directives."""

from __future__ import annotations

import pytest

from crawler.urls.robots import (
    RobotsMode,
    header_directives,
    meta_directives,
    policy_from_response,
)

# RFC 9309 §5.1 (simple example), with the outcomes the RFC describes.
RFC9309_EXAMPLE = b"""\
User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
"""


@pytest.mark.parametrize(("token", "path", "allowed"), [
    ("foobot", "/example/page.html", True),
    ("foobot", "/example/allowed.gif", True),
    ("foobot", "/example/other.html", False),
    ("foobot", "/", False),
    ("barbot", "/example/page.html", False),
    ("bazbot", "/example/page.html", False),
    ("barbot", "/example/other.html", True),
    ("quxbot", "/anything", True),
    ("anybot", "/image.gif", False),
    ("anybot", "/example/x", False),
    ("anybot", "/publications/x", True),
    ("anybot", "/elsewhere", True),
])
def test_rfc9309_example(token: str, path: str, allowed: bool) -> None:
    policy = policy_from_response(200, RFC9309_EXAMPLE, token)
    assert policy.allows("http://example.com" + path) is allowed


# RFC 9309 §5.2: the longest match wins; on a tie, Allow wins.
@pytest.mark.parametrize(("rules", "path", "allowed"), [
    (b"User-agent: *\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
     "/example/page/disallowed.gif", False),
    (b"User-agent: *\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
     "/example/page/ok.gif", True),
    (b"User-agent: *\nDisallow: /a\nAllow: /a\n", "/a", True),
    (b"User-agent: *\nDisallow: /*.php$\n", "/index.php", False),
    (b"User-agent: *\nDisallow: /*.php$\n", "/index.php?x=1", True),
    (b"User-agent: *\nDisallow: /private\n", "/private-not/", False),
    (b"user-agent: SITEMAP-CRAWLER\ndisallow: /\n", "/x", False),
])
def test_matching_rules(rules: bytes, path: str, allowed: bool) -> None:
    policy = policy_from_response(200, rules, "sitemap-crawler")
    assert policy.allows("http://h" + path) is allowed


@pytest.mark.parametrize(("status", "mode"), [
    (200, RobotsMode.OBEY), (204, RobotsMode.OBEY), (401, RobotsMode.ALLOW_ALL),
    (403, RobotsMode.ALLOW_ALL), (404, RobotsMode.ALLOW_ALL), (500, RobotsMode.DISALLOW_ALL),
    (503, RobotsMode.DISALLOW_ALL), (None, RobotsMode.DISALLOW_ALL),
])
def test_status_rules(status: int | None, mode: RobotsMode) -> None:
    policy = policy_from_response(status, b"User-agent: *\nDisallow: /x\n", "bot")
    assert policy.mode is mode
    assert policy.allows("http://h/y") is (mode is not RobotsMode.DISALLOW_ALL)


def test_crawl_delay_for_our_token() -> None:
    rules = b"User-agent: sitemap-crawler\nCrawl-delay: 2.5\nDisallow: /nope\n"
    assert policy_from_response(200, rules, "sitemap-crawler").crawl_delay() == 2.5
    assert policy_from_response(200, rules, "otherbot").crawl_delay() is None


def test_rules_beyond_500_kib_are_still_parsed() -> None:
    padding = b"# " + b"x" * 1000 + b"\n"
    body = b"User-agent: *\n" + padding * 515 + b"Disallow: /late\n"
    assert 500 * 1024 < len(body) < 512 * 1024
    assert not policy_from_response(200, body, "bot").allows("http://h/late")


@pytest.mark.parametrize(("contents", "noindex", "nofollow"), [
    (["noindex"], True, False), (["NOINDEX, NOFOLLOW"], True, True), (["none"], True, True),
    (["index, follow"], False, False), (["noarchive", "nofollow"], False, True),
    ([" NoIndex "], True, False), ([], False, False),
])
def test_meta_directives(contents: list[str], noindex: bool, nofollow: bool) -> None:
    directives = meta_directives(contents)
    assert (directives.noindex, directives.nofollow) == (noindex, nofollow)


@pytest.mark.parametrize(("values", "noindex", "nofollow"), [
    (["noindex"], True, False),
    (["googlebot: noindex"], False, False),
    (["sitemap-crawler: noindex, nofollow"], True, True),
    (["Sitemap-Crawler: NONE"], True, True),
    (["unavailable_after: 25 Jun 2010 15:00:00 PST"], False, False),
    (["max-snippet: 20, noindex"], True, False),
    (["otherbot: nofollow", "noindex"], True, False),
])
def test_x_robots_tag(values: list[str], noindex: bool, nofollow: bool) -> None:
    directives = header_directives(values, "sitemap-crawler")
    assert (directives.noindex, directives.nofollow) == (noindex, nofollow)


def test_a_robots_txt_over_512_kib_is_obeyed_up_to_its_last_whole_line() -> None:
    """Cut mid-line, ``Disallow: /private-area/`` would be read as ``Disallow: /``."""
    head = b"User-agent: *\nDisallow: /early/\n" + b"#" * 100 + b"\n"
    padding = b"# x\n" * ((512 * 1024 - len(head) - 12) // 4)
    body = head + padding + b"Disallow: /private-area/\n"
    assert len(body) > 512 * 1024 > len(head + padding) + len(b"Disallow: /")
    policy = policy_from_response(200, body, "sitemap-crawler")
    assert not policy.allows("https://h/early/x")
    assert policy.allows("https://h/") and policy.allows("https://h/private-area/")
