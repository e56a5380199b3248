"""What is already published in an output directory — read before replacing it.

Used to refuse a run that would shrink a good sitemap to a fraction of its
size (an outage answering 500s, a login wall): losing most of a site's URLs
from its sitemap is worse than keeping yesterday's.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

from sitemap_writer.index import INDEX_NAME

_LOC = re.compile(rb"<loc>\s*([^<]+?)\s*</loc>")


def published_url_count(out_dir: Path) -> int:
    """URLs listed by the shards the current index names; 0 if there is no readable index."""
    return sum(published_url_counts(out_dir).values())


def published_url_counts(out_dir: Path) -> dict[str, int]:
    """The same, per section (``""``: shards of an unsectioned sitemap), so that a
    section that lost most of its URLs is seen even when the others grew."""
    from sitemap_writer.writer import is_url_shard, shard_section

    try:
        index = (out_dir / INDEX_NAME).read_bytes()
    except OSError:
        return {}
    counts: dict[str, int] = {}
    for loc in _LOC.findall(index):
        name = loc.decode("utf-8", "replace").rsplit("/", 1)[-1]
        path = out_dir / name
        if "/" in name or not is_url_shard(name) or not path.is_file():
            continue
        try:
            data = path.read_bytes()
            if name.endswith(".gz"):
                data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
            continue
        section = shard_section(name)
        counts[section] = counts.get(section, 0) + data.count(b"<url>")
    return counts
