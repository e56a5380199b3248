"""The report files: their formats, paths checked before the first request, and
writing each one atomically."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from crawler.cli.failure import EXIT_OUTPUT, EXIT_USAGE, Failure
from crawler.engine.result import CrawlResult

REPORT_FORMATS = {".json": "json", ".csv": "csv", ".html": "html", ".junit.xml": "junit",
                  ".md": "md"}
STDOUT = Path("-")  # --report -: the Markdown summary on standard output


def report_kind(path: Path) -> str | None:
    """The format a report path asks for, by its extension (``-``: Markdown, printed)."""
    if path == STDOUT:
        return "md"
    name = path.name.lower()
    for extension, kind in REPORT_FORMATS.items():
        if name.endswith(extension) and len(name) > len(extension):
            return kind
    return None


def check_reports(report_files: tuple[Path, ...]) -> None:
    for path in report_files:
        if report_kind(path) is None:
            raise Failure(f"--report {path}: the format follows the extension, which must be "
                          f"one of {', '.join(REPORT_FORMATS)} (or - for the summary on "
                          "standard output)", EXIT_USAGE)


def check_paths(report_files: tuple[Path, ...], state_path: str | None,
                 out_dir: Path | None = None) -> None:
    """Paths that would collide are refused before the first request (exit 2): a
    report that is a directory (it failed only after the whole crawl), a report
    that is the state file (it overwrote the state), a file in --out that the
    writer replaces or prunes (a state named like a shard was deleted)."""
    named: dict[Path, str] = {}
    files = [(f"--report {path}", path) for path in report_files if path != STDOUT]
    if state_path is not None:
        files.append((f"--state {state_path}", Path(state_path)))
    out = out_dir.resolve() if out_dir is not None else None
    for option, path in files:
        if path.is_dir():
            raise Failure(f"{option} is a directory; name a file", EXIT_USAGE)
        resolved = path.resolve()
        if resolved in named:
            raise Failure(f"{option} is the same file as {named[resolved]}; give each its "
                          "own", EXIT_USAGE)
        named[resolved] = option
        if out is not None and resolved.parent == out and _writes_or_prunes(resolved.name):
            raise Failure(f"{option} is a file the sitemaps in --out {out_dir} replace or "
                          "remove; keep it elsewhere", EXIT_USAGE)


def _writes_or_prunes(name: str) -> bool:
    from sitemap_writer import writes_or_prunes  # the writer, loaded when a report is named

    return writes_or_prunes(name)


def report_dirs(report_files: tuple[Path, ...]) -> None:
    from sitemap_writer import ensure_output_dir

    for path in report_files:
        if path != STDOUT:
            ensure_output_dir(path.parent if str(path.parent) else Path("."))


def write_reports(report_files: tuple[Path, ...], result: CrawlResult,
                   extra: dict[str, Any], *, previous: Any = None,
                   snapshot_to: Path | None = None,
                   failing: list[str] | None = None,
                   terminal: Any = None,
                   written: list[Path] | None = None,
                   sections: Any = None) -> dict[str, dict[str, Any]]:
    """Each report streamed to its file, rows made as they are written; the findings
    (computed once for every format) are returned for the summary and --fail-on.

    ``previous`` (a :class:`crawler.audit.changes.Snapshot`: the report given to
    ``--compare-with``, or the last audit kept in ``--state``) adds what changed
    since; ``snapshot_to`` (the state file) keeps this run's snapshot for the next.

    ``terminal`` (a console, for ``audit`` without ``--report``) gets the triaged
    summary instead of a file. ``written`` is told every file written, in order
    (an HTML report's CSVs beside it). ``sections`` (a
    :class:`crawler.cli.sections.Sections` that splits) counts pages and findings by
    section.

    The audit's modules are imported here, when there is a report to write: a crawl
    without ``--report`` never loads them."""
    if not report_files and terminal is None:
        return {}
    from crawler.audit.findings import findings
    from crawler.audit.report import report_head

    found = findings(result)
    if result.interrupted:
        extra = {**extra, "interrupted": result.interrupted}
    if previous is not None or snapshot_to is not None:
        _since_before(found, result, previous, snapshot_to)
    from crawler.audit.triage import annotate

    annotate(found)  # severity, why and how beside every finding, in every format
    if sections is not None:
        from crawler.audit.by_section import count_by_section

        extra = {**extra, "by_section": count_by_section(
            found, (record.url for record in result.records), sections.section_of,
            sections.order)}
    if terminal is not None:
        from crawler.audit.summary_text import summary_lines

        terminal(summary_lines(report_head(result, extra, found)))
    for path in report_files:
        beside = _write_one(path, result, extra, found, failing or [])
        if written is not None and path != STDOUT:
            written += [path, *(path.with_name(name) for name in beside)]
    return found


def _since_before(found: dict[str, dict[str, Any]], result: CrawlResult, previous: Any,
                  snapshot_to: Path | None) -> None:
    """What changed since ``previous``, added to ``found``; this run's snapshot kept."""
    from crawler.audit import changes
    from crawler.audit.report import iter_rows
    from crawler.store.state_file import keep_audit_snapshot

    now = changes.snapshot(result.start_url, found, iter_rows(result))
    if result.live_sitemap is not None:
        now.live = {url: lastmod for url, (lastmod, _sitemap) in
                    result.live_sitemap.entries.items() if lastmod is not None}
    if previous is not None:
        found.update({name: {"count": len(items), "items": items}
                      for name, items in changes.compare(previous, now).items()})
        if result.state_kept:  # what --state saw of each page's content
            _lastmods_moved(found, changes.lastmods_moved(previous, now, _changed(result)))
    if snapshot_to is not None:
        keep_audit_snapshot(snapshot_to, changes.dumps(now))


