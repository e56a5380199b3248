"""``--workers auto``: how many workers it may add on a machine of N cores."""

from __future__ import annotations

import os

import pytest

from crawler.engine import adaptive_pages
from crawler.engine.adaptive_pages import auto_workers, thresholds


@pytest.mark.parametrize(("cores", "concurrency", "expected"), [
    (1, 32, 0),
    (2, 32, 1),  # the loop and its parse child already fill two cores: none is added
    (3, 32, 1),
    (4, 32, 2),
    (8, 32, 4),
    (8, 4, 2),  # never more than --concurrency allows
])
def test_half_the_usable_cores(monkeypatch: pytest.MonkeyPatch, cores: int, concurrency: int,
                               expected: int) -> None:
    monkeypatch.delenv("SITEMAP_CRAWLER_AUTO_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cores)), raising=False)
    assert auto_workers(concurrency) == expected


def test_the_override_sets_thresholds_and_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITEMAP_CRAWLER_AUTO_WORKERS", "4,0,0.5,2,3")
    assert thresholds() == (4, 0, 0.5, 2) and auto_workers(32) == 3
    monkeypatch.setenv("SITEMAP_CRAWLER_AUTO_WORKERS", "nonsense")
    assert thresholds() == (adaptive_pages.MIN_PAGES, adaptive_pages.MIN_BACKLOG,
                            adaptive_pages.BUSY, adaptive_pages.CHECK_EVERY)
