"""``--links FILE.csv|FILE.parquet``: the link graph, one row per link, with the
status its target answered.

The rows come back from the crawl's spool in the order found, and each target's
status is looked up as it is written: in-scope targets in the records (on disk
past a threshold; a cache keeps navigation, which repeats on every page, from
asking twice), other origins in ``--check-external``'s answers. Nothing grows
with the graph: Parquet is written in row groups of :data:`BATCH` rows.
"""

from __future__ import annotations

import csv
import functools
import importlib.util
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from crawler.cli.failure import EXIT_OUTPUT, EXIT_USAGE, Failure
from crawler.cli.report_files import atomic_text
from crawler.engine.result import CrawlResult

COLUMNS = ("source", "target", "anchor", "rel", "in_scope", "status", "error")
BATCH = 50_000
FORMATS = (".csv", ".parquet")
STATUSES_CACHED = 100_000


def check_links_path(path: str | None) -> None:
    """Before any request: a format we write, and for Parquet the library it needs."""
    if path is None:
        return
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise Failure(f"--links {path!r}: the file must end in .csv or .parquet",
                      EXIT_USAGE)
    if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
        raise Failure("--links FILE.parquet needs pyarrow: pip install "
                      "'sitemap-crawler[parquet]' (or write FILE.csv)", EXIT_USAGE)
    folder = Path(path).parent
    if not folder.is_dir():
        raise Failure(f"--links {path!r}: no directory {str(folder)!r}", EXIT_USAGE)


def write_link_graph(path: Path, result: CrawlResult) -> int:
    """Write the graph; returns the number of rows."""
    assert result.links is not None
    rows = _rows(result)
    if path.suffix.lower() == ".parquet":
        return _parquet(path, rows)
    from crawler.audit.report import spreadsheet_safe

    safe = spreadsheet_safe
    with atomic_text(path) as out:
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(COLUMNS)
        # each column as what it holds: strings a spreadsheet must not read as
        # formulas, the scope as yes/no, a status or an error where there is one
        writer.writerows((safe(source), safe(target), safe(anchor), safe(rel),
                          "yes" if inside else "no", "" if status is None else status,
                          "" if error is None else safe(error))
                         for source, target, anchor, rel, inside, status, error in rows)
    return result.links.count


def _rows(result: CrawlResult) -> Iterator[tuple[Any, ...]]:
    assert result.links is not None
    status = _status_lookup(result)
    for source, target, anchor, rel, inside in result.links.rows():
        answered, error = status(target, inside)
        yield source, target, anchor, rel, inside, answered, error


def _status_lookup(result: CrawlResult) -> Callable[[str, bool], tuple[int | None, str | None]]:
    external = {check.url: (check.status, check.error) for check in result.external or ()}

    @functools.lru_cache(maxsize=STATUSES_CACHED)
    def inside(url: str) -> tuple[int | None, str | None]:
        record = result.records.get(url)
        if record is None:
            return None, None  # not fetched: skipped (robots.txt, a filter, a limit)
        return record.status, record.error.value if record.error is not None else None

    def status(url: str, in_scope: bool) -> tuple[int | None, str | None]:
        return inside(url) if in_scope else external.get(url, (None, None))
    return status


def _parquet(path: Path, rows: Iterator[tuple[Any, ...]]) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("source", pa.string()), ("target", pa.string()),
                        ("anchor", pa.string()), ("rel", pa.string()),
                        ("in_scope", pa.bool_()), ("status", pa.int16()),
                        ("error", pa.string())])
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    count = 0
    try:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            batch: list[tuple[Any, ...]] = []
            for row in rows:
                batch.append(row)
                if len(batch) >= BATCH:
                    writer.write_table(_table(pa, schema, batch))
                    count += len(batch)
                    batch = []
            if batch or not count:
                writer.write_table(_table(pa, schema, batch))
                count += len(batch)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        raise Failure(f"cannot write {path}: {exc.strerror}", EXIT_OUTPUT) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return count


def _table(pa: Any, schema: Any, batch: list[tuple[Any, ...]]) -> Any:
    columns = list(zip(*batch, strict=True)) if batch else [()] * len(COLUMNS)
    return pa.Table.from_arrays([pa.array(column, type=field.type)
                                 for column, field in zip(columns, schema, strict=True)],
                                schema=schema)
