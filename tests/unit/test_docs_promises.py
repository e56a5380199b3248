"""What the manual promises matches what the commands do.

The report formats: each extension the CLI accepts (and ``-``) is named on the
audits page and in the crawl command's reference, so a reader is never told a
working format "exits 2".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.cli.report_files import REPORT_FORMATS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pages"


@pytest.mark.parametrize("page", ["audits.md", "crawl-command.md"])
def test_every_report_format_is_named(page: str) -> None:
    text = (DOCS / page).read_text()
    missing = [extension for extension in REPORT_FORMATS if f"`{extension}`" not in text]
    assert not missing, missing
    assert "`--report -`" in text or "or `-` for" in text


def test_the_audits_page_opens_with_fix_first_and_the_triage_table_of_the_code() -> None:
    """The table a reader weighs findings by is the one the reports use, word for word."""
    from crawler.audit.names import FINDINGS
    from crawler.audit.triage import TRIAGE

    text = (DOCS / "audits.md").read_text()
    first_image = text.index("![")
    assert text.index("img/audit-fix-first.png") == text.index("(", first_image) + 1
    assert (DOCS / "img" / "audit-fix-first.png").stat().st_size > 10_000
    for name in FINDINGS:
        triage = TRIAGE[name]
        row = (f"| `{name}` | {triage.severity} | {triage.why} | "
               f"{triage.how.replace('<', '&lt;')} |")
        assert row in text, name


def test_the_render_memory_budget_says_what_it_covers() -> None:
    """The 1.5 GB of two rendering workers bounds what pages make, not the browsers: the
    pages say so, with the figure measured on an ordinary site (#59, item 12)."""
    for page in ("security.md", "rendering.md"):
        text = " ".join((DOCS / page).read_text().split())
        assert "1.5 GB" in text and "1.57" in text, page
        assert "not the browsers themselves" in text or "do not bound the browsers" in text, page
