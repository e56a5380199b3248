"""The three numbers of links out of a crawl's scope, under the one set of names
every summary, report and chart uses.

A site's "external links" can mean three different things, and tools that print
one number under that name disagree with each other and with themselves. Here
they are always three, always named so:

* **external URLs**: distinct URLs outside the crawl's scope that pages link to;
* **links**: the links to them, a page's link to a URL counted once;
* **pages**: the pages holding at least one.
"""

from __future__ import annotations

from collections.abc import Mapping

EXTERNAL_NAMES = ("external URLs", "links to them", "pages holding them")


def external_words(totals: Mapping[str, int | bool]) -> str:
    """``{"urls": 1675, "links": 1698, "pages": 1100}`` → "1,675 external URLs,
    1,698 links to them, on 1,100 pages"; "about" where the URL count is estimated."""
    about = "about " if totals.get("estimated") else ""
    urls, links, pages = int(totals["urls"]), int(totals["links"]), int(totals["pages"])
    return (f"{about}{urls:,} external URL{_s(urls)}, {links:,} link{_s(links)} to "
            f"{'them' if urls != 1 else 'it'}, on {pages:,} page{_s(pages)}")


def _s(count: int) -> str:
    return "" if count == 1 else "s"
