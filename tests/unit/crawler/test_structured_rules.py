"""The structured-data rules, with examples shaped like those of Google's feature guides."""

from __future__ import annotations

import json

import pytest

from crawler.page.structured_data import read_structured


def page(*blocks: object, body: str = "") -> str:
    scripts = "".join(f'<script type="application/ld+json">{json.dumps(block)}</script>'
                      for block in blocks)
    return f"<html><head>{scripts}</head><body>{body}</body></html>"


VALID = [
    {"@context": "https://schema.org", "@type": "Article", "headline": "H",
     "image": ["https://example.com/a.jpg"], "datePublished": "2026-01-05T08:00:00+08:00",
     "author": [{"@type": "Person", "name": "Jane", "url": "https://example.com/jane"}]},
    {"@context": "https://schema.org/", "@type": "Product", "name": "Shoe",
     "offers": {"@type": "Offer", "price": "55.00", "priceCurrency": "USD"}},
    {"@context": "https://schema.org", "@type": "Product", "name": "Shoe",
     "aggregateRating": {"@type": "AggregateRating", "ratingValue": "4.4",
                         "reviewCount": "89"}},
    {"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": [
        {"@type": "ListItem", "position": 1, "name": "Books", "item": "https://e.com/b"},
        {"@type": "ListItem", "position": 2, "item": {"@id": "https://e.com/b/sf",
                                                        "name": "SF"}},
        {"@type": "ListItem", "position": 3, "name": "Award winners"}]},
    {"@context": "https://schema.org", "@type": "FAQPage", "mainEntity": [
        {"@type": "Question", "name": "Q?",
         "acceptedAnswer": {"@type": "Answer", "text": "A."}}]},
    {"@context": "https://schema.org", "@type": "VideoObject", "name": "V",
     "thumbnailUrl": ["https://e.com/1x1.jpg"], "uploadDate": "2026-02-05T08:00:00+08:00"},
    {"@context": {"@vocab": "http://schema.org/"}, "@type": "Product", "name": "X",
     "review": {"@type": "Review", "author": {"@type": "Person", "name": "F"}}},
]


@pytest.mark.parametrize("block", VALID, ids=lambda block: str(block["@type"]))
def test_google_shaped_examples_have_no_error(block: dict) -> None:
    found = read_structured(page(block), "https://e.com/")
    assert found.errors == ()
    assert found.types == (block["@type"],)


@pytest.mark.parametrize(("block", "error"), [
    ({"@context": "https://schema.org", "@type": "Article", "headline": "H",
      "image": "https://e.com/a.jpg", "datePublished": "2026-01-05"},
     "Article: no author (recommended)"),
    ({"@context": "https://schema.org", "@type": "Product", "offers": {"price": "1"}},
     "Product: no name (required)"),
    ({"@context": "https://schema.org", "@type": "BreadcrumbList"},
     "BreadcrumbList: no itemListElement (required)"),
    ({"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": [
        {"@type": "ListItem", "name": "A", "item": "https://e.com/a"}]},
     "BreadcrumbList: ListItem 1 has no position (required)"),
    ({"@context": "https://schema.org", "@type": "FAQPage"},
     "FAQPage: no mainEntity (required)"),
    ({"@context": "https://schema.org", "@type": "FAQPage", "mainEntity": [
        {"@type": "Question", "acceptedAnswer": {"@type": "Answer", "text": "A"}}]},
     "Question: no name (required)"),
    ({"@context": "https://schema.org", "@type": "VideoObject", "name": "V",
      "thumbnailUrl": "https://e.com/t.jpg"}, "VideoObject: no uploadDate (required)"),
    ({"@context": "https://example.org", "@type": "Product", "name": "X"},
     "JSON-LD block 1: @context 'https://example.org' is not schema.org"),
    ({"@type": "Product", "name": "X"}, "JSON-LD block 1: no @context (schema.org expected)"),
    (["not an object"], "JSON-LD block 1: an item that is not an object"),
])
def test_each_broken_example_is_named(block: object, error: str) -> None:
    assert error in read_structured(page(block), "https://e.com/").errors


def test_json_ld_google_would_not_parse_is_an_error_even_if_a_lenient_reader_could() -> None:
    html = ('<script type="application/ld+json">{"@context": "https://schema.org", '
            '"@type": "Product", "name": "T",}</script>'
            '<script type="Application/LD+JSON">{"@context": "https://schema.org", '
            '"@type": "Product", "name": "U", "offers": {"price": "1"}}</script>')
    found = read_structured(html, "https://e.com/")
    assert len(found.errors) == 1
    assert found.errors[0].startswith("JSON-LD block 1 does not parse: ")
    assert found.types == ("Product",)


def test_graphs_microdata_and_opengraph() -> None:
    html = page({"@context": "https://schema.org", "@graph": [
        {"@type": "WebSite", "name": "W"}, {"@type": ["Organization", "Brand"], "name": "O"}]},
        body='<div itemscope itemtype="http://schema.org/VideoObject"><span itemprop="name">'
             'V</span></div><div itemscope itemtype="https://other.org/Thing"></div>')
    html = html.replace("<head>", '<head><meta property="og:type" content="video.movie">')
    found = read_structured(html, "https://e.com/")
    assert found.types == ("WebSite", "Organization", "Brand", "VideoObject", "og:video.movie")
    assert "VideoObject: no thumbnailUrl (required)" in found.errors
    assert "Microdata itemtype 'https://other.org/Thing' is not schema.org" in found.errors
    assert found.opengraph == {"og:type": "video.movie"}


def test_a_hostile_page_keeps_a_bounded_list_of_errors() -> None:
    blocks = [{"@context": "https://schema.org", "@type": "Product"}] * 50
    broken = "<script type='application/ld+json'>{" + "x" * 5000 + "</script>"
    found = read_structured(page(*blocks) + broken, "https://e.com/")
    assert len(found.errors) <= 20
    assert all(len(error) <= 300 for error in found.errors)
