"""The tags a crawl needs, read without building a DOM — pure.

Building lexbor's DOM of a page and walking it was half of a crawl's CPU on
pages with hundreds of links; a crawl reads a dozen kinds of tag out of that
tree. This scanner finds them with the HTML standard's *tokenizer* rules, as the
tree builder would drive it (scripting off, as lexbor parses):

* a tag ends at the first ``>`` outside a quoted attribute value, attribute
  names are lower-cased, the first of two same-named attributes wins, and
  character references in values are decoded with the attribute rules
  (``&copy=1`` stays as written);
* comments (``<!-- … -->``, ``--!>``, ``<!-->``), bogus comments (``<?…>``,
  ``<!…>``, ``</ …>``) and doctypes hide what is inside them;
* ``script`` (with its escaped and double-escaped states), ``style``, ``xmp``,
  ``iframe``, ``noembed``, ``noframes`` and ``textarea`` hold text, never tags,
  up to their own end tag; ``plaintext`` holds the rest of the page;
* inside ``svg`` and ``math`` those are ordinary elements again (until an
  HTML integration point, or a tag that breaks out of foreign content);
* what is inside ``template`` is not part of the document, and a ``frameset``
  page has no links;
* ``link`` counts as "in the head" exactly where the tree builder would insert
  it into ``<head>``: before the body starts, and not inside ``noscript``.

It returns the raw material — attribute values in document order — and leaves
resolving and judging to :mod:`crawler.page.extract`, which uses the DOM path
only when a page needs more (anchor texts, fingerprints). The differential test
(``compare.py`` here) holds the two equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import unescape
from html.entities import html5

_WS = "\t\n\f\r "
_ATTRS = (r"""(?:[\t\n\f\r /]++|[^\t\n\f\r />][^\t\n\f\r /=>]*+"""
          r"""(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:"[^"]*+"?|'[^']*+'?|[^\t\n\f\r >]*+))?+)*+""")
_ATTR = re.compile(
    r"""([^\t\n\f\r />][^\t\n\f\r /=>]*)"""
    r"""(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"([^"]*)"?|'([^']*)'?|([^\t\n\f\r >]*)))?""")
# what hides markup: comments, bogus comments, doctypes, "</>"
_HIDDEN = (r"""<!--(?:>|->|.*?(?:--!?>|\Z))|<[!?][^>]*+(?:>|\Z)"""
           r"""|</(?![A-Za-z])[^>]*+(?:>|\Z)""")
_LONE = r"<(?![A-Za-z/!?])"  # a "<" that starts nothing: text
_RAW = ("script", "style", "xmp", "iframe", "noembed", "noframes", "textarea", "title",
        "plaintext")
_HEADISH = ("base", "basefont", "bgsound", "link", "meta", "title", "noscript", "noframes",
            "style", "script", "template")
_BODY_STARTS = ("a", "area", "base", "meta", "template", "svg", "math", *_RAW)
_IMAGES = ("img", "image", "source", "picture")
_BREAKOUT = frozenset([
    "b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt", "em",
    "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing",
    "menu", "meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strong", "strike",
    "sub", "sup", "table", "tt", "u", "ul", "var"])
_INTEGRATION = frozenset(("foreignobject", "desc", "title", "mi", "mo", "mn", "ms", "mtext",
                          "annotation-xml"))


def _names(names: tuple[str, ...]) -> str:
    return "(?i:" + "|".join(sorted(set(names), key=len, reverse=True)) + rf")(?=[{_WS}/>]|\Z)"


def _body_pattern(starts: tuple[str, ...], ends: tuple[str, ...]) -> re.Pattern[str]:
    """One match: everything of no interest in the body (text, other tags, comments),
    then one wanted start or end tag, or the end of the page."""
    start, end = _names(starts), _names(ends)
    other_tag = (rf"(?:<(?!{start})|</(?!{end}))[A-Za-z][^{_WS}/>]*+{_ATTRS}(?:>|\Z)")
    return re.compile(
        rf"(?:[^<]++|{_HIDDEN}|{_LONE}|{other_tag})*+"
        rf"(?:<(?:(?P<name>{start})|/(?P<end>{end}))(?P<attrs>{_ATTRS})(?P<close>>)?|\Z)",
        re.DOTALL)


