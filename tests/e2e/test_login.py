"""--header, --cookie, --auth and --auth-env over a socket: sent to the origin only,
and never written anywhere."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, read_sitemaps, run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(120)

PASSWORD = "pw-Zq81-SECRET"
USER_PASSWORD = f"crawler:{PASSWORD}"
BASIC = "Basic " + base64.b64encode(USER_PASSWORD.encode()).decode()
HEADER_SECRET = "hdr-Xy27-SECRET"
COOKIE_SECRET = "ck-Pm44-SECRET"
LOGIN = {"authorization": BASIC, "x-api-key": HEADER_SECRET,
         "cookie": f"session={COOKIE_SECRET}"}


def _all_output(run_stdout: str, run_stderr: str, *roots: Path) -> list[tuple[str, bytes]]:
    found = [("stdout", run_stdout.encode()), ("stderr", run_stderr.encode())]
    for root in roots:
        for path in sorted(root.rglob("*")) if root.is_dir() else [root]:
            if path.is_file():
                found.append((str(path), path.read_bytes()))
    return found


def _leaks(outputs: list[tuple[str, bytes]]) -> list[str]:
    secrets = [PASSWORD, USER_PASSWORD, BASIC, BASIC.split()[1], HEADER_SECRET, COOKIE_SECRET,
               "SECRET"]
    return [f"{name} holds {secret!r}" for name, data in outputs for secret in secrets
            if secret.encode() in data]


@pytest.mark.slow(6)
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_login_wall_is_crawled_with_credentials_and_no_secret_is_written(
        tmp_path: Path, transport: str, workers: str) -> None:
    """With two workers too: each sends the credentials, and the cookie the site
    sets on one worker's page comes back from the other's."""
    out, report, state = tmp_path / "out", tmp_path / "report.json", tmp_path / "state.db"
    with RunningServer("staging", required=LOGIN) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--report", str(report),
                      "--state", str(state), "-v", "--debug", "--workers", workers,
                      "--header", f"X-Api-Key: {HEADER_SECRET}",
                      "--cookie", f"session={COOKIE_SECRET}", "--auth-env", "STAGING_LOGIN",
                      env_extra={"STAGING_LOGIN": USER_PASSWORD})
        assert run.code == 0, run.stderr
        written = read_sitemaps(out, site.url + "/")
        assert written.locs == [site.url + "/", site.url + "/a.html", site.url + "/b.html"]
        assert all(hit.headers.get("authorization") == BASIC for hit in site.log)
        host = f"127.0.0.1:{site.port}"
        # only the origin was ever asked: not the host a redirect and a link lead to
        assert {hit.headers["host"] for hit in site.log} == {host}
        assert "/sink.html" not in site.paths()
        # the site's own cookie is kept beside ours, ours first
        later = [hit.headers["cookie"] for hit in site.log if hit.path == "/b.html"]
        assert later == [f"session={COOKIE_SECRET}; site=from-server"]
        # a second run, from the state (304s are not at stake: the state is only read)
        again = run_cli("crawl", site.url + "/", "--out", str(out), "--state", str(state),
                        "-v", "--auth", USER_PASSWORD, "--header", f"X-Api-Key: {HEADER_SECRET}",
                        "--cookie", f"session={COOKIE_SECRET}")
        assert again.code == 0, again.stderr
    assert _leaks(_all_output(run.stdout + again.stdout, run.stderr + again.stderr,
                              out, report, state)) == []


def test_every_secret_can_come_from_the_environment_and_stay_out_of_ps(
        tmp_path: Path) -> None:
    """--header-env and --cookie-env beside --auth-env: the command line, which any
    user of the machine reads in ps, holds no secret."""
    out, report = tmp_path / "out", tmp_path / "report.json"
    args = ["crawl", "--out", str(out), "--report", str(report), "-v",
            "--header-env", "API_KEY", "--cookie-env", "SESSION", "--auth-env", "LOGIN"]
    with RunningServer("staging", required=LOGIN) as site:
        run = run_cli(args[0], site.url + "/", *args[1:], env_extra={
            "API_KEY": f"X-Api-Key: {HEADER_SECRET}", "LOGIN": USER_PASSWORD,
            "SESSION": f"session={COOKIE_SECRET}; theme=dark"})
        assert run.code == 0, run.stderr
        assert read_sitemaps(out, site.url + "/").locs[0] == site.url + "/"
        first = site.log[1]  # after robots.txt
        assert first.headers["x-api-key"] == HEADER_SECRET
        assert first.headers["cookie"].startswith(f"session={COOKIE_SECRET}; theme=dark")
    assert not any("SECRET" in word for word in args)
    assert _leaks(_all_output(run.stdout, run.stderr, out, report)) == []


@pytest.mark.parametrize(("option", "value", "says"), [
    ("--header-env", None, "--header-env MISSING: that environment variable is not set"),
    ("--header-env", "no colon SECRET", "--header-env MISSING must read 'Name: value'"),
    ("--cookie-env", "a=b c SECRET", "--cookie-env MISSING a: the value may not hold"),
])
def test_a_bad_or_missing_environment_secret_is_one_line_without_its_value(
        tmp_path: Path, option: str, value: str | None, says: str) -> None:
    env = {"MISSING": value} if value is not None else {}
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "out"), option,
                  "MISSING", env_extra=env)
    assert run.code == 2 and says in run.stderr, run.stderr
    assert "SECRET" not in run.stderr and run.stderr.count("\n") == 1


def test_without_credentials_a_401_start_url_exits_3_naming_auth(tmp_path: Path) -> None:
    with RunningServer("staging", required=LOGIN) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"))
        assert run.code == 3, run.stderr
        assert run.stderr.count("\n") == 1
        assert "401" in run.stderr and "--auth" in run.stderr


def test_refused_credentials_exit_3_without_showing_them(tmp_path: Path) -> None:
    with RunningServer("staging", required=LOGIN) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"),
                      "--auth", "crawler:wrong-SECRET", "--debug")
        assert run.code == 3, run.stderr
        assert "credentials given were refused" in run.stderr
        assert "SECRET" not in run.stderr and "SECRET" not in run.stdout


@pytest.mark.parametrize("options", [
    ["--header", "Authorization Bearer tok-SECRET"],  # no colon: the classic slip
    ["--header", "X-Key: a\x01-SECRET"],
    ["--cookie", "session tok-SECRET"],
    ["--cookie", "session=a;b-SECRET"],
    ["--auth", "no-colon-SECRET"],
    ["--auth", "u:p-SECRET", "--header", "Authorization: Bearer x-SECRET"],
    ["--auth-env", "NOT_SET_ANYWHERE"],
])
def test_a_bad_credential_exits_2_without_quoting_it(tmp_path: Path, options: list[str]) -> None:
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "out"), *options)
    assert run.code == 2, run.stderr
    assert run.stderr.count("\n") == 1
    assert "SECRET" not in run.stderr


def test_config_repr_shows_no_secret() -> None:
    code = ("from crawler.config import CrawlConfig\n"
            "from crawler.core.credentials import build_credentials\n"
            "c = build_credentials(headers=['X-Key: hdr-SECRET'], cookies=['s=ck-SECRET'],"
            " auth='u:pw-SECRET')\n"
            "print(repr(CrawlConfig(start_url='http://h/', credentials=c)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, env=os.environ, check=True)
    assert "X-Key" in done.stdout and "Authorization" in done.stdout
    assert "SECRET" not in done.stdout


def test_an_audit_writes_no_secret_and_sends_none_to_a_sitemap_elsewhere(
        tmp_path: Path) -> None:
    """Every report format, and the live sitemap read from another origin (another port):
    the credentials go to the crawl's origin only."""
    reports = [tmp_path / f"audit.{kind}" for kind in ("json", "csv", "html")]
    with RunningServer("live-sitemap") as elsewhere, \
            RunningServer("staging", required=LOGIN) as site:
        run = run_cli("audit", site.url + "/", *(arg for path in reports
                                                  for arg in ("--report", str(path))),
                      "--compare-sitemap", elsewhere.url + "/sitemaps/pages.xml", "-v",
                      "--header", f"X-Api-Key: {HEADER_SECRET}",
                      "--cookie", f"session={COOKIE_SECRET}", "--auth-env", "STAGING_LOGIN",
                      env_extra={"STAGING_LOGIN": USER_PASSWORD})
        assert run.code == 0, run.stderr
    assert elsewhere.paths() == ["/sitemaps/pages.xml"]
    sent = elsewhere.log[0].headers
    assert not {"authorization", "x-api-key", "cookie"} & set(sent), sent
    assert all(path.exists() for path in reports)
    assert _leaks(_all_output(run.stdout, run.stderr, *reports)) == []