def _changed(result: CrawlResult) -> Any:
    from crawler.store.record_store import RecordStore

    records = RecordStore.of(result.records)

    def changed(url: str) -> bool | None:
        record = records.get(url)
        return record.content_changed if record is not None else None
    return changed


def _lastmods_moved(found: dict[str, dict[str, Any]], moved: list[dict[str, Any]]) -> None:
    """Lastmods the live sitemap moved without the content: ``sitemap-lastmod`` items."""
    if moved:
        finding = found["sitemap-lastmod"]
        finding["items"] = finding["items"] + moved
        finding["count"] = len(finding["items"])


def _write_one(path: Path, result: CrawlResult, extra: dict[str, Any],
               found: dict[str, dict[str, Any]], failing: list[str]) -> list[str]:
    """One report, in the format its name asks for (``-``: Markdown on stdout); the
    names of the files written beside it (an HTML report's URLs and findings CSVs)."""
    from crawler.audit.report import iter_rows, report_head, write_report_csv, write_report_json
    from crawler.audit.report_md import report_markdown

    if path == STDOUT:
        sys.stdout.write(report_markdown(report_head(result, extra, found)))
        sys.stdout.flush()
        return []
    kind = report_kind(path)
    with atomic_text(path) as out:
        if kind == "json":
            write_report_json(out, result, extra, found)
        elif kind == "csv":
            write_report_csv(out, result, found)
        elif kind == "junit":
            from crawler.cli.junit_report import write_junit

            write_junit(out, report_head(result, extra, found), failing)
        elif kind == "md":
            out.write(report_markdown(report_head(result, extra, found)))
        else:
            from crawler.audit.report_html import Beside, write_report_html

            beside = Beside(findings_csv=_findings_csv(path, found),
                            urls_csv=_urls_csv(path, result, found))
            write_report_html(out, report_head(result, extra, found),
                              lambda: iter_rows(result), beside)
            return [name for name in (beside.urls_csv, beside.findings_csv) if name]
    return []


def _urls_csv(html: Path, result: CrawlResult, found: dict[str, dict[str, Any]]) -> str:
    """Every URL row, beside an HTML report that shows the first of the scope's
    (``audit.html`` → ``audit.urls.csv``, what ``--report audit.csv`` holds)."""
    from crawler.audit.report import write_report_csv

    name = html.name[: -len(".html")] + ".urls.csv"
    with atomic_text(html.with_name(name)) as out:
        write_report_csv(out, result, found)
    return name


def _findings_csv(html: Path, found: dict[str, dict[str, Any]]) -> str | None:
    """Every item of every finding, beside an HTML report that shows only the first
    rows of the larger ones (``audit.html`` → ``audit.findings.csv``); its name, as
    the page links to it. None when the page holds every row."""
    from crawler.audit.report_html import ROWS_SHOWN

    if all(finding["count"] <= ROWS_SHOWN for finding in found.values()):
        return None
    from crawler.audit.findings_csv import write_findings_csv

    name = html.name[: -len(".html")] + ".findings.csv"
    with atomic_text(html.with_name(name)) as out:
        write_findings_csv(out, found)
    return name




@contextlib.contextmanager
def atomic_text(path: Path) -> Iterator[TextIO]:
    """A report written beside its final name and renamed over it once complete, so a
    failed or interrupted run leaves the previous report as it was."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or Path("."))
        with os.fdopen(fd, "w", encoding="utf-8", newline="", buffering=1 << 20) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise Failure(f"cannot write report {path}: {exc.strerror}", EXIT_OUTPUT) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # no partial report left behind
