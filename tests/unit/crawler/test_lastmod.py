from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crawler.page.lastmod import choose_lastmod, content_history

HEADER = datetime(2024, 1, 1, tzinfo=UTC)
CHANGED = datetime(2025, 6, 1, tzinfo=UTC)
NOW = datetime(2026, 11, 22, tzinfo=UTC)


@pytest.mark.parametrize(("mode", "header", "changed", "expected"), [
    ("auto", HEADER, CHANGED, HEADER),
    ("auto", None, CHANGED, CHANGED),
    ("auto", None, None, None),
    ("header", None, CHANGED, None),
    ("header", HEADER, CHANGED, HEADER),
    ("none", HEADER, CHANGED, None),
])
def test_choose_lastmod(mode: str, header, changed, expected) -> None:
    assert choose_lastmod(mode, header, changed) == expected


@pytest.mark.parametrize(("new", "old", "old_changed", "expected"), [
    (b"a", None, None, (b"a", None)),          # first sight: unknown
    (b"a", b"a", None, (b"a", None)),          # unchanged, still unknown
    (b"a", b"a", CHANGED, (b"a", CHANGED)),    # unchanged keeps its date
    (b"b", b"a", CHANGED, (b"b", NOW)),        # changed now
    (None, b"a", CHANGED, (b"a", CHANGED)),    # an error this time forgets nothing
])
def test_content_history(new, old, old_changed, expected) -> None:
    assert content_history(new, old, old_changed, NOW) == expected
