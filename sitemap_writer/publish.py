"""Putting files in place so that readers only ever see a whole, consistent set.

Files are written into a dot-named staging directory *inside* the output
directory (so ``os.replace`` is an atomic rename on one filesystem), fsynced,
made world-readable, then moved in: shards first, the index last, so a
search engine fetching the index mid-publish finds every shard it names.
Shards of the previous run that the new index no longer names are removed
only after that. A run that fails before publishing removes its staging
directory and leaves the previous files untouched. Files whose bytes did not
change are left alone, so their mtime (and HTTP caches) stay valid.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sitemap_writer.errors import OutputError

STAGING_PREFIX = ".sitemap-staging-"
# A section's name, as it appears in its shards' file names (``sitemap-NAME-00001.xml``):
# safe in a URL and a file name on every system, and never mistaken for a number.
SECTION_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
# the files a run writes and the next one prunes when it does not write them again
SHARD_FILE = re.compile(r"sitemap-((?P<section>[a-z][a-z0-9_-]{0,39})-)?\d{5}\.xml(\.gz)?"
                        r"|sitemap-news\.xml")
# the HTML view's pages (sitemap_writer.html_view): pruned like the shards they show
VIEW_FILE = re.compile(r"sitemap(-[a-z][a-z0-9_-]{0,39})?(-\d{5})?\.html")
FILE_MODE = 0o644


@dataclass(slots=True)
class Published:
    """Which files a publish replaced, kept as they were, or removed."""

    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def ensure_output_dir(out_dir: Path) -> None:
    """Create ``out_dir`` if needed and prove it writable, before any crawling."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"output {out_dir} exists and is not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out_dir)
        os.rmdir(probe)
    except OSError as exc:
        raise OutputError(f"output directory {out_dir} is not writable: {exc.strerror}") from None


@contextlib.contextmanager
def output_lock(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir`` for one run: overlapping cron runs must not interleave.

    An exclusive ``flock`` on the directory itself, so no lock file is left in
    what the web server publishes; the kernel drops it when the process dies,
    so a killed run never leaves it stuck. Under the lock, staging directories
    left by a killed run are removed.
    """
    ensure_output_dir(out_dir)
    try:
        fd = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise OutputError(f"cannot lock {out_dir}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputError(
                f"another sitemap-crawler run is writing into {out_dir}; "
                "wait for it to finish"
            ) from None
        for stale in out_dir.glob(STAGING_PREFIX + "*"):
            shutil.rmtree(stale, ignore_errors=True)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def staging(out_dir: Path) -> Iterator[Path]:
    """A fresh staging directory in ``out_dir``, removed again whatever happens."""
    ensure_output_dir(out_dir)
    path = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out_dir))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def publish(stage: Path, out_dir: Path, names: Sequence[str]) -> Published:
    """Move ``names`` from ``stage`` into ``out_dir`` in order; prune stale shards."""
    result = Published()
    try:
        for name in names:
            source, target = stage / name, out_dir / name
            if _same_bytes(source, target):
                result.unchanged.append(name)
                continue
            os.chmod(source, FILE_MODE)
            os.replace(source, target)
            result.changed.append(name)
        current = set(names)
        for path in sorted(out_dir.iterdir()):
            if (SHARD_FILE.fullmatch(path.name) or VIEW_FILE.fullmatch(path.name)) and (
                    path.name not in current):
                path.unlink()
                result.removed.append(path.name)
        _fsync_dir(out_dir)
    except OSError as exc:
        raise OutputError(f"could not publish into {out_dir}: {exc}") from None
    return result


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
