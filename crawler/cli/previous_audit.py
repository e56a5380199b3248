"""The audit a new one is compared with: ``--compare-with REPORT.json``, or the last
audit kept in ``--state``. A report that cannot be compared (another site, another
report version, not a report) is refused before the first request (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from crawler.audit.changes import Snapshot, from_report, loads
from crawler.audit.report import REPORT_VERSION
from crawler.cli.failure import EXIT_USAGE, Failure
from crawler.store.state_file import audit_snapshot

# report versions whose rows and findings a new audit compares with: 9 changed only
# totals (crawler.audit.report)
COMPARABLE = (8, REPORT_VERSION)


def read_report(path: Path, start_url: str) -> Snapshot:
    """The snapshot of an earlier JSON report of this same site and report version."""
    try:
        document: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise Failure(f"--compare-with {path} cannot be read ({exc.strerror})",
                      EXIT_USAGE) from None
    except ValueError:
        document = None
    if not isinstance(document, dict) or not {"version", "start_url", "urls"} <= set(document):
        raise Failure(f"--compare-with {path} is not a JSON report of an audit",
                      EXIT_USAGE)
    if document["version"] not in COMPARABLE:
        raise Failure(f"--compare-with {path} is a report of version {document['version']}; "
                      f"this version compares reports of versions {COMPARABLE[0]} to "
                      f"{REPORT_VERSION} (audit once more to have one)", EXIT_USAGE)
    if document["start_url"] != start_url:
        raise Failure(f"--compare-with {path} is an audit of {document['start_url']}, not of "
                      f"{start_url}", EXIT_USAGE)
    return from_report(document)


def kept_in_state(state_path: Path, start_url: str) -> Snapshot | None:
    """The last audit's snapshot in the state file, if it is of this site."""
    text = audit_snapshot(state_path)
    taken = loads(text) if text else None
    return taken if taken is not None and taken.start_url == start_url else None
