"""Soft 404s: pages that answer 200 but are a "not found" page — pure.

Such a page wastes crawl budget and, listed in a sitemap, tells search engines
that a missing page is content. A page is one when:

* its title or h1 says "not found", in English, German, French, Spanish,
  Chinese, Japanese or Russian (:data:`PHRASES`): the phrase opens the title's
  first part (before " | ", " - ", " — "), or that part is short (five words or
  fewer, twenty characters in scripts without spaces) and holds it, or that part
  is "404" alone. "How we fixed
  our 404 pages" and "Handling 404 Not Found errors in nginx" are articles, not
  error pages;
* or it is nearly the same page as the answer to a probe, a URL made up to
  exist nowhere (crawler.engine.soft_404 asks them): word-shingle similarity
  (4 words a shingle, estimated from the 64 smallest shingle hashes of each) of at
  least :data:`SIMILAR` to a probe that answered 200. A single-page app's shell
  answers every URL the same and is no probe: it says nothing of whether the app
  will show a page.

The comparison is made only for a page whose title is the probe answer's (or,
where that answer has no title, whose size is within :data:`SIZE_SLACK` of it):
shingling costs up to a millisecond a page, and the pages of one template are
all about one size, so a size test alone would shingle every page of a site whose
unknown URLs answer 200.
"""

from __future__ import annotations

import heapq
import re
import zlib
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # the configuration holds the probes' answers: no parser loaded for it
    from selectolax.lexbor import LexborHTMLParser

SHINGLE_WORDS = 4
SKETCH_SIZE = 64  # the smallest shingle hashes kept of a page
SIMILAR = 0.8  # the least estimated Jaccard similarity to a probe's answer
SIZE_SLACK = 0.05  # for an answer without a title: a page this much larger or smaller
WORDS_READ = 1500  # of a page's text, at most: a not-found page is short
SHORT_WORDS = 5
SHORT_CHARS = 20  # a title in a script without spaces, as short as SHORT_WORDS

# phrases a not-found page's title or h1 says, compared with the text case-folded,
# apostrophes straightened and runs of space made one
PHRASES = (
    # English
    "page not found", "404 not found", "not found", "error 404", "404 error",
    "page does not exist", "page doesn't exist", "page cannot be found",
    "page can't be found", "page could not be found", "page couldn't be found",
    "nothing found", "oops! that page can't be found",
    # German
    "seite nicht gefunden", "seite wurde nicht gefunden", "nicht gefunden", "fehler 404",
    "seite existiert nicht",
    # French
    "page non trouvée", "page introuvable", "introuvable", "erreur 404",
    "page n'existe pas", "cette page n'existe pas",
    # Spanish
    "página no encontrada", "pagina no encontrada", "no encontrada", "no encontrado",
    "no se encontró", "la página no existe", "error 404",
    # Chinese
    "页面未找到", "找不到页面", "页面不存在", "找不到网页", "网页不存在", "未找到页面",
    "頁面不存在", "找不到頁面",
    # Japanese
    "ページが見つかりません", "ページが見つかりませんでした", "お探しのページは見つかりません",
    "ページは存在しません", "ページが存在しません", "見つかりません",
    # Russian
    "страница не найдена", "страница не существует", "не найдена", "ошибка 404",
)
# a title's first part that is all of one of these says it alone
EXACT = frozenset({"404", "error", "fehler", "erreur", "ошибка", "oops"})
_PARTS = r"\s+[|\u2013\u2014\u00b7:\u00bb-]\s+"  # bar, dashes, dot, colon, guillemet
# a word every phrase holds, to turn away at once the titles that hold none (a
# search for every phrase cost 4 µs a title, 2 % of a plain crawl's page)
_TRIGGERS = ("404", "found", "error", "oops", "exist", "gefunden", "fehler", "trouv",
             "erreur", "encontr", "не най", "не сущ", "ошибка", "找不到", "不存在", "未找到",
             "見つかりません", "存在しません")
