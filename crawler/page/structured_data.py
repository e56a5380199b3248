"""What a page says in structured data — JSON-LD, Microdata and OpenGraph — and
what is wrong with it, checked against Google's rules (``structured_rules``).

Microdata and OpenGraph are read with extruct (a maintained extractor:
Microdata's ``itemref`` and nesting, OpenGraph's namespaces) rather than by
hand. JSON-LD is not: extruct reads it leniently (comments, trailing commas),
and Google's parser does not, so a block extruct would recover is one Google
drops; each block is read here with the standard JSON parser and one that does
not parse is named. extruct and the lxml parse cost something, so a page is
read only when its already parsed tree shows a sign of structured data
(``has_structured_data``), and extruct is imported at the first page with
Microdata or OpenGraph: a crawl of a site without any pays nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from crawler.page.structured_rules import (
    LIST_ITEM_LINK,
    LIST_ITEM_NEEDS,
    RULES,
    SCHEMA_ORG,
)

MAX_ERRORS = 20  # a page's errors kept: enough to fix it, bounded for a hostile one
# JSON-LD nested deeper than this is not read (real markup nests a dozen levels; past
# about a thousand, Python's parser and every walk over the items would raise)
MAX_DEPTH = 100
ERROR_CHARS = 300
LD_JSON = "application/ld+json"
_SCHEMA_PREFIX = re.compile(r"^(?:https?://schema\.org/|schema:)", re.IGNORECASE)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


@dataclass(slots=True)
class Structured:
    """A page's structured data: the types it declares (schema.org names, and
    ``og:TYPE`` for OpenGraph), the items (JSON-LD and Microdata, as JSON-LD-shaped
    dicts with short type names), its OpenGraph properties, and its errors."""

    types: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    items: list[dict[str, Any]] = field(default_factory=list)
    opengraph: dict[str, str] = field(default_factory=dict)


def has_structured_data(tree: LexborHTMLParser) -> bool:
    """A JSON-LD script, a Microdata item or an OpenGraph property: cheap to ask of
    the tree the page was already parsed into."""
    for node in tree.tags("script"):
        if (node.attributes.get("type") or "").strip().lower() == LD_JSON:
            return True
    for node in tree.tags("meta"):
        if (node.attributes.get("property") or "").startswith(("og:", "article:")):
            return True
    return tree.css_first("[itemscope]") is not None


def read_structured(html: str, page_url: str) -> Structured:
    import lxml.etree
    import lxml.html

    try:
        tree = lxml.html.fromstring(html.encode("utf-8", "replace"),
                                    parser=lxml.html.HTMLParser(encoding="utf-8"))
    except (lxml.etree.ParserError, ValueError) as exc:
        return Structured(errors=(f"the page could not be read for structured data: {exc}",))
    errors: list[str] = []
    items: list[dict[str, Any]] = []
    items.extend(_json_ld(tree, errors))
    items.extend(_microdata(tree, page_url, errors))
    opengraph = _opengraph(tree, page_url)
    types: dict[str, None] = {}
    for item in items:  # the types a page declares are its items', not their parts'
        for name in _types(item):
            types.setdefault(name, None)
        for node in typed_nodes(item):
            _check(node, errors)
    if opengraph:
        types.setdefault(f"og:{opengraph.get('og:type') or 'website'}", None)
    kept = tuple(dict.fromkeys(error[:ERROR_CHARS] for error in errors))[:MAX_ERRORS]
    return Structured(tuple(types), kept, items, opengraph)


# -- reading ---------------------------------------------------------------------------

def _json_ld(tree: Any, errors: list[str]) -> Iterator[dict[str, Any]]:
    blocks = [node for node in tree.iter("script")
              if (node.get("type") or "").strip().lower() == LD_JSON]
    for number, node in enumerate(blocks, 1):
        text = node.text or ""
        if nesting(text) > MAX_DEPTH:
            errors.append(f"JSON-LD block {number} is nested deeper than {MAX_DEPTH} "
                          "levels: not read")
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            errors.append(f"JSON-LD block {number} does not parse: {exc}")
            continue
        for item in data if isinstance(data, list) else [data]:
            if not isinstance(item, dict):
                errors.append(f"JSON-LD block {number}: an item that is not an object")
                continue
            yield from _graph(item, item.get("@context"), number, errors)


def nesting(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings
    not counted), found without parsing it: the parser itself would recurse."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(accumulate(1 if bracket in "[{" else -1 for bracket in brackets), default=0)


def _graph(item: dict[str, Any], context: Any, number: int, errors: list[str]
           ) -> Iterator[dict[str, Any]]:
    """An item, or the items of its ``@graph``, each judged by the context in force."""
    context = item.get("@context", context)
    problem = _context_problem(context)
    if "@graph" in item and isinstance(item["@graph"], list):
        for member in item["@graph"]:
            if isinstance(member, dict):
                yield from _graph(member, context, number, errors)
        return
    if problem is not None:
        errors.append(f"JSON-LD block {number}: {problem}")
        return
    yield item


def _context_problem(context: Any) -> str | None:
    if context is None:
        return "no @context (schema.org expected)"
    names = context if isinstance(context, list) else [context]
    for name in names:
        if isinstance(name, dict):
            name = name.get("@vocab")
        if isinstance(name, str) and name.strip().rstrip("/").lower() in SCHEMA_ORG:
            return None
    return f"@context {str(context)[:100]!r} is not schema.org"


def _microdata(tree: Any, page_url: str, errors: list[str]) -> Iterator[dict[str, Any]]:
    if not tree.xpath("//*[@itemscope]"):
        return
    from extruct.w3cmicrodata import MicrodataExtractor

    for item in MicrodataExtractor().extract_items(tree, base_url=page_url):
        kind = item.get("type")
        kinds = kind if isinstance(kind, list) else [kind] if kind else []
        if kinds and not all(_SCHEMA_PREFIX.match(str(name)) for name in kinds):
            errors.append(f"Microdata itemtype {' '.join(map(str, kinds))!r} is not "
                          "schema.org")
            continue
        yield _as_json_ld(item)


def _as_json_ld(item: dict[str, Any]) -> dict[str, Any]:
    """A Microdata item in JSON-LD's shape, so one set of rules checks both."""
    node: dict[str, Any] = {}
    if item.get("type"):
        node["@type"] = item["type"]
    for name, value in (item.get("properties") or {}).items():
        node[name] = _microdata_value(value)
    return node


