"""``audit``: a site's health, in phases a newcomer reads top to bottom.

    start-up  → crawl (or what is known)  → report        → say         → exit code
    plan_audit  crawl_or_what_is_known     report_audit    say_audited   audit_exit

Stopped at any phase (Ctrl-C, SIGTERM), the reports say what was known then.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from crawler.audit.names import CHANGES, FINDINGS
from crawler.audit.triage import SEVERITIES, fix_first
from crawler.cli import failure
from crawler.cli.crawl_site import crawl_site, internal_errors
from crawler.cli.failure import (
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT,
    EXIT_USAGE,
    Failure,
)
from crawler.cli.progress import CrawlDisplay
from crawler.cli.report_files import check_paths, check_reports, report_dirs, write_reports
from crawler.cli.run_record import RunOutcome, keep
from crawler.cli.sections import Sections, choose_auto, parse_sections
from crawler.cli.sitemaps import seed_lines
from crawler.cli.wiring import crawl_config, findings_named
from crawler.config import CrawlConfig
from crawler.engine.result import CrawlResult
from crawler.urls.normalize import normalize_url
from crawler.urls.scope import Scope
from sitemap_writer import OutputError


@dataclass(slots=True)
class AuditPlan:
    """``audit``'s options, checked before anything is fetched."""

    config: CrawlConfig
    reports: tuple[Path, ...]
    fail_on: list[str]  # the findings that fail the run (--fail-on)
    keep_duplicates: bool
    compare_with: Path | None  # --compare-with: an earlier audit's report
    previous: dict[str, Any] | None  # what that report (or the state) says
    state: Path | None  # --state: the last audit kept there, this one kept next
    sections: Sections | None = None  # --section, --sections auto: counts by section
    keep_runs: int = 100  # --keep-runs: the runs --state keeps in its history
    written: list[Path] = field(default_factory=list)  # every file the reports wrote


def audit_command(display: CrawlDisplay, options: dict[str, Any], *, quiet: bool) -> int:
    """``audit``: the exit code of the whole run (6 for a finding --fail-on names)."""
    plan = plan_audit(options)
    outcome = RunOutcome("audit")
    started = time.monotonic()
    result = crawl_or_what_is_known(display, plan, started)
    found = report_audit(display, result, plan)
    if not quiet and not result.interrupted:  # then the one line of audit_exit says it all
        say_audited(display, result, found, plan, time.monotonic() - started)
    outcome.exit_code = audit_exit(result, found, plan)
    if plan.config.state_path is not None:
        outcome.found, outcome.reports = found, [str(path) for path in plan.written]
        outcome.by_section = _by_section(result, found, plan.sections)
        keep(Path(plan.config.state_path), result, outcome, plan.keep_runs)
    return outcome.exit_code


def _by_section(result: CrawlResult, found: dict[str, dict[str, Any]],
                sections: Sections | None) -> list[dict[str, Any]] | None:
    if sections is None or not sections.split:
        return None
    from crawler.audit.by_section import count_by_section

    return count_by_section(found, (record.url for record in result.records),
                            sections.section_of, sections.order)


def plan_audit(options: dict[str, Any]) -> AuditPlan:
    options = dict(options)
    reports: tuple[Path, ...] = options.pop("report_files")
    check_reports(reports)
    check_paths(reports, options.get("state_path"))
    wanted = findings_named(options.pop("fail_on"))
    compare_with = options.pop("compare_with", None)
    keep_duplicates = options.pop("keep_duplicates", False)
    keep_runs = options.pop("keep_runs", 100)
    if keep_runs < 1:
        raise Failure(f"--keep-runs must be 1 or more (got {keep_runs})", EXIT_USAGE)
    sections = parse_sections(options.pop("section", ()), options.pop("sections_mode", "none"))
    config = crawl_config(options.pop("start_url"),
                          {**options, "audit": True, "command": "audit"})
    start = config.filters().clean(normalize_url(config.start_url) or config.start_url)
    from crawler.cli.previous_audit import read_report

    previous = read_report(compare_with, start) if compare_with is not None else None
    try:
        report_dirs(reports)
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None
    return AuditPlan(config, reports, fail_on=wanted, keep_duplicates=keep_duplicates,
                     compare_with=compare_with, previous=previous,
                     state=Path(config.state_path) if config.state_path is not None else None,
                     sections=sections, keep_runs=keep_runs)


def crawl_or_what_is_known(display: CrawlDisplay, plan: AuditPlan, started: float
                           ) -> CrawlResult:
    """The crawl; stopped (Ctrl-C, SIGTERM), what it knew then, marked interrupted (a
    part of the site is then no change to report, nor an audit to keep)."""
    try:
        return crawl_site(display, plan.config)
    except KeyboardInterrupt:
        if display.latest is None:
            raise
    result = display.latest
    result.interrupted = result.interrupted or _unfinished(result)
    result.elapsed = time.monotonic() - started
    plan.previous, plan.state = None, None
    return result


