from __future__ import annotations

import pytest

from crawler.config import CrawlConfig
from crawler.config.hints import build_hints, observed_word
from crawler.core.errors import ConfigError
from crawler.core.records import PageRecord
from crawler.page.lastmod import median_interval

H, D = 3600, 86400


@pytest.mark.parametrize(("seconds", "word"), [
    (60, "hourly"), (H, "hourly"), (4 * H, "hourly"), (6 * H, "daily"), (D, "daily"),
    (2 * D, "daily"), (3 * D, "weekly"), (7 * D, "weekly"), (14 * D, "weekly"),
    (15 * D, "monthly"), (30 * D, "monthly"), (100 * D, "monthly"), (110 * D, "yearly"),
    (800 * D, "yearly"),
])
def test_observed_intervals_map_to_the_nearest_word(seconds: float, word: str) -> None:
    assert observed_word(seconds) == word


def test_median_needs_two_changes() -> None:
    assert median_interval(()) is None and median_interval((100,)) is None
    assert median_interval((0, 10)) == 10
    assert median_interval((0, 10, 40, 50)) == 10  # gaps 10, 30, 10
    assert median_interval((0, 10, 40)) == 20  # gaps 10, 30


def _record(path: str, depth: int = 0, interval: float | None = None) -> PageRecord:
    return PageRecord(f"https://h{path}", depth, change_interval=interval)


def test_rules_first_match_wins_and_observed_and_depth_have_their_place() -> None:
    hints = build_hints(["/news/*=hourly", "observed", "*=monthly"],
                        ["/=1.0", "/products/*=0.8", "depth"])
    assert hints.changefreq(_record("/news/a", interval=30 * D)) == "hourly"
    assert hints.changefreq(_record("/blog/a", interval=2 * D)) == "daily"
    assert hints.changefreq(_record("/blog/b")) == "monthly"  # no history: next rule
    assert hints.priority(_record("/", 0)) == 1.0
    assert hints.priority(_record("/products/x", 3)) == 0.8
    assert hints.priority(_record("/a/b/c", 3)) == 0.7
    assert hints.priority(_record("/deep", 12)) == 0.1
    assert build_hints().changefreq(_record("/x", interval=D)) is None


@pytest.mark.parametrize(("changefreq", "priority", "words"), [
    (["/x=sometimes"], [], "not one of always, hourly"),
    (["/x"], [], "must read PATTERN=VALUE"),
    ([], ["/x=1.5"], "0.0 to 1.0"),
    ([], ["/x=0.85"], "one decimal"),
    ([], ["/x=high"], "0.0 to 1.0"),
    ([], ["x=0.5"], "can never match"),
])
def test_bad_rules_are_refused(changefreq: list[str], priority: list[str], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        build_hints(changefreq, priority)


def test_observed_needs_state() -> None:
    with pytest.raises(ConfigError, match="needs --state"):
        CrawlConfig(start_url="https://h/", changefreq=("observed",))
    config = CrawlConfig(start_url="https://h/", changefreq=("observed",), state_path="s.db",
                         lastmod="header")
    assert config.fingerprints  # observed needs them even when lastmod does not