def _microdata_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_microdata_value(member) for member in value]
    if isinstance(value, dict) and "properties" in value:
        return _as_json_ld(value)
    return value


def _opengraph(tree: Any, page_url: str) -> dict[str, str]:
    from extruct.opengraph import OpenGraphExtractor

    found: dict[str, str] = {}
    for item in OpenGraphExtractor().extract_items(tree, base_url=page_url):
        for name, value in item.get("properties") or ():
            found.setdefault(name, value)  # the first of a repeated property
    return found


# -- checking --------------------------------------------------------------------------

def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return [_SCHEMA_PREFIX.sub("", name) for name in kinds if isinstance(name, str) and name]


def typed_nodes(value: Any) -> Iterator[dict[str, Any]]:
    """Every object with an ``@type`` in an item, nested ones included (a Product's
    offers, a FAQPage's questions and their answers)."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if "@type" in current:
                yield current
            stack.extend(reversed(list(current.values())))
        elif isinstance(current, list):
            stack.extend(reversed(current))


def _present(node: dict[str, Any], name: str) -> bool:
    value = node.get(name)
    return value not in (None, "", [], {})


def _check(node: dict[str, Any], errors: list[str]) -> None:
    kinds = set(_types(node))
    for rule in RULES:
        matched = kinds & rule.types
        if not matched:
            continue
        kind = sorted(matched)[0]
        if rule.any_of:
            if not any(_present(node, name) for name in rule.properties):
                errors.append(f"{kind}: none of {', '.join(rule.properties)} "
                              f"({rule.level})")
            continue
        for name in rule.properties:
            if not _present(node, name):
                errors.append(f"{kind}: no {name} ({rule.level})")
    if "BreadcrumbList" in kinds:
        _check_breadcrumbs(node, errors)


def _check_breadcrumbs(node: dict[str, Any], errors: list[str]) -> None:
    elements = node.get("itemListElement")
    if not isinstance(elements, list):
        elements = [elements] if isinstance(elements, dict) else []
    for number, element in enumerate(elements, 1):
        if not isinstance(element, dict):
            continue
        link = element.get(LIST_ITEM_LINK)
        for name in LIST_ITEM_NEEDS:
            named_on_item = name == "name" and isinstance(link, dict) and _present(link, name)
            if not _present(element, name) and not named_on_item:
                errors.append(f"BreadcrumbList: ListItem {number} has no {name} (required)")
        if number < len(elements) and not _present(element, LIST_ITEM_LINK):
            errors.append(f"BreadcrumbList: ListItem {number} has no item (required "
                          "for all but the last)")
