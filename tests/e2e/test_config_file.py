"""--config FILE: options in TOML, used from a subprocess the way cron runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, read_sitemaps, report_rows, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)


def _cron(config: Path, *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """What cron does: a bare environment, another working directory, no terminal."""
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "NO_PROXY": "*", "LANG": "C",
            "PYTHONPATH": str(REPO), **env}
    return subprocess.run([sys.executable, "-m", "crawler", "crawl", "--config", str(config)],
                          cwd=cwd, env=bare, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=90)


def test_a_config_file_drives_a_crawl_from_cron(tmp_path: Path) -> None:
    jobs, home = tmp_path / "jobs", tmp_path / "home"
    jobs.mkdir()
    home.mkdir()
    with RunningServer("shop", required={"authorization": "Basic "}) as site:
        config = jobs / "shop.toml"
        config.write_text(
            f'start-url = "{site.url}/"\n'
            'out = "public"            # relative to this file, not to cron\'s directory\n'
            'report = "report.json"\n'
            'state = "state.db"\n'
            'ignore-robots = true\n'
            'gzip = false\n'
            'quiet = true\n'
            'max-pages = 50\n'
            'exclude = ["/cart/*", "re:^/search"]\n'
            'no-list = "/tag/*"         # one string is a list of one\n'
            'strip-param = ["utm_*", "gclid"]\n'
            'auth-env = "SHOP_LOGIN"\n')
        run = _cron(config, cwd=home, env={"SHOP_LOGIN": "cron:night-SECRET"})
        assert run.returncode == 0, run.stderr
        assert run.stdout == run.stderr == ""  # quiet = true
        out = jobs / "public"
        assert sorted(p.name for p in out.iterdir()) == [
            "robots.txt", "sitemap-00001.xml", "sitemap.html", "sitemap_index.xml"]
        assert list(home.iterdir()) == []
        listed = [loc.removeprefix(site.url) for loc in read_sitemaps(out, site.url + "/").locs]
        assert "/cart/" not in listed and "/tag/red.html" not in listed
        assert "/products/b.html?id=7" in listed
        rows = report_rows(jobs / "report.json", site.url)
        assert rows["/search?q=shoes"]["reason"] == "excluded"
        assert rows["/tag/red.html"]["reason"] == "no-list"
        assert (jobs / "state.db").exists()
        assert b"SECRET" not in (jobs / "report.json").read_bytes()


def test_the_command_line_wins_over_the_file(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    with RunningServer("shop") as site:
        config.write_text(f'start-url = "{site.url}/tag/red.html"\nout = "from-file"\n'
                          'max-pages = 1\nignore-robots = true\ngzip = true\n')
        run = run_cli("crawl", site.url + "/", "--config", str(config), "--out",
                      str(tmp_path / "from-cli"), "--max-pages", "3", "--no-gzip")
        assert run.code == 0, run.stderr
        assert not (tmp_path / "from-file").exists()
        read_sitemaps(tmp_path / "from-cli", site.url + "/")
        # robots.txt is read for the published copy only (ignore-robots), then pages
        pages = [path for path in site.paths() if path != "/robots.txt"]
        assert len(pages) == 3  # --max-pages 3, not the file's 1
        assert (tmp_path / "from-cli" / "sitemap-00001.xml").exists()
        assert pages[0] == "/"  # START_URL from the command line, not the file


@pytest.mark.parametrize(("text", "words"), [
    ("max-page = 5\n", "unknown key 'max-page' (did you mean 'max-pages'?)"),
    ("max-pages = \"5\"\n", "max-pages must be an integer (got a string)"),
    ("gzip = 1\n", "gzip must be true or false (got an integer)"),
    ("exclude = [1]\n", "exclude must be a string or a list of strings"),
    ("lastmod = \"sometimes\"\n", "lastmod must be one of auto, header, none"),
    ("auth = 12345678\n", "auth must be a string (got an integer)"),
    ("[crawl]\nout = 1\n", "unknown key 'crawl'"),
    ("out = [\n", "not valid TOML"),
])
def test_a_bad_file_exits_2_naming_the_key_and_the_file(
        tmp_path: Path, text: str, words: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "o"),
                  "--config", str(config))
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1
    assert f"--config {config}: " in run.stderr and words in run.stderr
    assert "12345678" not in run.stderr


def test_a_missing_file_exits_2(tmp_path: Path) -> None:
    run = run_cli("crawl", "--config", str(tmp_path / "none.toml"))
    assert run.code == 2 and "no such file" in run.stderr
