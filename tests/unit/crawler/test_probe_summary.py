"""The soft-404 probes grouped as reports tell them."""

from __future__ import annotations

from crawler.audit.probe_summary import probe_groups


def test_probes_are_grouped_by_answer_and_the_first_three_of_each_named() -> None:
    probes = [{"url": f"http://s.test/d{n}/sitemap-crawler-probe-x", "status": 404,
               "answer": "not found, as it should"} for n in range(5)]
    probes.insert(2, {"url": "http://s.test/shop/sitemap-crawler-probe-x.html", "status": 200,
                      "answer": "a page, compared"})
    probes.append({"url": "http://s.test/private/sitemap-crawler-probe-x", "status": None,
                   "answer": "not asked: robots.txt disallows it"})
    missing, page, private = probe_groups(probes)
    assert (missing.count, len(missing.named), len(missing.more)) == (5, 3, 2)
    assert missing.named[0] == "http://s.test/d0/sitemap-crawler-probe-x"
    assert missing.said() == "5 answered 404 (not found, as it should)"
    assert page.said() == "1 answered 200 (a page, compared)" and page.more == ()
    assert private.said() == "1 was not asked (robots.txt disallows it)"
