from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.page.decode import decode_html
from crawler.page.extract import extract
from crawler.page.link_headers import canonical_from_link_headers

PAGE = "http://h/dir/page.html"


def links(html: str) -> list[str]:
    return extract(html, PAGE, "sitemap-crawler").links


@pytest.mark.parametrize(("html", "expected"), [
    ('<a href="a.html">', ["http://h/dir/a.html"]),
    ('<a href="  /b  ">', ["http://h/b"]),
    ('<a href="\x01/c\x1f">', ["http://h/c"]),
    ('<a href="/d\n/e\t">', ["http://h/d/e"]),
    ('<a href="x#frag">', ["http://h/dir/x"]),
    ('<map><area href="/area"></map>', ["http://h/area"]),
    ('<a href="javascript:x()"></a><a href="mailto:a@b"><a href="tel:1"><a href="data:,x">', []),
    ('<a href="/n" rel="NoFollow">', []),
    ('<a href="/u" rel="ugc">', ["http://h/u"]),
    ('<a>no href</a><link href="/style.css">', []),
    ('<base href="/other/"><a href="c">', ["http://h/other/c"]),
    ('<base href="javascript:x"><a href="c">', ["http://h/dir/c"]),
    ('<a href="/d"></a><a href="/d#x"></a>', ["http://h/d"]),
])
def test_links(html: str, expected: list[str]) -> None:
    assert links(html) == expected


def test_rel_nofollow_links_are_counted_not_returned() -> None:
    facts = extract('<a href="/a" rel="nofollow">x</a><a href="/b">', PAGE, "bot")
    assert facts.links == ["http://h/b"]
    assert facts.nofollow_links == 1


@pytest.mark.parametrize(("head", "canonical"), [
    ('<link rel="canonical" href="/c">', "http://h/c"),
    ('<link rel="Canonical" href="page.html">', PAGE),
    ('<link rel="canonical" href="/a"><link rel="canonical" href="/b">', None),
    ('<link rel="canonical" href="/a"><link rel="canonical" href="/a">', "http://h/a"),
    ('<link rel="alternate" href="/a">', None),
])
def test_canonical(head: str, canonical: str | None) -> None:
    html = f"<html><head>{head}</head><body></body></html>"
    assert extract(html, PAGE, "bot").canonical == canonical


HEAD_AND_TITLE_CASES = [
    '<head><link rel="canonical" href="/h"><title> A  title </title></head>',
    # a <link> outside the head says nothing; one before <head> is put in it
    '<head><template><link rel=canonical href=/t></template><link rel=canonical href=/h>'
    '</head><body><link rel=canonical href=/b>',
    "<link rel=canonical href=/pre><head><link rel=canonical href=/x></head>",
    "<svg><link rel=canonical href=/s /></svg><p><link rel=canonical href=/p></p>",
    '<head><link rel="alternate" hreflang="de" href="/de"><link rel="alternate" '
    'hreflang="fr" href="/fr"></head>',
    # the first title in the tree, wherever it is
    "<html><head><title>a</title></head><body><title>b</title>",
    "<template><title>x</title></template><title>y</title>",
    "<TITLE>u</TITLE><title>v</title>",
    "<p>no title here",
]


