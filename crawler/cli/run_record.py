"""A run's record for the history ``--state`` keeps (crawler.store.run_history): what
each command knows at its end, as the one summary ``history`` reads."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.engine.result import CrawlResult

if TYPE_CHECKING:  # what a run changed is loaded once a run has changes to keep
    from crawler.cli.run_changes import RunChanges


@dataclass(slots=True)
class RunOutcome:
    """What a run ended with, beyond its crawl: filled in as its phases go."""

    command: str
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    changes: RunChanges | None = None
    found: dict[str, dict[str, Any]] | None = None  # the findings, when reports were made
    by_section: list[dict[str, Any]] | None = None
    published: bool | None = None  # None: the command publishes nothing (audit)
    refused: str | None = None  # why the sitemaps were not published
    notifications: list[str] = field(default_factory=list)  # IndexNow, Search Console
    reports: list[str] = field(default_factory=list)
    exit_code: int = 0


def keep(path: Path, result: CrawlResult, outcome: RunOutcome, keep_runs: int) -> None:
    """The run's record, added to the history in the state file at ``path`` (SQLite
    loaded here, with --state only: not on a plain crawl's way to its first request)."""
    from crawler.store.run_history import RunRecord, keep_run

    stats = result.stats
    summary: dict[str, Any] = {
        "command": outcome.command,
        "seconds": round((datetime.now(UTC) - outcome.started).total_seconds(), 2),
        "fetched": stats.fetched, "listed": stats.listed, "errors": stats.errors,
        "not_modified": stats.not_modified, "interrupted": result.interrupted,
        "published": outcome.published, "refused": outcome.refused,
        "notifications": outcome.notifications, "reports": outcome.reports,
        "exit_code": outcome.exit_code,
    }
    urls: dict[str, list[str]] = {}
    if outcome.changes is not None:
        from crawler.cli.run_changes import KINDS

        summary["first"] = outcome.changes.first
        summary.update(outcome.changes.counts())
        urls = {kind: getattr(outcome.changes, kind) for kind in KINDS
                if getattr(outcome.changes, kind)}
    if outcome.found is not None:
        summary["findings"] = _by_severity(outcome.found)
    if outcome.by_section:
        summary["by_section"] = {row["section"]: {key: row[key] for key in (
            "pages", "error", "warning", "notice")} for row in outcome.by_section}
    keep_run(path, RunRecord(outcome.started.strftime("%Y-%m-%dT%H:%M:%SZ"), summary, urls),
             keep_runs)


def _by_severity(found: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Items present by severity (the ``new-``/``fixed-`` comparisons aside)."""
    from crawler.audit.names import FINDINGS
    from crawler.audit.triage import triage_of

    counted: Counter[str] = Counter()
    for name in FINDINGS:
        if found.get(name, {}).get("count"):
            counted[triage_of(name).severity] += found[name]["count"]
    return {severity: counted[severity] for severity in ("error", "warning", "notice")}