# scripts written without spaces (CJK, Hangul, full-width forms), by code point: a
# regex of these ranges took 4.4 ms to compile, a tenth of the CLI's start-up
_WIDE = ((0x3000, 0x9FFF), (0xAC00, 0xD7AF), (0xFF00, 0xFFEF))


@cache
def _trigger_words() -> re.Pattern[str]:
    """The trigger words as one pattern: 0.27 µs a title, against 0.74 for a test of
    each (twice a page: its title and h1). Compiled once, in 0.4 ms."""
    return re.compile("|".join(map(re.escape, _TRIGGERS)))


@cache
def _title_parts() -> re.Pattern[str]:
    """Compiled on the first title that holds a trigger word: most runs meet none."""
    return re.compile(_PARTS)


def _wide(text: str) -> bool:
    return any(low <= ord(char) <= high for char in text for low, high in _WIDE)


class ProbeAnswer(NamedTuple):
    """What a probe URL answered 200 with: the page every unknown URL there shows (a
    named tuple: loaded with every configuration, made in a tenth of a dataclass's time)."""

    url: str
    title: str | None
    size: int
    sketch: tuple[int, ...]


def says_not_found(text: str | None) -> bool:
    """Does this title or h1 say the page was not found?"""
    if not text:
        return False
    folded = text.casefold().replace("\u2019", "'")
    if _trigger_words().search(folded) is None:  # most titles: done here
        return False
    folded = " ".join(folded.split())
    first = _title_parts().split(folded, maxsplit=1)[0].strip(" !.¡¿")
    first = re.sub(r"^(oops|whoops|sorry|error|ups|désolé)[!,.]*\s+", "", first)
    short = (len(first) <= SHORT_CHARS if _wide(first)
             else len(first.split()) <= SHORT_WORDS)
    return first in EXACT or any(first.startswith(phrase) or (short and phrase in first)
                                 for phrase in PHRASES)


def sketch_of(tree: LexborHTMLParser) -> tuple[int, ...]:
    """The :data:`SKETCH_SIZE` smallest hashes of the page's 4-word shingles."""
    body = tree.body
    words = (body.text(separator=" ") if body is not None else "").casefold().split()
    words = words[:WORDS_READ]
    if len(words) < SHINGLE_WORDS:
        return (zlib.crc32(" ".join(words).encode()),)
    hashes = {zlib.crc32(" ".join(words[i:i + SHINGLE_WORDS]).encode())
              for i in range(len(words) - SHINGLE_WORDS + 1)}
    return tuple(sorted(heapq.nsmallest(SKETCH_SIZE, hashes)))


def similarity(one: tuple[int, ...], other: tuple[int, ...]) -> float:
    """Jaccard similarity of two pages' shingle sets, estimated from their sketches: of
    the smallest hashes of the union, the share both pages have."""
    if not one or not other:
        return 0.0
    mine, theirs = set(one), set(other)
    union = heapq.nsmallest(SKETCH_SIZE, mine | theirs)
    return sum(value in mine and value in theirs for value in union) / len(union)


def soft_404_reason(tree: LexborHTMLParser, title: str | None, html: str | bytes,
                    probes: tuple[ProbeAnswer, ...]) -> str | None:
    """Why this 200 page is a "not found" page, or ``None``: "title says not found",
    "h1 says not found" or "like the answer to PROBE URL"."""
    if says_not_found(title):
        return "title says not found"
    # by tag name, not by CSS selector: 2.6 µs a page against 12.5 (a selector is
    # parsed and matched each time), 8 % of a plain crawl's reading of a page
    h1s = tree.tags("h1")
    if h1s and says_not_found(h1s[0].text(separator=" ")):
        return "h1 says not found"
    sketch: tuple[int, ...] | None = None
    for probe in probes:
        if (title != probe.title if probe.title else
                abs(len(html) - probe.size) > SIZE_SLACK * probe.size):
            continue
        sketch = sketch if sketch is not None else sketch_of(tree)
        if similarity(sketch, probe.sketch) >= SIMILAR:
            return f"like the answer to {probe.url}"
    return None