_BODY = _body_pattern(_BODY_STARTS, ("template",))
_BODY_IMAGES = _body_pattern(_BODY_STARTS + _IMAGES, ("template", "picture"))
# every token, for the head and for foreign content, where any tag may matter
_TOKEN = re.compile(
    rf"(?P<text>[^<]++|{_LONE})|(?P<hidden>{_HIDDEN})"
    rf"|<(?P<slash>/?+)(?P<name>[A-Za-z][^{_WS}/>]*+)(?P<attrs>{_ATTRS})(?P<close>>)?",
    re.DOTALL)
_CDATA = re.compile(r"<!\[CDATA\[.*?(?:\]\]>|\Z)", re.DOTALL)
_END_TAG = {name: re.compile(rf"</(?i:{name})(?=[{_WS}/>])") for name in _RAW}
_TITLE_END = _END_TAG["title"]
_SCRIPT_EVENT = re.compile(rf"<!--|-->|<(/?)(?i:script)(?=[{_WS}/>])")
_CHARREF = re.compile(r"&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)")
_ANY_TAG = re.compile(r"<[^>]*>")

# where the tree builder is, as far as "is this link in the head?" goes
_BEFORE_HEAD, _IN_HEAD, _IN_HEAD_NOSCRIPT, _AFTER_HEAD, _IN_BODY = range(5)


@dataclass(slots=True)
class Scanned:
    """The attribute values a crawl reads from one page, in document order."""

    anchors: list[tuple[str, str | None]] = field(default_factory=list)  # <a>: (href, rel)
    areas: list[tuple[str, str | None]] = field(default_factory=list)  # <area>: (href, rel)
    base: str | None = None  # the first <base href>
    head_links: list[dict[str, str]] = field(default_factory=list)  # <link> in the head
    metas: list[dict[str, str]] = field(default_factory=list)
    title: str | None = None  # the first <title>'s text, as written (references decoded)
    # with images: (src, srcset) of every <img> and every <source> inside <picture>
    images: list[tuple[str | None, str | None]] = field(default_factory=list)


def attributes(text: str) -> dict[str, str]:
    """A tag's attributes: names lower-cased, the first of two same names kept,
    values with their character references decoded as the standard does in
    attributes."""
    found: dict[str, str] = {}
    for match in _ATTR.finditer(text):
        name = match.group(1).lower()
        if name in found:
            continue
        value = match.group(2)
        if value is None:
            value = match.group(3)
            if value is None:
                value = match.group(4) or ""
        if "&" in value:
            value = attribute_value(value)
        if "\r" in value:  # the input stream's newlines, as the standard normalises them
            value = value.replace("\r\n", "\n").replace("\r", "\n")
        found[name] = value
    return found


def attribute_value(value: str) -> str:
    """Character references decoded as in an attribute: a named one without its
    ``;`` stays as written when a letter, digit or ``=`` follows it."""
    return _CHARREF.sub(lambda match: _reference(match, value), value)


def _reference(match: re.Match[str], value: str) -> str:
    body = match.group(1)
    if body[0] == "#":
        return unescape(match.group(0))
    for end in range(len(body), 0, -1):
        name = body[:end]
        if name in html5:
            if not name.endswith(";"):
                after = body[end] if end < len(body) else value[match.end():match.end() + 1]
                if after == "=" or after.isalnum():
                    return match.group(0)
            return html5[name] + body[end:]
    return match.group(0)


def scan(html: str, *, images: bool = False) -> Scanned:
    """Read a page's anchors, areas, base, head links, metas, title and images."""
    found = Scanned()
    state = _Scan(html, found, images)
    state.run()
    return found


