"""Where a large finding lives: the page templates and the path prefix its pages share.

1,154 rows of "missing h1" say less than "1 template, 1,154 pages": a site owner
fixes a template, not a thousand pages. Pages are told apart by their outline
(:func:`crawler.page.page_facts.outline`) and by the directories of their paths,
counted as the findings are read (counters, never a list of every URL: a large
site's findings are read from disk).

A template is named by the path pattern of its pages (``/library/*.html``,
``/blog/*/*/``): a hash of an outline means nothing to the person who has to find
the template, the URLs it serves do.
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlsplit

GROUPED_FROM = 10  # fewer pages than this are simply listed
TEMPLATES_SHOWN = 3
SHAPES_KEPT = 256  # distinct (directory, ending) shapes counted a template, at most


class Where:
    """The templates and directories of one finding's pages, as they are added."""

    def __init__(self) -> None:
        self.pages = 0
        self.templates: Counter[str] = Counter()
        self.samples: dict[str, str] = {}
        self.directories: Counter[str] = Counter()
        self.shapes: dict[str, Counter[tuple[str, str]]] = {}  # template -> its paths' shapes

    def add(self, url: str, template: str | None) -> None:
        self.pages += 1
        path = urlsplit(url).path or "/"
        if template is not None:
            self.templates[template] += 1
            sample = self.samples.get(template)
            if sample is None or url < sample:  # the first in URL order: the same each run
                self.samples[template] = url
            shapes = self.shapes.setdefault(template, Counter())
            shape = shape_of(path)
            if shape in shapes or len(shapes) < SHAPES_KEPT:
                shapes[shape] += 1
        parts = path.split("/")[1:-1]  # the directories above the page
        for depth in range(1, len(parts) + 1):
            self.directories["/" + "/".join(parts[:depth]) + "/"] += 1

    def summary(self) -> dict[str, Any] | None:
        """``{"pages", "templates", "top": [{template, pages, sample}], "prefix":
        {path, pages}}``; None when there are too few pages to group."""
        if self.pages < GROUPED_FROM:
            return None
        top = [{"template": template, "pages": count, "sample": self.samples[template],
                "pattern": pattern_of(self.shapes[template])}
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


def shape_of(path: str) -> tuple[str, str]:
    """A page's path as (its directory, its ending): ``/library/os.html`` →
    ``("/library/", ".html")``; ``/blog/2024/post/`` → ``("/blog/2024/", "/")``."""
    if path == "/":
        return "", "/"
    if path.endswith("/"):
        directory = path[: path.rstrip("/").rfind("/") + 1]
        return directory, "/"
    directory, name = path[: path.rfind("/") + 1], path[path.rfind("/") + 1:]
    dot = name.rfind(".")
    return directory, name[dot:] if dot > 0 else ""


def pattern_of(shapes: Counter[tuple[str, str]]) -> str:
    """The path pattern of a template's pages: their directories merged segment by
    segment (``*`` where they differ, ``**`` where their depths do), then ``*`` and
    the ending they share (``/library/*.html``, ``/docs/*/*.html``, ``/*/``)."""
    if set(shapes) == {("", "/")}:
        return "/"
    directories = [directory.strip("/").split("/") if directory.strip("/") else []
                   for directory, _ending in shapes if directory]
    endings = {ending for _directory, ending in shapes}
    ending = endings.pop() if len(endings) == 1 else ""
    depths = {len(parts) for parts in directories}
    if len(depths) == 1:
        merged = ["*" if len({parts[i] for parts in directories}) > 1 else directories[0][i]
                  for i in range(depths.pop())]
    else:
        merged = []
        for column in zip(*directories, strict=False):
            if len(set(column)) > 1:
                break
            merged.append(column[0])
        merged.append("**")
    head = "/" + "".join(part + "/" for part in merged)
    return head + ("*/" if ending == "/" else "*" + ending)


def _template_words(top: dict[str, Any]) -> str:
    """"/docs/*.html, e.g. /docs/page-004.html"."""
    sample = urlsplit(top["sample"])
    path = sample.path + (f"?{sample.query}" if sample.query else "")
    pattern = top.get("pattern")
    return f"{pattern}, e.g. {path}" if pattern else f"e.g. {path}"


def describe(groups: dict[str, Any] | None) -> str | None:
    """One line a person reads: "1 template (/docs/*.html, e.g. /docs/a.html), 1,154
    pages; 1,100 under /docs/"."""
    if not groups:
        return None
    parts = []
    top = groups["top"]
    if top and top[0]["pages"] * 2 >= groups["pages"]:
        named = _template_words(top[0])
        if groups["templates"] == 1:
            parts.append(f"1 template ({named}), {groups['pages']:,} pages")
        else:
            parts.append(f"{top[0]['pages']:,} of {groups['pages']:,} pages share 1 template "
                         f"({named}; {groups['templates']:,} templates in all)")
    elif groups["templates"]:
        parts.append(f"{groups['pages']:,} pages on {groups['templates']:,} templates, most "
                     "on " + ", ".join(item["pattern"] for item in top if item.get("pattern")))
    prefix = groups.get("prefix")
    if prefix is not None:
        parts.append(f"{prefix['pages']:,} under {prefix['path']}")
    return "; ".join(parts) or None
