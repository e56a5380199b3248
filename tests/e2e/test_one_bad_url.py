"""One URL never ends a crawl (over a socket).

A URL whose server reads the request and hangs up without a word, while the
crawl's other connections sit idle in the pool, once ended the whole audit
with ``AssertionError('unreachable')`` and no report. Now it is that URL's error
row; and a fault nobody foresaw while fetching or reading one URL is that URL's
``internal-error`` row, the output written, the exit code 8 saying so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    links = "".join(f'<a href="/p{n}.html">p{n}</a>' for n in range(12))
    (root / "index.html").write_text(
        f"<!doctype html><title>Home</title>{links}<a href='/hangup.html'>h</a>"
        "<a href='/slow.html'>s</a>")
    for n in range(12):
        (root / f"p{n}.html").write_text(
            f"<!doctype html><title>P{n}</title><a href='/hangup.html?{n}'>h</a>")
    (root / "slow.html").write_text("<!doctype html><title>Slow</title>")
    return root


@pytest.mark.parametrize("command", ["audit", "crawl"])
def test_a_url_that_hangs_up_is_its_own_error_and_the_run_goes_on(
        tmp_path: Path, command: str) -> None:
    routes = {"/hangup.html": {"behaviour": "hangup"}, "/slow.html": {"delay": 3}}
    report = tmp_path / "report.json"
    with RunningServer(_site(tmp_path), routes=routes) as site:
        extra = ["--out", str(tmp_path / "out")] if command == "crawl" else [
            "--compare-sitemap", "off"]
        run = run_cli(command, site.url + "/", "--report", str(report), "--retries", "0",
                      "--timeout", "1.5", *extra, timeout=100)
    assert run.code == 0, run.stderr
    rows = {row["url"].removeprefix(site.url): row for row in
            json.loads(report.read_text())["urls"]}
    assert rows["/hangup.html"]["error"] == "network-error"
    assert rows["/slow.html"]["error"] == "timeout"
    assert all(rows[f"/p{n}.html"]["status"] == 200 for n in range(12))


@pytest.mark.parametrize("where", ["fetch", "read"])
def test_a_fault_nobody_foresaw_is_that_urls_row_and_exit_8(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """The real CLI in this process against a real server, with one fault put in: the
    client (or the page reader) raises something no code expects, for one URL."""
    from click.testing import CliRunner

    import crawler.cli.commands as cli_module
    from crawler.engine import page_fetcher
    from crawler.http import fetch

    if where == "fetch":
        original = fetch.Fetcher._attempt

        async def faulty(self: fetch.Fetcher, result: object, *args: object,
                         **kwargs: object) -> None:
            if result.url.endswith("/p3.html"):  # type: ignore[attr-defined]
                raise KeyError("nobody saw this coming")
            await original(self, result, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(fetch.Fetcher, "_attempt", faulty)
    else:
        original_read = page_fetcher.PageFetcher._read

        async def faulty_read(self: page_fetcher.PageFetcher, response: object, *args: object,
                              **kwargs: object) -> object:
            if response.url.endswith("/p3.html"):  # type: ignore[attr-defined]
                raise KeyError("nobody saw this coming")
            return await original_read(self, response, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(page_fetcher.PageFetcher, "_read", faulty_read)
    report, out = tmp_path / "report.json", tmp_path / "out"
    with RunningServer(_site(tmp_path), routes={"/hangup.html": {"behaviour": "hangup"}}
                       ) as site:
        result = CliRunner().invoke(cli_module.cli, [
            "crawl", site.url + "/", "--out", str(out), "--report", str(report),
            "--retries", "0", "--workers", "1", "--max-parse-seconds", "5"],
            standalone_mode=False)
    assert result.return_value == 8, result.output
    rows = {row["url"].removeprefix(site.url): row for row in
            json.loads(report.read_text())["urls"]}
    assert rows["/p3.html"]["error"] == "internal-error"
    assert "KeyError" in rows["/p3.html"]["detail"]
    assert rows["/p4.html"]["status"] == 200
    assert (out / "sitemap_index.xml").exists()
