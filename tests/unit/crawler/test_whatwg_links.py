"""Links read as browsers read them: resolve_link against a WHATWG URL parser (ada-url).

Browsers are the reference for links: a URL no visitor's browser would request
should not be listed. ``resolve_link`` must agree with the WHATWG URL standard
*up to our canonical spelling*: for every base and href, our result equals
``normalize_url`` of what a WHATWG parser resolves (both ``None`` when the
parser refuses the href). The differences that remain are listed in
:func:`_expected_difference`, each with why we differ.
"""

from __future__ import annotations

import re

import ada_url
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from crawler.urls.normalize import normalize_url, resolve_link
from crawler.urls.page_links import PageLinks

# RFC 3986 §3, for http(s) URIs without fragment, as this project writes them
_PCT, _UNRESERVED, _SUB = r"%[0-9A-F]{2}", r"[A-Za-z0-9\-._~]", r"[!$&'()*+,;=]"
_PCHAR = rf"(?:{_UNRESERVED}|{_PCT}|{_SUB}|[:@])"
RFC3986_HTTP_URI = re.compile(
    rf"https?://(?:\[[0-9a-f:.]+\]|(?:{_UNRESERVED}|{_PCT}|{_SUB})+)(?::[0-9]+)?"
    rf"(?:/{_PCHAR}*)+(?:\?(?:{_PCHAR}|[/?])*)?")

BASES = [
    "http://a.test/",
    "http://a.test/dir/page.html",
    "https://a.test:8443/dir/sub/?q=1",
    "http://127.0.0.1:8080/x/y",
]


def _whatwg(base: str, href: str) -> str | None:
    try:
        return ada_url.join_url(base, href)
    except ValueError:
        return None


def _host(url: str) -> str:
    return ada_url.URL(url).hostname


def _expected_difference(browser: str | None) -> str | None:
    """Why our answer may differ from the browser's for this href, or ``None``."""
    if browser is None:
        return None
    scheme = browser.partition(":")[0]
    if scheme not in ("http", "https"):
        return "not a web page: only http(s) links are crawled"
    host = _host(browser)
    if host.startswith("["):
        return None
    if any(char in host for char in "!\"$&'()*+,;={}`~") or "%" in host:
        return "a host no DNS name can hold, and not a valid RFC 3986 host: refused"
    labels = host.split(".")
    if "" in labels[:-1] or (labels[-1] == "" and len(labels) == 1):
        return "an empty label (.a.test, a..test): no DNS name, refused"
    if any(label.startswith("xn--") for label in labels):
        return ("an xn-- label: UTS #46 §4 refuses invalid Punycode, which this ada "
                "version accepts; we follow the standard")
    return None


def _check(base: str, href: str) -> None:
    browser = _whatwg(base, href)
    ours = resolve_link(base, href)
    fast = PageLinks(base).resolve(href)
    assert fast == ours, (base, href)
    assert ours is None or RFC3986_HTTP_URI.fullmatch(ours), ours
    if _expected_difference(browser) is not None:
        if ours is not None:
            # where we differ, it is only by refusing; what we accept is what browsers ask
            assert ours == normalize_url(browser or ""), (base, href, browser)
        return
    expected = normalize_url(browser) if browser is not None else None
    assert ours == expected, f"{base!r} + {href!r}: browser {browser!r}, ours {ours!r}"