def report_audit(display: CrawlDisplay, result: CrawlResult, plan: AuditPlan
                 ) -> dict[str, dict[str, Any]]:
    """The report files (or the triaged summary in the terminal); the findings."""
    display.phase = "writing reports"
    if not plan.keep_duplicates:  # listed once, as the sitemap would; the others duplicate-of
        from crawler.engine.duplicates import drop_duplicates

        drop_duplicates(result)
    if result.external_note and result.external_note != "interrupted":
        failure.warn(result.external_note)  # once, not as a broken link each
    config = plan.config
    scope = Scope.for_start(normalize_url(config.start_url) or config.start_url, config.prefix)
    from crawler.page.hreflang import sitemap_alternates

    _alternates, problems = (sitemap_alternates(result.listed(), scope.contains)
                             if config.hreflang else ({}, []))
    if plan.previous is None and plan.state is not None:
        from crawler.cli.previous_audit import kept_in_state

        plan.previous = kept_in_state(plan.state, result.start_url)
    compared = None if plan.previous is None else (
        str(plan.compare_with) if plan.compare_with is not None else "the last audit in --state")
    sections = plan.sections
    if sections is not None and not sections.patterns:  # --sections auto: as crawl splits
        choose_auto(sections, lambda: (record.url for record in result.listed()), scope.root)
    found = write_reports(plan.reports, result, {
        "hreflang": [asdict(problem) for problem in problems], "compared_with": compared},
        previous=plan.previous, snapshot_to=plan.state, failing=plan.fail_on,
        terminal=None if plan.reports else _print_summary, written=plan.written,
        sections=sections if sections is not None and sections.split else None)
    if plan.state is not None:  # its reports are its output: nothing to resume
        from crawler.store.state_file import mark_published

        mark_published(plan.state)
    return found


def say_audited(display: CrawlDisplay, result: CrawlResult, found: dict[str, dict[str, Any]],
                plan: AuditPlan, elapsed: float) -> None:
    for line in seed_lines(result):
        display.console.print(line, markup=False)
    since = ", ".join(f"{name} {found[name]['count']:,}" for name in CHANGES
                      if found.get(name, {}).get("count"))
    written = (f"report(s): {', '.join(map(str, plan.written or plan.reports))}"
               if plan.reports else "summary above; --report FILE for every row")
    display.console.print(f"audited {result.stats.fetched:,} pages in {elapsed:.1f}s: "
                          f"{_present(found)}; {written}", markup=False)
    if plan.previous is not None:
        display.console.print(f"since the last audit: {since or 'no change'}", markup=False)


def _present(found: dict[str, dict[str, Any]]) -> str:
    """The findings present, errors first (Fix first has said why and how):
    ``1 error, 2 warnings: broken-links 120, missing-h1 1, …``; or ``no finding``."""
    ranked = fix_first(found, FINDINGS)
    if not ranked:
        return "no finding"
    by_severity = Counter(entry.triage.severity for entry in ranked)
    tally = ", ".join(f"{count:,} {severity}{'s' if count > 1 else ''}"
                      for severity in SEVERITIES if (count := by_severity[severity]))
    return tally + ": " + ", ".join(f"{entry.name} {entry.count:,}" for entry in ranked)


def audit_exit(result: CrawlResult, found: dict[str, dict[str, Any]], plan: AuditPlan) -> int:
    if result.interrupted:
        return failure.fail(f"interrupted ({result.interrupted}); the report(s) say what was "
                            "known then", EXIT_INTERRUPTED)
    present = [name for name in plan.fail_on if found.get(name, {}).get("count")]
    if present:
        return failure.fail("findings present: " + ", ".join(
            f"{name} ({found[name]['count']})" for name in present), EXIT_FINDINGS)
    return internal_errors(result)


def _unfinished(result: CrawlResult) -> str:
    """The phase a stopped audit did not finish, as its reports say it."""
    stats = result.stats
    if result.phase == "pages":
        seen = stats.fetched + stats.queued + stats.in_flight
        return f"pages: {stats.fetched:,} of {seen:,} fetched"
    if result.phase == "live sitemap":
        return "live sitemap: stopped while it was read"
    if result.phase == "orphans":
        return "orphans: stopped while they were fetched"
    return f"{result.phase}: stopped"


def _print_summary(lines: list[list[tuple[str, str]]]) -> None:
    """``audit`` without ``--report``: the triaged summary on standard output, in colour
    on a terminal only."""
    import sys

    from crawler.audit.summary_text import plain

    if not sys.stdout.isatty():
        sys.stdout.write(plain(lines))
        sys.stdout.flush()
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False, soft_wrap=True)
    for line in lines:
        text = Text()
        for piece, style in line:
            text.append(piece, style=style or None)
        console.print(text)
