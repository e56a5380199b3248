"""The properties Google documents for the rich results an audit checks — data only.

Source: Google Search Central, "Structured data" feature guides
(developers.google.com/search/docs/appearance/structured-data/…): ``article``,
``product-snippet``, ``breadcrumb``, ``faqpage`` and ``video``, as they read in
November 2026. Kept in one table so that when Google changes a guide, this is the
one place to change. A rule names the schema.org type it applies to (subtypes
named by Google are listed with it), the properties that must be present, and
the level Google gives them: Article has no *required* property in Google's
guide, only recommended ones, and the audit says so rather than calling them
errors of the same weight.

``one of`` rules hold when any one of the properties is present (a Product
snippet needs a review, a rating or an offer).
"""

from __future__ import annotations

from dataclasses import dataclass

REQUIRED = "required"
RECOMMENDED = "recommended"


@dataclass(frozen=True, slots=True)
class Rule:
    types: frozenset[str]  # schema.org type names the rule applies to
    properties: tuple[str, ...]  # each must be present (or one of them, with any_of)
    level: str = REQUIRED
    any_of: bool = False


ARTICLE = frozenset({"Article", "NewsArticle", "BlogPosting"})

RULES: tuple[Rule, ...] = (
    Rule(ARTICLE, ("headline",), RECOMMENDED),
    Rule(ARTICLE, ("image",), RECOMMENDED),
    Rule(ARTICLE, ("datePublished",), RECOMMENDED),
    Rule(ARTICLE, ("author",), RECOMMENDED),
    Rule(frozenset({"Product"}), ("name",)),
    Rule(frozenset({"Product"}), ("review", "aggregateRating", "offers"), any_of=True),
    Rule(frozenset({"BreadcrumbList"}), ("itemListElement",)),
    Rule(frozenset({"FAQPage"}), ("mainEntity",)),
    Rule(frozenset({"Question"}), ("name", "acceptedAnswer")),
    Rule(frozenset({"Answer"}), ("text",)),
    Rule(frozenset({"VideoObject"}), ("name", "thumbnailUrl", "uploadDate")),
)

# Each ListItem of a BreadcrumbList needs a position and a name, and every one but
# the last an item (the URL of that level): Google's breadcrumb guide.
LIST_ITEM_NEEDS = ("position", "name")
LIST_ITEM_LINK = "item"

# The vocabularies whose types the rules name: JSON-LD's @context, or Microdata's
# itemtype, must be one of these (with or without a trailing slash).
SCHEMA_ORG = ("https://schema.org", "http://schema.org")
