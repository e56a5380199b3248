from __future__ import annotations

import pytest

from crawler.config import CrawlConfig
from crawler.core.errors import ConfigError
from crawler.core.records import Verdict
from crawler.urls.filters import UrlFilters, compile_pattern

START = "https://shop.test/"


@pytest.mark.parametrize(("pattern", "url", "hit"), [
    ("/tag/*", "https://shop.test/tag/red", True),
    ("/tag/*", "https://shop.test/tag/red/page/2?x=1", True),
    ("/tag/*", "https://shop.test/tags/red", False),
    ("/tag/*", "https://shop.test/blog/tag/red", False),  # anchored at the path's start
    ("*?*sort=*", "https://shop.test/list?sort=price", True),
    ("*?*sort=*", "https://shop.test/list?page=2&sort=price", True),
    ("*?*sort=*", "https://shop.test/sort=price", False),  # "?" is a literal question mark
    ("*.php", "https://shop.test/a/b.php", True),
    ("*.php", "https://shop.test/a/b.php?x=1", False),  # the whole path-and-query must match
    ("*.php*", "https://shop.test/a/b.php?x=1", True),
    ("/a+b/[x]", "https://shop.test/a+b/[x]", True),  # no other glob syntax
    ("/a+b/[x]", "https://shop.test/aab/x", False),
    ("re:^/cart/", "https://shop.test/cart/view", True),
    ("re:^/cart/", "https://shop.test/x/cart/view", False),
    ("re:sessionid=\\d+", "https://shop.test/a?sessionid=42", True),  # searched
    ("re:(?i)/SEARCH", "https://shop.test/search?q=x", True),
    ("/caf%C3%A9/*", "https://shop.test/caf%C3%A9/x", True),  # normalised spelling
])
def test_pattern_matches_path_and_query(pattern: str, url: str, hit: bool) -> None:
    filters = UrlFilters(exclude=[pattern])
    assert (filters.refusal(url, START) is Verdict.EXCLUDED) is hit


@pytest.mark.parametrize(("option", "pattern", "words"), [
    ("--exclude", "re:(unclosed", "not a valid regular expression"),
    ("--include", "tag/*", "can never match"),
    ("--no-list", "", "needs a pattern"),
])
def test_an_invalid_pattern_names_itself(option: str, pattern: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        compile_pattern(pattern, option)
    assert option in str(caught.value) and words in str(caught.value)
    assert repr(pattern) in str(caught.value)


def test_config_refuses_an_invalid_pattern() -> None:
    with pytest.raises(ConfigError, match=r"--exclude 're:\['"):
        CrawlConfig(start_url=START, exclude=("re:[",))


def test_include_admits_only_matches_but_always_the_start_url() -> None:
    filters = UrlFilters(include=["/products/*"])
    assert filters.refusal(START, START) is None
    assert filters.refusal(START + "products/a", START) is None
    assert filters.refusal(START + "about", START) is Verdict.NOT_INCLUDED


def test_exclude_wins_over_include() -> None:
    filters = UrlFilters(include=["/products/*"], exclude=["*/old/*"])
    assert filters.refusal(START + "products/old/a", START) is Verdict.EXCLUDED


def test_no_list() -> None:
    filters = UrlFilters(no_list=["*?*page=*", "/tag/*"])
    assert filters.unlisted(START + "blog?page=2")
    assert filters.unlisted(START + "tag/x")
    assert not filters.unlisted(START + "blog")
    assert filters.refusal(START + "tag/x", START) is None  # still requested


@pytest.mark.parametrize(("url", "clean"), [
    ("https://shop.test/a?utm_source=x&id=1&utm_medium=y", "https://shop.test/a?id=1"),
    ("https://shop.test/a?utm_source=x", "https://shop.test/a"),
    ("https://shop.test/a?b=2&gclid=abc&a=1", "https://shop.test/a?b=2&a=1"),  # order kept
    ("https://shop.test/a?gclid", "https://shop.test/a"),  # a name without a value
    ("https://shop.test/a?xgclid=1", "https://shop.test/a?xgclid=1"),  # whole names only
    ("https://shop.test/utm_source=x", "https://shop.test/utm_source=x"),  # paths untouched
    ("https://shop.test/a?id=utm_x", "https://shop.test/a?id=utm_x"),  # values untouched
])
def test_strip_param(url: str, clean: str) -> None:
    filters = UrlFilters(strip_params=["utm_*", "gclid"])
    assert filters.clean(url) == clean


def test_no_strip_param_leaves_every_url_alone() -> None:
    url = "https://shop.test/a?utm_source=x"
    assert UrlFilters().clean(url) == url


@pytest.mark.parametrize("name", ["", "a=b", "a&b", "?x"])
def test_an_invalid_strip_param_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="--strip-param"):
        UrlFilters(strip_params=[name])