HAND_WRITTEN = [
    # backslashes are slashes in the scheme, authority and path (not in query or fragment)
    ("http://a.test/dir/page.html", "..\\index.htm", "http://a.test/index.htm"),
    ("http://a.test/dir/page.html", "img\\a.png", "http://a.test/dir/img/a.png"),
    ("http://a.test/", "http://example.com\\foo", "http://example.com/foo"),
    ("http://a.test/", "https://evil.test\\@good.test/", "https://evil.test/@good.test/"),
    ("http://a.test/", "\\\\other.test\\x", "http://other.test/x"),
    ("http://a.test/", "http:\\\\other.test", "http://other.test/"),
    ("http://a.test/", "/p?q=a\\b", "http://a.test/p?q=a%5Cb"),
    # ' in a query is %27, as browsers send it; in a path it stays
    ("http://a.test/", "/it's?q=it's", "http://a.test/it's?q=it%27s"),
    ("http://a.test/", "?q=%27", "http://a.test/?q=%27"),
    # cross-scheme without slashes, and extra slashes
    ("http://a.test/", "https:example.com/", "https://example.com/"),
    ("http://a.test/", "https:/example.com/", "https://example.com/"),
    ("http://a.test/", "///host/path", "http://host/path"),
    ("http://a.test/", "http:///host/", "http://host/"),
    ("http://a.test/dir/", "http:g", "http://a.test/dir/g"),  # same scheme: relative
    # hosts
    ("http://a.test/", "http://\U0001f4a9.la/", "http://xn--ls8h.la/"),
    ("http://a.test/", "http://\u2603.net/", "http://xn--n3h.net/"),
    ("http://a.test/", "http://fa\u00df.de/", "http://xn--fa-hia.de/"),  # non-transitional
    ("http://a.test/", "http://ex%41mple.com/", "http://example.com/"),
    ("http://a.test/", "http://%C3%A9t%C3%A9.fr/", "http://xn--t-9fab.fr/"),
    ("http://a.test/", "http://EXAMPLE.com./", "http://example.com./"),
    ("http://a.test/", "http://0x7f.1/", "http://127.0.0.1/"),
    ("http://a.test/", "http://2130706433/", "http://127.0.0.1/"),
    ("http://a.test/", "http://0177.0.0.1/", "http://127.0.0.1/"),
    ("http://a.test/", "http://[0:0:0:0:0:ffff:c0a8:1]/", "http://[::ffff:c0a8:1]/"),
    ("http://a.test/", "http://[::ffff:192.168.0.1]/", "http://[::ffff:c0a8:1]/"),
    ("http://a.test/", "http://[2001:DB8:0:0:1:0:0:1]:80/", "http://[2001:db8::1:0:0:1]/"),
    ("http://a.test/", "http://[1:0::]/", "http://[1::]/"),
    ("http://a.test/", "http://[::1%25eth0]/", None),
    ("http://a.test/", "http://[:::1]/", None),
    ("http://a.test/", "http://1.2.3.4.5/", None),
    ("http://a.test/", "http://256.0.0.1/", None),
    ("http://a.test/", "http://example.1/", None),  # ends in a number, not an IPv4 address
    ("http://a.test/", "http://xn--a.test/", None),  # not Punycode of a valid label
    ("http://a.test/", "http://xn--ls8h.la/", "http://xn--ls8h.la/"),
    ("http://a.test/", "http://%FF.test/", None),
]


@pytest.mark.parametrize(("base", "href", "expected"), HAND_WRITTEN)
def test_links_as_browsers_read_them(base: str, href: str, expected: str | None) -> None:
    assert resolve_link(base, href) == expected
    assert PageLinks(base).resolve(href) == expected
    _check(base, href)


def test_every_output_is_a_valid_rfc3986_uri() -> None:
    for _base, _href, expected in HAND_WRITTEN:
        if expected is not None:
            assert RFC3986_HTTP_URI.fullmatch(expected), expected
    assert not RFC3986_HTTP_URI.fullmatch("http://a.test/p?q=it's|x")  # the check can fail


# Hrefs built from the pieces where parsers disagree: slashes of both kinds, dots,
# escapes, quotes, authority delimiters, odd hosts, IPv4/IPv6 forms.
_PIECES = st.sampled_from([
    "/", "\\", "//", "\\\\", ".", "..", "./", "../", "..\\", "?", "#", "@", ":", ";", "=",
    "&", "'", '"', "%", "%2e", "%2E%2E", "%41", "%7E", "%2F", "%5C", "%27", "%C3%A9", "%FF",
    " ", "\t", "\n", "a", "b", "x.html", "é", "\u00df", "\U0001f4a9", "\u2603", "~", "|",
    "http:", "https:", "HTTP:", "mailto:", "javascript:", "ftp:", "a.test", "b.test", "EX.com",
    "xn--", "xn--ls8h", "0x7f", "127", "0", "1", "256", "[", "]", "::1", "[::1]",
    "[::ffff:1.2.3.4]", ":8080", ":80", ":443", ":", "{", "}", "^", "`", "<", ">",
])
HREFS = st.lists(_PIECES, min_size=1, max_size=8).map("".join)


@pytest.mark.slow(8)
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(BASES), href=HREFS)
@example(base="http://a.test/", href="https://evil.test\\@good.test/")
@example(base="http://a.test/dir/page.html", href="..\\index.htm")
def test_resolve_link_agrees_with_a_whatwg_parser(base: str, href: str) -> None:
    _check(base, href)


@settings(max_examples=1000, deadline=None)
@given(base=st.sampled_from(BASES),
       href=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30))
def test_resolve_link_agrees_on_arbitrary_text(base: str, href: str) -> None:
    _check(base, href)
