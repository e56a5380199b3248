"""A crawl that keeps every link still judges each link once per page reader — over a socket."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from siteserver import RunningServer

from crawler.config import CrawlConfig
from crawler.engine.admission import Admission
from crawler.engine.coordinator import crawl
from crawler.engine.page_fetcher import parse_children
from crawler.store.state import CrawlState

pytestmark = pytest.mark.timeout(120)

PAGES = 16


def _site(root: Path) -> Path:
    """Pages that all carry the same navigation, as most sites' pages do."""
    root.mkdir()
    navigation = "".join(f'<a href="/p{n}.html">{n}</a>' for n in range(4))
    for n in range(PAGES):
        (root / f"p{n}.html").write_text(
            f"<title>{n}</title><nav><a href='/'>home</a>{navigation}</nav>"
            f'<a href="p{(n + 1) % PAGES}.html">next</a>'
            '<a href="https://elsewhere.test/">out</a>')
    (root / "index.html").write_text('<title>home</title><a href="p0.html">start</a>')
    return root


@pytest.mark.parametrize("audit", [False, True])
def test_the_state_keeps_every_link_and_each_is_judged_once_per_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, audit: bool) -> None:
    """The state stores each page's every link (a re-crawl replays them) and an audit
    counts who links where, so those crawls get every link of every page. The crawling
    process judges only those its page reader had not handed over before: the
    navigation on every page is judged once for each reader, not once a page."""
    judged: Counter[str] = Counter()
    consider = Admission.consider

    def counted(self: Admission, url: str, *args: Any, **kwargs: Any) -> None:
        judged[url] += 1
        consider(self, url, *args, **kwargs)

    monkeypatch.setattr(Admission, "consider", counted)
    state_path = tmp_path / "state.db"
    with RunningServer(_site(tmp_path / "site")) as site:
        done = asyncio.run(crawl(CrawlConfig(start_url=site.url + "/", audit=audit,
                                             state_path=str(state_path))))
        root = site.url + "/"
    fetched = [record.url for record in done.records if record.status == 200]
    assert len(fetched) == PAGES + 1
    state = CrawlState(state_path, root)
    try:
        stored = [state.previous(url) for url in fetched]
        linked = Counter(link for page in stored if page is not None
                         for link in set(page.links))
    finally:
        state.close()
    url, pages = linked.most_common(1)[0]
    assert pages >= PAGES  # on every page, and stored with each
    assert 1 <= judged[url] <= parse_children()
    if audit:  # who links where: every page that links it
        assert done.referrers is not None
        assert done.referrers.count(url) >= pages
