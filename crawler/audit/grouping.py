"""Where a large finding lives: the page templates and the path prefix its pages share.

1,154 rows of "missing h1" say less than "1 template, 1,154 pages": a site owner
fixes a template, not a thousand pages. Pages are told apart by their outline
(:func:`crawler.page.page_facts.outline`) and by the directories of their paths,
counted as the findings are read (counters, never a list of every URL: a large
site's findings are read from disk).
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlsplit

GROUPED_FROM = 10  # fewer pages than this are simply listed
TEMPLATES_SHOWN = 3


class Where:
    """The templates and directories of one finding's pages, as they are added."""

    def __init__(self) -> None:
        self.pages = 0
        self.templates: Counter[str] = Counter()
        self.samples: dict[str, str] = {}
        self.directories: Counter[str] = Counter()

    def add(self, url: str, template: str | None) -> None:
        self.pages += 1
        if template is not None:
            self.templates[template] += 1
            self.samples.setdefault(template, url)
        path = urlsplit(url).path or "/"
        parts = path.split("/")[1:-1]  # the directories above the page
        for depth in range(1, len(parts) + 1):
            self.directories["/" + "/".join(parts[:depth]) + "/"] += 1

    def summary(self) -> dict[str, Any] | None:
        """``{"pages", "templates", "top": [{template, pages, sample}], "prefix":
        {path, pages}}``; None when there are too few pages to group."""
        if self.pages < GROUPED_FROM:
            return None
        top = [{"template": template, "pages": count, "sample": self.samples[template]}
               for template, count in self.templates.most_common(TEMPLATES_SHOWN)]
        # the deepest directory holding at least half the pages
        half = self.pages / 2
        held = [(path.count("/"), count, path) for path, count in self.directories.items()
                if count >= half]
        prefix = None
        if held:
            _depth, count, path = max(held)
            prefix = {"path": path, "pages": count}
        return {"pages": self.pages, "templates": len(self.templates), "top": top,
                "prefix": prefix}


def describe(groups: dict[str, Any] | None) -> str | None:
    """One line a person reads: "1 template, 1,154 pages; 1,100 under /docs/15/"."""
    if not groups:
        return None
    parts = []
    top = groups["top"]
    if top and top[0]["pages"] * 2 >= groups["pages"]:
        if groups["templates"] == 1:
            parts.append(f"1 template, {groups['pages']:,} pages")
        else:
            parts.append(f"{top[0]['pages']:,} of {groups['pages']:,} pages share 1 template "
                         f"({groups['templates']:,} in all)")
    elif groups["templates"]:
        parts.append(f"{groups['pages']:,} pages on {groups['templates']:,} templates")
    prefix = groups.get("prefix")
    if prefix is not None:
        parts.append(f"{prefix['pages']:,} under {prefix['path']}")
    return "; ".join(parts) or None
