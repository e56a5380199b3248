from __future__ import annotations

import pytest

from crawler.core.records import Verdict
from crawler.urls.scope import Scope, default_prefix, registered_domain


@pytest.mark.parametrize(("start", "prefix"), [
    ("http://h/", "/"), ("http://h/docs/index.html", "/docs/"), ("http://h/docs", "/"),
    ("http://h/a/b/", "/a/b/"),
])
def test_default_prefix_is_start_path_up_to_last_slash(start: str, prefix: str) -> None:
    assert default_prefix(start) == prefix


SCOPE = Scope.for_start("https://www.example.com/docs/", None)


@pytest.mark.parametrize(("url", "inside"), [
    ("https://www.example.com/docs/", True),
    ("https://www.example.com/docs/a/b?c=1", True),
    ("https://www.example.com/docs", False),
    ("https://www.example.com/docs-old/", False),
    ("https://www.example.com/", False),
    ("http://www.example.com/docs/", False),
    ("https://www.example.com:8443/docs/", False),
    ("https://example.com/docs/", False),
    ("https://www.example.com.evil.net/docs/", False),
])
def test_scope_contains(url: str, inside: bool) -> None:
    assert SCOPE.contains(url) is inside


def test_prefix_without_slash_admits_whole_segments_only() -> None:
    scope = Scope.for_start("http://h/docs/x", "/docs")
    assert scope.contains("http://h/docs")
    assert scope.contains("http://h/docs/a")
    assert scope.contains("http://h/docs?x=1")
    assert not scope.contains("http://h/docs-old")


def test_explicit_default_port_is_the_same_scope() -> None:
    scope = Scope.for_start("https://h:443/", None)
    assert scope.contains("https://h/x")


@pytest.mark.parametrize(("url", "verdict"), [
    ("https://www.example.com/blog/", Verdict.OUT_OF_SCOPE),
    ("https://blog.example.com/", Verdict.OTHER_HOST),
    ("https://www.example.com:8443/docs/", Verdict.OTHER_HOST),
    ("https://other.org/", Verdict.EXTERNAL),
    ("https://example.com/", Verdict.OTHER_HOST),
    ("https://a.b.example.com/", Verdict.OTHER_HOST),
    ("https://notexample.com/", Verdict.EXTERNAL),  # a suffix, but not at a label
    ("https://example.com.evil.test/", Verdict.EXTERNAL),
    ("http://127.0.0.1/", Verdict.EXTERNAL),
])
def test_outside_urls_are_classified(url: str, verdict: Verdict) -> None:
    assert SCOPE.classify_outside(url) is verdict


def test_co_uk_is_a_public_suffix_offline() -> None:
    scope = Scope.for_start("https://www.shop.co.uk/", None)
    assert scope.classify_outside("https://other.co.uk/") is Verdict.EXTERNAL
    assert scope.classify_outside("https://blog.shop.co.uk/") is Verdict.OTHER_HOST


_OWN_HOSTS = ["www.example.com", "example.com", "www.shop.co.uk", "a.b.github.io",
              "127.0.0.1", "localhost", "site.test", "www.example.com.", "site.test.",
              "co.uk", "docs.python.org", "[::1]"]
_OTHER_HOSTS = ["other.org", "example.com", "blog.example.com", "notexample.com",
                "other.co.uk", "shop.co.uk", "x.shop.co.uk", "github.io", "c.github.io",
                "10.0.0.1", "127.0.0.2", "0.1", "a.localhost", "localhost", "other.test",
                "x.site.test", "x.site.test.", "example.com.", "x.example.com.", "co.uk",
                "python.org", "bugs.python.org", "[::2]", "org", "com"]


@pytest.mark.parametrize("own", _OWN_HOSTS)
def test_the_public_suffix_list_is_asked_only_when_a_host_could_share_our_domain(
        own: str) -> None:
    """A host that does not end with our host's last two labels cannot be under our
    registered domain, which is at least those two labels: the crawl must not stop
    for the suffix list's answer (worked out in a child) to say so."""
    scope = Scope.for_start(f"https://{own}/", None)
    ours = registered_domain(own.strip("[]").rstrip(".")) or own
    asked: list[str] = []

    def oracle() -> str:
        asked.append(own)
        return ours

    for other in _OTHER_HOSTS:
        url = f"http://{other}/page"
        del asked[:]
        verdict = scope.classify_outside(url, oracle)
        # the same verdict as the full rule, which always asks
        assert verdict is scope.classify_outside(url, lambda: ours), (own, other)
        tail = ".".join(own.strip("[]").split(".")[-2:])
        if not own.endswith(".") and not (other == tail or other.endswith("." + tail)):
            assert asked == [], (own, other)
            assert verdict is Verdict.EXTERNAL
    if own.startswith("["):
        return
    # and a host that does share them is answered from the list
    del asked[:]
    assert scope.classify_outside(f"http://x.{own.strip('[]').rstrip('.')}/", oracle) \
        is Verdict.OTHER_HOST
    assert asked == [own]