@pytest.mark.parametrize("html", HEAD_AND_TITLE_CASES)
def test_large_pages_find_title_and_head_links_as_small_ones_do(
        html: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages from LARGE_PAGE bytes look for these with CSS instead of a tree walk:
    the answers are the same."""
    import crawler.page.extract as module

    monkeypatch.setattr(module, "LARGE_PAGE", 1 << 30)
    walked = extract(html, PAGE, "bot")
    monkeypatch.setattr(module, "LARGE_PAGE", 0)
    found = extract(html, PAGE, "bot")
    assert (found.title, found.canonical, found.alternates) == (
        walked.title, walked.canonical, walked.alternates)
    assert (walked.title is None) == ("<title" not in html.lower())


def test_meta_robots_for_us_and_for_all() -> None:
    ours = extract('<meta name="sitemap-crawler" content="noindex">', PAGE, "sitemap-crawler")
    other = extract('<meta name="googlebot" content="noindex">', PAGE, "sitemap-crawler")
    assert ours.directives.noindex
    assert not other.directives.noindex


@pytest.mark.parametrize(("content", "refresh", "link"), [
    ("0; url=/t", "http://h/t", None),
    ("0;URL='/t'", "http://h/t", None),
    ("0, /t", "http://h/t", None),
    ("5; url=/later", None, "http://h/later"),
    ("30", None, None),
])
def test_meta_refresh(content: str, refresh: str | None, link: str | None) -> None:
    facts = extract(f'<meta http-equiv="Refresh" content="{content}">', PAGE, "bot")
    assert facts.refresh_to == refresh
    assert facts.links == ([link] if link else [])


@pytest.mark.parametrize(("values", "expected"), [
    (['<https://h/c>; rel="canonical"'], "https://h/c"),
    (["</rel>; rel=canonical"], "http://h/rel"),
    (['<https://h/n>; rel="next", <https://h/c>; rel="canonical"'], "https://h/c"),
    (['<https://h/a>; rel="alternate"'], None),
])
def test_link_header_canonical(values: list[str], expected: str | None) -> None:
    assert canonical_from_link_headers(values, PAGE) == expected


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(body: bytes) -> None:
    facts = extract(decode_html(body, "text/html"), PAGE, "bot")
    assert all(link.startswith("http") for link in facts.links)


@pytest.mark.slow(6)
@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_hrefs_never_raise(href: str) -> None:
    escaped = href.replace("&", "&amp;").replace('"', "&quot;")
    facts = extract(f'<a href="{escaped}">x</a>', PAGE, "bot")
    assert len(facts.links) <= 1


def _hash(html: str, *ignore: str) -> bytes | None:
    return extract(html, PAGE, "bot", fingerprint_ignoring=ignore).content_hash


def test_fingerprint_ignores_noise() -> None:
    base = "<html><head><title>T</title></head><body><p>Hello world</p><a href='/a'>a</a>"
    same = [
        base + "<script>var t = 1;</script>",
        base + "<style>p { color: red }</style>",
        base + "<!-- generated at 12:00 -->",
        base + '<input type="hidden" name="csrf" value="abc123">',
        base.replace("Hello world", "Hello \n\t  world"),
    ]
    reference = _hash(base)
    assert reference is not None and len(reference) == 16
    for html in same:
        assert _hash(html) == reference, html


def test_fingerprint_sees_text_links_and_honours_ignore_selectors() -> None:
    base = "<body><p>Hello</p><a href='/a'>a</a><footer class=clock>12:00</footer>"
    assert _hash(base) != _hash(base.replace("Hello", "Goodbye"))
    assert _hash(base) != _hash(base.replace("/a", "/b"))
    assert _hash(base) != _hash(base.replace("12:00", "12:01"))
    assert _hash(base, ".clock") == _hash(base.replace("12:00", "12:01"), ".clock")
    banner = "<body><p>Hi</p><div class=ad><a href='/promo-1'>x</a></div>"
    assert _hash(banner, ".ad") == _hash(banner.replace("promo-1", "promo-2"), ".ad")


def test_fingerprint_is_off_unless_asked() -> None:
    assert extract("<p>x</p>", PAGE, "bot").content_hash is None


STABLE_PAGE = ('<html><head><title>T</title><script>var t=1</script></head><body><p>Hello '
               '<b>world</b></p><a href="/a">a</a><noscript><a href="/n">n</a></noscript><map>'
               '<area href="/m"></map><a href>e</a></body>')


def test_a_pages_fingerprint_is_the_one_earlier_versions_stored() -> None:
    """A state file keeps these hashes from run to run: a hash computed otherwise
    would call every page changed once, and move every lastmod, after an upgrade."""
    assert _hash(STABLE_PAGE).hex() == "411962c0189709faec3f7058e5f37762"
    assert _hash(STABLE_PAGE, "b").hex() == "92d1f48fd7e8d87387cacb6785af9db7"


@pytest.mark.parametrize("html", [
    STABLE_PAGE,
    "<noscript><a href=/n>n</a></noscript><a href=/x>x</a>",
    "<svg><script><a href=/s>s</a></script></svg><a href=/x>x</a>",
    "<svg><style><a href=/s>s</a></style></svg><area href=/x>",
    "<template><a href=/t></a></template><a href>e</a><area href=/a><a href='/b'>",
    "<script></a><a href=/in>'</script><a href=/out>", "<!-- <a href=/c> --><a href=/d>",
    "<A HREF=/up>u</A><noscript><p>text only</p></noscript><style></style>",
])
def test_the_links_a_page_read_hash_as_a_walk_after_the_noise_finds_them(html: str) -> None:
    """The fingerprint takes the hrefs extraction read, instead of walking the tree
    again, only where that gives the walk's answer."""
    from selectolax.lexbor import LexborHTMLParser

    from crawler.page.fingerprint import fingerprint

    for ignore in ((), ("b",)):
        assert _hash(html, *ignore) == fingerprint(LexborHTMLParser(html), ignore)
