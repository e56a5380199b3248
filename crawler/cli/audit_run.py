"""``audit``: the crawl, its reports (or the triaged summary in the terminal), and the
exit code --fail-on asks for; stopped at any phase, the reports of what was known."""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from crawler.audit.names import CHANGES, FINDINGS
from crawler.cli import failure
from crawler.cli.crawl_run import internal_errors, run
from crawler.cli.failure import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OUTPUT, Failure
from crawler.cli.progress import CrawlDisplay
from crawler.cli.report_files import check_paths, check_reports, report_dirs, write_reports
from crawler.cli.sitemaps import seed_lines
from crawler.cli.wiring import crawl_config, findings_named
from crawler.engine.result import CrawlResult
from crawler.urls.normalize import normalize_url
from crawler.urls.scope import Scope
from sitemap_writer import OutputError


def audit(display: CrawlDisplay, *, quiet: bool, start_url: str,
           report_files: tuple[Path, ...], fail_on: str | None,
           compare_with: Path | None = None, keep_duplicates: bool = False,
           **crawl_options: Any) -> int:
    """``audit``: the crawl, its reports, and exit 6 for a finding named by --fail-on."""
    check_reports(report_files)
    check_paths(report_files, crawl_options.get("state_path"))
    wanted = findings_named(fail_on)
    config = crawl_config(start_url, {**crawl_options, "audit": True, "command": "audit"})
    start = config.filters().clean(normalize_url(config.start_url) or config.start_url)
    from crawler.cli.previous_audit import kept_in_state, read_report

    previous = read_report(compare_with, start) if compare_with is not None else None
    state = Path(config.state_path) if config.state_path is not None else None
    try:
        report_dirs(report_files)
    except OutputError as exc:
        raise Failure(str(exc), EXIT_OUTPUT) from None
    started = time.monotonic()
    try:
        result = run(display, config)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: report what is known, then exit 130
        if display.latest is None:
            raise
        result = display.latest
        result.interrupted = result.interrupted or _unfinished(result)
        result.elapsed = time.monotonic() - started
        previous, state = None, None  # a part of the site is no change to report or keep
    display.phase = "writing reports"
    if not keep_duplicates:  # listed once, as the sitemap would; the others duplicate-of
        from crawler.engine.duplicates import drop_duplicates

        drop_duplicates(result)
    if result.external_note and result.external_note != "interrupted":
        failure.warn(result.external_note)  # once, not as a broken link each
    scope = Scope.for_start(normalize_url(config.start_url) or config.start_url, config.prefix)
    from crawler.page.hreflang import sitemap_alternates

    _alternates, problems = (sitemap_alternates(result.listed(), scope.contains)
                             if config.hreflang else ({}, []))
    if previous is None and state is not None:
        previous = kept_in_state(state, result.start_url)
    found = write_reports(report_files, result, {
        "hreflang": [asdict(problem) for problem in problems],
        "compared_with": None if previous is None else (
            str(compare_with) if compare_with is not None else "the last audit in --state")},
        previous=previous, snapshot_to=state, failing=wanted,
        terminal=None if report_files else _print_summary)
    if state is not None:  # its reports are its output: nothing to resume
        from crawler.store.state_file import mark_published

        mark_published(state)
    if not quiet and not result.interrupted:  # then the one line below says it all
        for line in seed_lines(result):
            display.console.print(line, markup=False)
        counts = ", ".join(f"{name} {found[name]['count']}" for name in FINDINGS)
        since = ", ".join(f"{name} {found[name]['count']}" for name in CHANGES
                          if found.get(name, {}).get("count"))
        written = (f"report(s): {', '.join(map(str, report_files))}" if report_files
                   else "summary above; --report FILE for every row")
        display.console.print(
            f"audited {result.stats.fetched} pages in {time.monotonic() - started:.1f}s: "
            f"{counts}; {written}", markup=False)
        if previous is not None:
            display.console.print(f"since the last audit: {since or 'no change'}",
                                  markup=False)
    if result.interrupted:
        return failure.fail(f"interrupted ({result.interrupted}); the report(s) say what was "
                            "known then", EXIT_INTERRUPTED)
    present = [name for name in wanted if found.get(name, {}).get("count")]
    if present:
        return failure.fail("findings present: " + ", ".join(
            f"{name} ({found[name]['count']})" for name in present), EXIT_FINDINGS)
    return internal_errors(result)


def _unfinished(result: CrawlResult) -> str:
    """The phase a stopped audit did not finish, as its reports say it."""
    stats = result.stats
    if result.phase == "pages":
        return (f"pages: {stats.fetched:,} fetched, {stats.queued + stats.in_flight:,} "
                "still to fetch, interrupted")
    if result.phase == "live sitemap":
        return "live sitemap: interrupted while it was read"
    if result.phase == "orphans":
        return "orphans: interrupted while they were fetched"
    return f"{result.phase}: interrupted"


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
