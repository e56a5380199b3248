"""What a "not found" page says, in seven languages, and what merely mentions it."""

from __future__ import annotations

import pytest
from selectolax.lexbor import LexborHTMLParser

from crawler.page.soft_404 import (
    ProbeAnswer,
    says_not_found,
    similarity,
    sketch_of,
    soft_404_reason,
)


@pytest.mark.parametrize("title", [
    "Page not found | Soft Shop", "404 Not Found", "404", "Error 404 - Soft Shop",
    "Oops! That page can't be found.", "Seite nicht gefunden \u2013 Shop", "Fehler 404",
    "Page introuvable", "Erreur 404 | Boutique", "Página no encontrada", "Error 404",
    "页面不存在", "找不到页面 - 网站", "ページが見つかりませんでした",
    "お探しのページは見つかりません",
    "Страница не найдена", "Ошибка 404 — Магазин",
])
def test_a_title_that_says_not_found(title: str) -> None:
    assert says_not_found(title)


@pytest.mark.parametrize("title", [
    "How we fixed our 404 pages", "Handling 404 Not Found errors in nginx",
    "HTTP status codes: 404 and friends", "404 pages explained", "Home", None, "",
    "Teapots | Soft Shop", "Der Fehler im System: eine Geschichte",
])
def test_a_title_that_merely_mentions_it(title: str | None) -> None:
    assert not says_not_found(title)


def _tree(words: str) -> LexborHTMLParser:
    return LexborHTMLParser(f"<html><body><p>{words}</p></body></html>")


def test_near_copies_are_similar_and_other_pages_are_not() -> None:
    template = " ".join(f"word{i}" for i in range(300))
    echoed = template + " the page /old-kettle.html was not found"
    other = " ".join(f"other{i}" for i in range(150)) + " " + " ".join(template.split()[:150])
    assert similarity(sketch_of(_tree(template)), sketch_of(_tree(echoed))) >= 0.9
    assert similarity(sketch_of(_tree(template)), sketch_of(_tree(other))) < 0.5


def test_a_page_is_compared_with_a_probe_only_when_it_could_be_its_copy() -> None:
    text = " ".join(f"word{i}" for i in range(200))
    html = f"<html><head><title>Sorry</title></head><body><p>{text}</p></body></html>"
    tree = LexborHTMLParser(html)
    probe = ProbeAnswer("http://x.test/probe", "Sorry", len(html), sketch_of(tree))
    assert soft_404_reason(tree, "Sorry", html, (probe,)) == \
        "like the answer to http://x.test/probe"
    other = ProbeAnswer("http://x.test/probe", "Else", len(html), probe.sketch)
    assert soft_404_reason(tree, "Sorry", html, (other,)) is None  # another title: never
    untitled = ProbeAnswer("http://x.test/probe", None, len(html), probe.sketch)
    assert soft_404_reason(tree, "Sorry", html, (untitled,)) is not None  # same size
    larger = ProbeAnswer("http://x.test/probe", None, len(html) * 2, probe.sketch)
    assert soft_404_reason(tree, "Sorry", html, (larger,)) is None


def test_every_phrase_holds_a_trigger_word() -> None:
    """A title is turned away at once when it holds no trigger word: a phrase without
    one would never be matched."""
    from crawler.page.soft_404 import _TRIGGERS, EXACT, PHRASES

    assert [phrase for phrase in (*PHRASES, *EXACT)
            if not any(trigger in phrase for trigger in _TRIGGERS)] == []


def test_the_first_h1_is_read_and_only_it() -> None:
    from crawler.page.soft_404 import soft_404_reason

    def reason(html: str) -> str | None:
        return soft_404_reason(LexborHTMLParser(html), "Shop", html, ())

    assert reason("<title>Shop</title><H1>Seite <b>nicht</b> gefunden</H1><p>x") == (
        "h1 says not found")
    assert reason("<title>Shop</title><h1>Teapots</h1><h1>Page not found</h1>") is None
    assert reason("<title>Shop</title><h2>Page not found</h2>") is None
