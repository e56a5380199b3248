"""``sitemap-crawler history STATE``: the last runs a state file kept, as a table, or
written as one page, JSON or CSV (``--report``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click

from crawler.cli.failure import EXIT_OUTPUT, EXIT_USAGE, Failure
from crawler.cli.report_files import atomic_text

FORMATS = (".html", ".json", ".csv")


def show_history(state: Path, last: int, reports: tuple[Path, ...]) -> int:
    from crawler.cli import history_report
    from crawler.store.run_history import last_runs

    for path in reports:
        if path.suffix.lower() not in FORMATS:
            raise Failure(f"--report {path}: the format follows the extension, one of "
                          f"{', '.join(FORMATS)}", EXIT_USAGE)
    if not state.is_file():
        raise Failure(f"{state}: no such state file", EXIT_USAGE)
    try:
        runs = last_runs(state, last, with_urls=bool(reports))
    except sqlite3.DatabaseError as exc:
        raise Failure(f"{state} is not a sitemap-crawler state file ({exc})", EXIT_USAGE) \
            from None
    for path in reports:
        kind = path.suffix.lower()
        text = (history_report.as_html(runs, state.name) if kind == ".html" else
                history_report.as_json(runs) if kind == ".json" else history_report.as_csv(runs))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Failure(f"cannot write {path}: {exc.strerror}", EXIT_OUTPUT) from None
        with atomic_text(path) as out:
            out.write(text)
    if not reports:
        click.echo(history_report.table(runs) if runs else
                   f"{state}: no run kept yet (runs with --state keep their record)",
                   nl=not runs)
    return 0
