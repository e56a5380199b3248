"""A crawl in bounded memory writes the same sitemaps as one that holds everything.

With the thresholds at 0 the crawl keeps every record in its temporary file,
every queued job past the first in its spill file and every URL it has seen
as a hash, from the first page on (the path a site of a million pages takes);
each site is crawled both ways over a socket and the outputs compared byte
for byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(180)


def _files(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out.iterdir()) if path.is_file()}


def _crawl(site: RunningServer, out: Path, tmp: Path, keep: str, *options: str) -> None:
    tmp.mkdir(exist_ok=True)
    limits = ("SITEMAP_CRAWLER_RECORDS_IN_MEMORY", "SITEMAP_CRAWLER_JOBS_IN_MEMORY",
              "SITEMAP_CRAWLER_URLS_KEPT_EXACTLY")
    run = run_cli("crawl", site.url + "/", "--out", str(out), *options,
                  env_extra={**dict.fromkeys(limits, keep), "TMPDIR": str(tmp)})
    assert run.code == 0, run.stderr
    # the temporary files were unlinked as soon as they were made
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize(("name", "options"), [
    ("i18n", ("--images",)),
    ("shop", ("--max-urls-per-sitemap", "3", "--strip-param", "utm_*")),
    ("many", ("--max-urls-per-sitemap", "7", "--no-gzip")),
    ("docs", ()),
])
def test_spilled_records_write_the_same_sitemaps(tmp_path: Path, name: str,
                                                 options: tuple[str, ...]) -> None:
    with RunningServer(name) as site:
        _crawl(site, tmp_path / "memory", tmp_path / "t1", "1000000", *options)
        _crawl(site, tmp_path / "disk", tmp_path / "t2", "0", *options)
        memory, disk = _files(tmp_path / "memory"), _files(tmp_path / "disk")
        assert disk == memory
        written = read_sitemaps(tmp_path / "disk", site.url + "/", extensions=True)
        assert written.urls


def test_spilled_records_with_state_and_a_304_recrawl(tmp_path: Path) -> None:
    with RunningServer("i18n", conditional=True) as site:
        for keep in ("1000000", "0"):
            state = tmp_path / f"state-{keep}.db"
            for run in ("first", "second"):
                _crawl(site, tmp_path / f"{keep}-{run}", tmp_path / f"t-{keep}-{run}", keep,
                       "--state", str(state))
        assert _files(tmp_path / "0-second") == _files(tmp_path / "1000000-second")
        assert _files(tmp_path / "0-first") == _files(tmp_path / "1000000-first")