class _Scan:
    """The scanner's position and the little of the tree builder's state it needs."""

    __slots__ = ("foreign", "found", "html", "images", "mode", "pictures", "pos", "templates")

    def __init__(self, html: str, found: Scanned, images: bool) -> None:
        self.html = html
        self.found = found
        self.images = images
        self.pos = 0
        self.mode = _BEFORE_HEAD
        self.templates = 0  # open <template>s: their content is not the document's
        self.pictures = 0  # open <picture>s
        self.foreign: list[str] = []  # open svg/math elements, outermost first

    def run(self) -> None:
        html, end = self.html, len(self.html)
        body = _BODY_IMAGES if self.images else _BODY
        while self.pos < end:
            if self.mode != _IN_BODY or self.foreign:
                if not self._token():
                    return
                continue
            match = body.match(html, self.pos)
            assert match is not None  # the pattern matches at every position
            self.pos = match.end()
            if match.group("close") is None:
                return  # the end of the page, or a tag it cuts off (which is dropped)
            name = match.group("name")
            if name is None:
                self._end_tag(match.group("end").lower())
            elif not self._tag(name.lower(), False, match.group("attrs")):
                return

    def _token(self) -> bool:
        """One token while the head is open or inside svg/math, where every tag and
        every non-blank text counts. False when the rest of the page is text."""
        html = self.html
        if self.foreign and html.startswith("<![CDATA[", self.pos):
            match = _CDATA.match(html, self.pos)
            assert match is not None
            self.pos = match.end()
            return True
        match = _TOKEN.match(html, self.pos)
        if match is None:
            return False
        self.pos = match.end()
        text = match.group("text")
        if text is not None:
            if self.mode != _IN_BODY and text.strip(_WS):
                self._leave_head_for_content()
            return True
        if match.group("hidden") is not None:
            return True
        if match.group("close") is None:
            return False  # a tag the end of the page cuts off is dropped
        name = match.group("name").lower()
        return self._tag(name, bool(match.group("slash")), match.group("attrs"))

    def _leave_head_for_content(self) -> None:
        """Content that belongs in the body: the head (if still open) ends, the body starts."""
        self.mode = _IN_BODY

    def _tag(self, name: str, end: bool, attrs: str) -> bool:
        if self.foreign:
            return self._foreign_tag(name, end, attrs)
        if end:
            self._end_tag(name)
            return True
        if self.mode != _IN_BODY:
            self._head_start(name)
        if name in ("svg", "math"):
            if not _self_closing(attrs):
                self.foreign.append(name)
            return True
        if name == "template":
            self.templates += 1
            return True
        if name == "frameset" and self.mode != _IN_BODY:
            self.pos = len(self.html)  # a frameset page: frames, no links
            return True
        if name in _END_TAG:
            if self.templates == 0 and name == "title" and self.found.title is None:
                start = self.pos
                self._skip_raw(name)
                self.found.title = self._raw_text(start, name)
                return True
            if name == "plaintext":
                return False
            self._skip_raw(name)
            return True
        if self.templates:
            return True
        self._record(name, attrs)
        return True

    def _record(self, name: str, attrs: str) -> None:
        found = self.found
        if name == "a" or name == "area":
            values = attributes(attrs)
            href = values.get("href")
            if href is not None:
                (found.anchors if name == "a" else found.areas).append((href, values.get("rel")))
        elif name == "link":
            if self.mode in (_BEFORE_HEAD, _IN_HEAD, _AFTER_HEAD):
                found.head_links.append(attributes(attrs))
        elif name == "meta":
            found.metas.append(attributes(attrs))
        elif name == "base":
            if found.base is None:
                found.base = attributes(attrs).get("href")
        elif not self.images:
            return
        elif name in ("img", "image") or (name == "source" and self.pictures):
            values = attributes(attrs)
            found.images.append((values.get("src"), values.get("srcset")))
        elif name == "picture":
            self.pictures += 1

    def _end_tag(self, name: str) -> None:
        if name == "template":
            self.templates = max(0, self.templates - 1)
        elif name == "picture":
            self.pictures = max(0, self.pictures - 1)
        elif self.mode != _IN_BODY:
            self._head_end(name)

    def _head_start(self, name: str) -> None:
        """A start tag before the body: which mode the tree builder moves to."""
        mode = self.mode
        if mode == _IN_HEAD_NOSCRIPT:
            if name in ("link", "meta", "basefont", "bgsound", "noframes", "style", "head",
                        "noscript"):
                return  # inside the noscript, not the head
            mode = self.mode = _IN_HEAD  # the noscript closes; the tag is read again
        if name == "body":
            self.mode = _IN_BODY
        elif name == "html":
            return
        elif name == "head":
            if mode == _BEFORE_HEAD:
                self.mode = _IN_HEAD
        elif name in _HEADISH and not (name == "noscript" and mode == _AFTER_HEAD):
            if mode == _BEFORE_HEAD:
                self.mode = _IN_HEAD
            if name == "noscript" and self.mode == _IN_HEAD:
                self.mode = _IN_HEAD_NOSCRIPT
        elif name != "frameset":
            self.mode = _IN_BODY

    def _head_end(self, name: str) -> None:
        if self.mode == _IN_HEAD_NOSCRIPT:
            if name == "noscript":
                self.mode = _IN_HEAD
            elif name == "br":
                self.mode = _IN_BODY
            return
        if name == "head" and self.mode in (_BEFORE_HEAD, _IN_HEAD):
            self.mode = _AFTER_HEAD
        elif name in ("body", "html", "br"):
            self.mode = _IN_BODY

    def _foreign_tag(self, name: str, end: bool, attrs: str) -> bool:
        """A tag inside svg or math: ordinary elements, unless one breaks out."""
        stack = self.foreign
        if end:
            if name in stack:
                del stack[len(stack) - 1 - stack[::-1].index(name):]
            return True
        if name in _BREAKOUT or (name == "font" and _font_breaks_out(attrs)):
            stack.clear()  # the svg/math closes; the tag is read as HTML
            return self._tag(name, end, attrs)
        if stack[-1] in _INTEGRATION:
            # an HTML integration point: what is inside is read as HTML
            saved = self.foreign
            self.foreign = []
            try:
                if name in ("svg", "math"):
                    if not _self_closing(attrs):
                        saved.append(name)
                    return True
                return self._tag(name, end, attrs)
            finally:
                self.foreign = saved
        if not self.templates:
            if name == "a":
                values = attributes(attrs)
                href = values.get("href")
                if href is not None:
                    self.found.anchors.append((href, values.get("rel")))
            elif name == "title" and self.found.title is None:
                start = self.pos
                self.found.title = self._foreign_text(start)
        if not _self_closing(attrs):
            stack.append(name)
        return True

    def _foreign_text(self, start: int) -> str:
        """The text of an svg ``<title>``, tags left out."""
        close = _TITLE_END.search(self.html, start)
        stop = close.start() if close else len(self.html)
        return unescape(_ANY_TAG.sub("", self.html[start:stop]))

    def _skip_raw(self, name: str) -> None:
        """Past a raw-text element's content, to just after its end tag's name."""
        html = self.html
        if name == "plaintext":
            self.pos = len(html)
            return
        if name == "script":
            self.pos = _script_end(html, self.pos)
            return
        close = _END_TAG[name].search(html, self.pos)
        self.pos = close.start() if close else len(html)

    def _raw_text(self, start: int, name: str) -> str:
        text = self.html[start:self.pos]
        return unescape(text) if "&" in text else text  # newlines: the caller collapses


def _self_closing(attrs: str) -> bool:
    return attrs.endswith("/")


def _font_breaks_out(attrs: str) -> bool:
    return any(name in attributes(attrs) for name in ("color", "face", "size"))


def _script_end(html: str, pos: int) -> int:
    """Where a script's content ends: at ``</script`` outside the escaped states
    the standard gives ``<!--`` inside a script (a ``<script>`` inside ``<!--``
    needs its own ``</script>`` first)."""
    escaped = double = False
    while True:
        event = _SCRIPT_EVENT.search(html, pos)
        if event is None:
            return len(html)
        token = event.group(0)
        if token == "<!--":
            if not escaped:
                escaped = True
                pos = event.start() + 2  # "<!-->" both opens and closes
            else:
                pos = event.end()
        elif token == "-->":
            if escaped:
                escaped = double = False
            pos = event.end()
        elif event.group(1):  # </script
            if double:
                double = False
                pos = event.end()
            else:
                return event.start()
        else:  # <script
            if escaped:
                double = True
            pos = event.end()
