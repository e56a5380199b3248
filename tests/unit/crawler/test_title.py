"""A page's title is the one a browser shows: ``document.title``.

That is the first ``<title>`` *in the HTML namespace* in tree order, its text
with ASCII whitespace stripped and collapsed; a ``<title>`` inside SVG or
MathML (an icon's tooltip) is not the page's, unless it sits where foreign
content holds HTML again (``foreignObject``, ``desc``, SVG's own ``title``,
MathML's text elements, ``annotation-xml`` declared HTML). The table below
is checked against Chromium itself, so it cannot drift from what browsers do.
"""

from __future__ import annotations

import pytest

from crawler.page.extract import extract

# (page, the title a browser shows; None where it shows none)
TITLES = [
    ("<svg><title>Icon</title></svg><title>Real</title>", "Real"),
    ("<svg><TITLE>Up</TITLE></svg><title>Real</title>", "Real"),
    ("<math><title>m</title></math><title>Real</title>", "Real"),
    ("<svg><title>only an icon's</title></svg>", None),
    ("<svg><foreignObject><title>In</title></foreignObject></svg><title>Real</title>", "In"),
    ("<svg><foreignObject><svg><title>I</title></svg></foreignObject></svg><title>R</title>",
     "R"),
    ("<svg><desc><title>D</title></desc></svg><title>Real</title>", "D"),
    ("<svg><title><title>T</title></title></svg><title>Real</title>", "T"),
    ("<math><mi><title>M</title></mi></math><title>Real</title>", "M"),
    ('<math><annotation-xml encoding="Text/HTML"><title>A</title></annotation-xml></math>'
     "<title>Real</title>", "A"),
    ("<math><annotation-xml><title>A</title></annotation-xml></math><title>Real</title>",
     "Real"),
    ("<annotation-xml><title>unknown element, HTML</title></annotation-xml>",
     "unknown element, HTML"),
    ("<template><title>x</title></template><title>y</title>", "y"),
    ("<html><head><title>a</title></head><body><title>b</title>", "a"),
    # a head's title is found first, past what holds no element before it
    ('<head><meta charset="utf-8"><link rel="icon" href="i.png"><base href="/">'
     '<script>var t = "<title>s</title>";</script><style>p {}</style>'
     "<title>Head</title></head><body><title>b</title>", "Head"),
    ("<head><noscript><style>p {}</style></noscript><title>After</title></head>", "After"),
    ("<title>first</title><meta name=x><title>second</title>", "first"),
    # ASCII whitespace is collapsed; a no-break or em space is text
    ("<title> a\u00a0 b\u2003c </title>", "a\u00a0 b\u2003c"),
    ("<title>\n  A \t title \f</title>", "A title"),
    ("<title>a &amp; b &lt;c&gt;</title>", "a & b <c>"),
    ("<p>no title", None),
]


@pytest.mark.parametrize("large", [False, True], ids=["walked", "css"])
@pytest.mark.parametrize(("html", "title"), TITLES)
def test_the_title_is_the_one_a_browser_shows(html: str, title: str | None, large: bool,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import crawler.page.extract as module

    monkeypatch.setattr(module, "LARGE_PAGE", 0 if large else 1 << 30)
    assert extract(html, "http://h/p", "bot").title == title


@pytest.mark.slow(6)
def test_the_table_is_what_chromium_shows() -> None:
    from browser import browser_page

    with browser_page() as page:
        shown = []
        for html, _title in TITLES:
            page.set_content(html)
            shown.append(page.evaluate("document.title") or None)
    assert shown == [title for _html, title in TITLES]
