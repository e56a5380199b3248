"""The link graph's spool: every row back, in the order found, however the pages repeat
their links (navigation on every page, the same link twice on one page)."""

from __future__ import annotations

from crawler.store.link_spool import LinkSpool


def _inside(url: str) -> bool:
    return url.startswith("http://h/")


def test_rows_come_back_in_order_with_their_scope() -> None:
    spool = LinkSpool()
    nav = [("http://h/", "Home", ""), ("http://h/a", "A", ""), ("http://h/a", "A again", "")]
    expected = []
    for page in range(300):
        source = f"http://h/p{page}"
        here = f"http://h/p{page}#top"  # this page's own, linked twice
        edges = [(here, f"top of {page}", ""), *nav, (here, "back to the top", ""),
                 (f"http://h/p{page + 1}", f"next: {page + 1}", "nofollow ugc"),
                 ("https://elsewhere.example/", "=elsewhere", "sponsored")]
        spool.add(source, edges, _inside)
        expected += [(source, target, text, rel, _inside(target))
                     for target, text, rel in edges]
    spool.add("http://h/empty", [], _inside)  # a page without links gives no rows
    assert spool.count == len(expected) == 2100
    assert list(spool.rows()) == expected
    assert list(spool.rows()) == expected  # read again: the same
    spool.add("http://h/last", [("http://h/", "Home", "")], _inside)  # and written on
    assert list(spool.rows())[-1] == ("http://h/last", "http://h/", "Home", "", True)
    spool.close()
