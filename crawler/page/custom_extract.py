"""``--extract NAME=KIND:QUERY``: values a site owner wants from every page, as columns — pure.

* ``NAME=css:SELECTOR`` — the text of the first element matching (whitespace
  collapsed); ``NAME=css:SELECTOR@ATTR`` — that attribute of it;
* ``NAME=xpath:EXPR`` — the first result of an XPath 1.0 expression over the
  page as browsers parse it (an element gives its text; a string, number or
  attribute gives itself);
* ``NAME=regex:PATTERN`` — the first match in the page's HTML source (its first
  group, if the pattern has one);
* ``NAME[]=…`` — every match, as a list, rather than the first.

A bad rule is refused before any request (exit 2, naming it), and so is a NAME
that is already a report column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the parser is loaded when a page is read, not with the options
    from selectolax.lexbor import LexborHTMLParser

KINDS = ("css", "xpath", "regex")
MAX_VALUE_CHARS = 1000
MAX_VALUES = 100  # matches kept for a NAME[] rule
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    kind: str
    query: str
    attribute: str | None = None
    every: bool = False


def parse_rule(spec: str, taken: frozenset[str] = frozenset()) -> Rule:
    """One ``--extract`` value; ValueError says what is wrong with it."""
    name, equals, rest = spec.partition("=")
    kind, colon, query = rest.partition(":")
    every = name.endswith("[]")
    name = name.removesuffix("[]").strip()
    if not equals or not colon or not query:
        raise ValueError(f"--extract {spec!r} must be NAME=css:SELECTOR, NAME=css:SELECTOR@ATTR, "
                         "NAME=xpath:EXPR or NAME=regex:PATTERN (NAME[]= for every match)")
    if not _NAME.match(name):
        raise ValueError(f"--extract {spec!r}: the NAME must be letters, digits, _ . - "
                         "(starting with a letter or _)")
    if name in taken:
        raise ValueError(f"--extract {spec!r}: {name} is already a column of the report "
                         "(or another --extract); choose another NAME")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise ValueError(f"--extract {spec!r}: {kind!r} is not one of {', '.join(KINDS)}")
    attribute = None
    if kind == "css":
        query, at, attribute = query.rpartition("@") if "@" in query else (query, "", "")
        attribute = attribute.strip() or None if at else None
        if not _css_ok(query):
            raise ValueError(f"--extract {spec!r}: {query!r} is not a valid CSS selector")
    elif kind == "regex":
        try:
            re.compile(query)
        except re.error as exc:
            raise ValueError(f"--extract {spec!r}: not a valid regular expression "
                             f"({exc})") from None
    elif not _xpath_ok(query):
        raise ValueError(f"--extract {spec!r}: {query!r} is not a valid XPath expression")
    return Rule(name, kind, query, attribute, every)


def _css_ok(selector: str) -> bool:
    from selectolax.lexbor import LexborHTMLParser

    try:
        LexborHTMLParser("<p></p>").css(selector)
    except Exception:  # lexbor's own error type differs between versions
        return False
    return bool(selector.strip())


def _xpath_ok(expression: str) -> bool:
    from lxml import etree  # only for an xpath: rule

    try:
        etree.XPath(expression)
    except etree.XPathSyntaxError:
        return False
    return True


def extract_values(rules: tuple[Rule, ...], tree: LexborHTMLParser, html: str
                   ) -> tuple[tuple[str, Any], ...]:
    """(NAME, value) for each rule: a string or None, or a list for NAME[]."""
    found: list[tuple[str, Any]] = []
    document = None
    for rule in rules:
        if rule.kind == "css":
            values = [_text(node.attributes.get(rule.attribute) if rule.attribute
                            else node.text(deep=True)) for node in tree.css(rule.query)]
        elif rule.kind == "regex":
            values = [_text(match.group(1) if match.groups() else match.group(0))
                      for match in re.finditer(rule.query, html)]
        else:
            if document is None:
                document = browser_tree(tree)
            values = _xpath(rule.query, document)
        values = [value for value in values if value is not None]
        found.append((rule.name, values[:MAX_VALUES] if rule.every
                      else (values[0] if values else None)))
    return tuple(found)


def _text(value: str | None) -> str | None:
    return None if value is None else " ".join(value.split())[:MAX_VALUE_CHARS]


def browser_tree(tree: LexborHTMLParser) -> Any:
    """The page's tree as lexbor built it, which is the HTML standard's tree builder
    (what browsers build: an implied ``<tbody>``, a ``<p>`` closed by a block,
    misnested formatting re-opened), carried over into lxml elements so XPath 1.0
    runs on it. lxml's own HTML parser builds another tree (libxml2's), on which
    ``//table/tbody/tr`` finds nothing when the source has no ``<tbody>``. Built
    without recursion: a page may nest deeper than Python's stack."""
    from lxml import etree
    from lxml import html as lxml_html

    top = tree.root
    if top is None:
        return None
    root = _element(lxml_html, top)
    stack = [(top, root)]
    while stack:
        node, element = stack.pop()
        last = None
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag == "-text":
                text = child.text_content or ""
                if last is None:
                    element.text = (element.text or "") + text
                else:
                    last.tail = (last.tail or "") + text
            elif tag and not tag.startswith(("-", "!")):
                made = _element(lxml_html, child)
                element.append(made)
                last = made
                stack.append((child, made))
    return etree.ElementTree(root)


def _element(lxml_html: Any, node: Any) -> Any:
    """An lxml element for a lexbor node; a name XML cannot carry (HTML allows
    ``<a:b>`` or ``x@y=""``) is kept as near as XML allows, or left out."""
    try:
        element = lxml_html.Element(node.tag)
    except ValueError:
        element = lxml_html.Element("_".join(re.findall(r"[A-Za-z0-9_.-]+", node.tag)) or "x")
    for name, value in node.attributes.items():
        try:
            element.set(name, value or "")
        except ValueError:
            continue
    return element


def _xpath(expression: str, document: Any) -> list[str | None]:
    if document is None:
        return []
    result = document.xpath(expression)
    items = result if isinstance(result, list) else [result]
    values: list[str | None] = []
    for item in items:
        if hasattr(item, "text_content"):
            values.append(_text(item.text_content()))
        elif isinstance(item, float) and item.is_integer():
            values.append(str(int(item)))
        else:
            values.append(_text(str(item)))
    return values
