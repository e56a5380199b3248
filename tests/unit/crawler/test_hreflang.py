from __future__ import annotations

import pytest

from crawler.core.records import PageRecord, Verdict
from crawler.page.hreflang import normalize_code, sitemap_alternates
from crawler.page.images import largest_candidate, srcset_candidates


@pytest.mark.parametrize(("code", "normal"), [
    ("en", "en"), ("EN-gb", "en-GB"), ("zh-hant-tw", "zh-Hant-TW"), ("zh-Hans", "zh-Hans"),
    ("es-419", "es-419"), ("X-Default", "x-default"), ("pt-BR", "pt-BR"),
    ("en-UK", None),  # UK is no ISO 3166-1 code (GB is)
    ("xx", None), ("english", None), ("en_GB", None), ("en-Abcd", None), ("", None),
    ("en-GB-oed", None),
])
def test_codes_are_checked_against_the_registries(code: str, normal: str | None) -> None:
    assert normalize_code(code) == normal


def _page(url: str, *alternates: tuple[str, str], verdict: Verdict = Verdict.LISTED
          ) -> PageRecord:
    return PageRecord(url, 0, 200, "text/html", verdict=verdict, alternates=alternates)


def test_self_is_included_from_what_the_others_call_it() -> None:
    a, b = "http://h/a", "http://h/b"
    written, problems = sitemap_alternates(
        [_page(a, ("de", b)), _page(b, ("en", a), ("de", b))], lambda url: True)
    assert written[a] == (("de", b), ("en", a))
    assert written[b] == (("de", b), ("en", a))
    assert problems == []


def test_a_version_that_is_not_listed_is_left_out() -> None:
    a, b = "http://h/a", "http://h/b"
    written, problems = sitemap_alternates(
        [_page(a, ("en", a), ("de", b)), _page(b, ("en", a), verdict=Verdict.NOINDEX)],
        lambda url: True)
    assert written == {}
    assert [(p.page, p.reason) for p in problems] == [(a, "hreflang-not-listed")]


@pytest.mark.parametrize(("srcset", "largest"), [
    ("a.png 1x, b.png 2x", "b.png"),
    ("s.jpg 320w, m.jpg 800w, l.jpg 1600w", "l.jpg"),
    ("a,b.png 1x, c.png 2x", "c.png"),  # a comma inside a URL is the URL's
    ("x.png, y.png 3x", "y.png"),
    ("bad.png 2q, ok.png", "ok.png"),
    ("", None),
])
def test_largest_srcset_candidate(srcset: str, largest: str | None) -> None:
    assert largest_candidate(srcset) == largest


def test_srcset_split_as_the_html_standard_does() -> None:
    assert srcset_candidates(" a.png 1x ,b.png, c.png 2x") == [
        ("a.png", "1x"), ("b.png", ""), ("c.png", "2x")]
    # without a space after it, a comma is part of the URL (as browsers read it)
    assert srcset_candidates("b.png,c.png 2x") == [("b.png,c.png", "2x")]
