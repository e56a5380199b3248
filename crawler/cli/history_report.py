"""The history of runs kept in a state file, as a table, a CSV, JSON and one page — pure.

The page is self-contained (inline SVG, no script needed, nothing fetched) so it
reads the same from ``file://``: trend charts of the URLs listed, the errors, the
findings by severity and the run time; then each run, newest first, with what it
added and removed and links to its reports where they were kept.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Sequence
from typing import Any

from crawler.audit.report_html_assets import OPENING
from crawler.store.run_history import RunRecord

COLUMNS = ("id", "started", "command", "seconds", "fetched", "listed", "added", "removed",
           "changed", "restamped", "errors", "findings_error", "findings_warning",
           "findings_notice", "published", "refused", "exit_code")
URLS_SHOWN = 20  # of each kind a run added, removed or changed, on the page


def _row(run: RunRecord) -> dict[str, Any]:
    summary = run.summary
    findings = summary.get("findings") or {}
    row = {"id": run.id, "started": run.started, **{key: summary.get(key) for key in (
        "command", "seconds", "fetched", "listed", "added", "removed", "changed", "restamped",
        "errors", "published", "refused", "exit_code")}}
    row.update({f"findings_{severity}": findings.get(severity) for severity in (
        "error", "warning", "notice")})
    return row


def table(runs: Sequence[RunRecord]) -> str:
    """The runs as aligned text, oldest first, as a terminal shows them."""
    heads = ("run", "started (UTC)", "command", "took", "fetched", "listed", "+added",
             "-removed", "~changed", "errors", "findings E/W/N", "published")
    lines = [heads]
    for run in runs:
        row = _row(run)
        findings = ("/".join(str(row[f"findings_{s}"]) for s in ("error", "warning", "notice"))
                    if run.summary.get("findings") else "")
        published = {True: "yes", False: "refused", None: ""}[row["published"]]
        lines.append((str(row["id"]), run.started.replace("T", " ").rstrip("Z"),
                      str(row["command"]), f"{row['seconds'] or 0:.1f}s",
                      *(_n(row[key]) for key in ("fetched", "listed", "added", "removed",
                                                 "changed", "errors")),
                      findings, published))
    widths = [max(len(line[i]) for line in lines) for i in range(len(heads))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths,
                                                                         strict=True)).rstrip()
                     for line in lines) + "\n"


def _n(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else ""


def as_csv(runs: Sequence[RunRecord]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(_row(run) for run in runs)
    return out.getvalue()


def as_json(runs: Sequence[RunRecord]) -> str:
    return json.dumps([{"id": run.id, "started": run.started, **run.summary,
                        "urls": run.urls} for run in runs], indent=1, ensure_ascii=False) + "\n"


def as_html(runs: Sequence[RunRecord], state: str) -> str:
    charts = [_chart("URLs listed", runs, [("listed", "#0969da")]),
              _chart("Errors", runs, [("errors", "#cf222e")]),
              _chart("Findings by severity", runs, [("findings.error", "#cf222e"),
                                                     ("findings.warning", "#9a6700"),
                                                     ("findings.notice", "#0969da")]),
              _chart("Run time (s)", runs, [("seconds", "#1a7f37")])]
    parts = [_HEAD.replace("%TITLE%", "History of the runs"),
             f"<h1>History of the runs <small>{len(runs):,} in {_e(state)}</small></h1>",
             '<section class="charts">', *charts, "</section>", "<h2>Runs, newest first</h2>"]
    parts += [_run_section(run) for run in reversed(runs)]
    return "\n".join(parts) + "\n</body></html>\n"


def _value(run: RunRecord, key: str) -> float:
    found: Any = run.summary
    for part in key.split("."):
        found = found.get(part) if isinstance(found, dict) else None
    return float(found) if isinstance(found, int | float) else 0.0


def _chart(title: str, runs: Sequence[RunRecord], lines: list[tuple[str, str]]) -> str:
    """A line chart in inline SVG, one point a run, oldest at the left."""
    width, height, pad = 460, 160, 30
    top = max([_value(run, key) for run in runs for key, _colour in lines] + [1.0])
    step = (width - 2 * pad) / max(len(runs) - 1, 1)
    paths = []
    for key, colour in lines:
        scale = (height - 2 * pad) / top
        points = " ".join(f"{pad + i * step:.1f},{height - pad - scale * _value(run, key):.1f}"
                          for i, run in enumerate(runs))
        paths.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                     f'points="{points}"><title>{_e(key)}</title></polyline>')
    legend = " · ".join(f'<span style="color:{colour}">{_e(key.split(".")[-1])}</span>'
                        for key, colour in lines)
    return (f'<figure class="chart"><figcaption>{_e(title)} <small>{legend} · top '
            f"{top:,.0f}</small></figcaption>"
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'role="img" aria-label="{_e(title)}"><line x1="{pad}" y1="{height - pad}" '
            f'x2="{width - pad}" y2="{height - pad}" stroke="#d1d9e0"/>{"".join(paths)}'
            "</svg></figure>")


def _run_section(run: RunRecord) -> str:
    summary = run.summary
    facts = ", ".join(f"{label} {_n(summary.get(key))}" for key, label in (
        ("fetched", "fetched"), ("listed", "listed"), ("errors", "errors"))
        if isinstance(summary.get(key), int))
    status = ("published" if summary.get("published") else
              f"not published: {summary['refused']}" if summary.get("refused") else "")
    lists = "".join(_urls(kind, run.urls.get(kind, []), summary.get(kind))
                    for kind in ("added", "removed", "changed", "restamped"))
    reports = ", ".join(f'<a href="{_e(path)}">{_e(path.rsplit("/", 1)[-1])}</a>'
                        for path in summary.get("reports") or [])
    return (f'<section class="run" id="run-{run.id}"><h3>Run {run.id} · '
            f'{_e(run.started.replace("T", " "))} · {_e(summary.get("command"))} · '
            f'{summary.get("seconds", 0):,.1f} s</h3><p>{_e(facts)}'
            + (f" · {_e(status)}" if status else "")
            + (f" · reports: {reports}" if reports else "") + f"</p>{lists}</section>")


def _urls(kind: str, urls: list[str], count: object) -> str:
    if not urls:
        return ""
    shown = "".join(f'<li><a href="{_e(url)}">{_e(url)}</a></li>' for url in urls[:URLS_SHOWN])
    total = count if isinstance(count, int) else len(urls)
    more = (f'<li class="more">and {total - URLS_SHOWN:,} more (history --report '
            "history.json holds them)</li>" if total > URLS_SHOWN else "")
    return f'<details open><summary>{kind} {total:,}</summary><ul>{shown}{more}</ul></details>'


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


_HEAD = OPENING + """h1 { font-size: 1.35rem; }
h1 small, figcaption small { color: #59636e; font-weight: normal; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5rem; }
figure.chart { margin: 0; } figcaption { font-weight: 600; margin-bottom: .3rem; }
section.run { border-top: 1px solid #d1d9e0; } h3 { font-size: 1rem; margin-bottom: .2rem; }
a { color: #0969da; word-break: break-all; } ul { margin: .2rem 0; }
summary { cursor: pointer; font-weight: 600; } li.more { color: #59636e; }
</style></head><body>"""
