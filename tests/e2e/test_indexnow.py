"""--indexnow against a local endpoint that records what it is sent: a re-run after
changes sends exactly the changed URLs, 429 and 5xx are retried, the key is never
shown."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import FIXTURES_DIR, run_cli
from siteserver import SHUTDOWN_POLL, RunningServer

pytestmark = pytest.mark.timeout(120)
KEY = "a3f9c2e8d1b7461f"


class Endpoint:
    """An IndexNow endpoint on 127.0.0.1: records each POST; answers ``statuses`` in
    turn, then 202."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.posts: list[dict] = []
        self.statuses = list(statuses or [])
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                endpoint.posts.append({"type": self.headers.get("Content-Type"),
                                       **json.loads(body)})
                status = endpoint.statuses.pop(0) if endpoint.statuses else 202
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/indexnow"
        threading.Thread(target=self.server.serve_forever, args=(SHUTDOWN_POLL,),
                         daemon=True).start()

    def urls(self) -> list[str]:
        return [url for post in self.posts for url in post["urlList"]]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    found = Endpoint()
    yield found
    found.server.shutdown()


def site_copy(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    shutil.copytree(FIXTURES_DIR / "seeds", root)
    (root / f"{KEY}.txt").write_text(KEY + "\n")
    return root


def crawl(url: str, tmp_path: Path, endpoint: Endpoint, *extra: str) -> object:
    return run_cli("crawl", url + "/", "--out", str(tmp_path / "out"),
                   "--state", str(tmp_path / "state.db"), "--indexnow-env", "KEY_VAR",
                   "--indexnow-endpoint", endpoint.url, *extra, env_extra={"KEY_VAR": KEY})


def test_a_rerun_sends_exactly_what_was_added_changed_and_removed(
        tmp_path: Path, endpoint: Endpoint) -> None:
    root = site_copy(tmp_path)
    modified = {"/a.html": {"headers": {"Last-Modified": "Mon, 02 Nov 2026 10:00:00 GMT"}}}
    with RunningServer(root, modified) as site:
        u = site.url
        first = crawl(u, tmp_path, endpoint)
        assert first.code == 0, first.stderr
        assert "IndexNow: first run, nothing sent" in first.stderr
        assert endpoint.posts == []
        (root / "index.html").write_text((root / "index.html").read_text().replace(
            '<a href="a.html">a</a>', '<a href="a.html">a</a> <a href="new.html">new</a>'))
        (root / "new.html").write_text("<!doctype html><title>New</title><a href='/'>home</a>")
        modified["/a.html"]["headers"]["Last-Modified"] = "Tue, 24 Nov 2026 10:00:00 GMT"
        second = crawl(u, tmp_path, endpoint)
        assert second.code == 0, second.stderr
        assert sorted(endpoint.urls()) == [u + "/a.html", u + "/new.html"]
        assert "IndexNow: 2 URL(s) sent to 127.0.0.1" in second.stderr
        assert "(1 added, 1 changed, 0 removed)" in second.stderr
        post = endpoint.posts[0]
        assert (post["host"], post["key"], post["type"]) == (
            "127.0.0.1", KEY, "application/json; charset=utf-8")
        again = crawl(u, tmp_path, endpoint)  # nothing changed
        assert again.code == 0, again.stderr
        assert "IndexNow: nothing changed, nothing sent" in again.stderr
        assert len(endpoint.posts) == 1
        (root / "a.html").unlink()
        third = crawl(u, tmp_path, endpoint)
        assert third.code == 0, third.stderr
        assert endpoint.posts[-1]["urlList"] == [u + "/a.html"]  # removed: it answers 404
    for run in (first, second, again, third):
        assert KEY not in run.stdout + run.stderr
    assert KEY.encode() not in (tmp_path / "state.db").read_bytes()


def test_first_run_with_all_and_a_dry_run(tmp_path: Path, endpoint: Endpoint) -> None:
    with RunningServer(site_copy(tmp_path)) as site:
        u = site.url
        dry = crawl(u, tmp_path, endpoint, "--indexnow-all", "--dry-run")
        assert dry.code == 0, dry.stderr
        assert endpoint.posts == []
        assert dry.stdout.splitlines() == [f"added\t{u}/", f"added\t{u}/a.html"]
        assert "IndexNow dry run: 2 URL(s) would be sent" in dry.stderr
        shutil.rmtree(tmp_path / "out")
        (tmp_path / "state.db").unlink()
        sent = crawl(u, tmp_path, endpoint, "--indexnow-all")
    assert sent.code == 0, sent.stderr
    assert sorted(endpoint.urls()) == [u + "/", u + "/a.html"]


@pytest.mark.slow(7)
def test_429_and_5xx_are_retried_and_a_refusal_is_exit_7(tmp_path: Path) -> None:
    flaky, refusing = Endpoint([429, 503]), Endpoint([403])
    with RunningServer(site_copy(tmp_path)) as site:
        u = site.url
        run = crawl(u, tmp_path, flaky, "--indexnow-all")
        assert run.code == 0, run.stderr
        assert len(flaky.posts) == 3 and flaky.urls()[-2:] == [u + "/", u + "/a.html"]
        shutil.rmtree(tmp_path / "out")
        (tmp_path / "state.db").unlink()
        refused = crawl(u, tmp_path, refusing, "--indexnow-all")
    assert refused.code == 7
    assert "HTTP 403" in refused.stderr and KEY not in refused.stderr
    assert (tmp_path / "out" / "sitemap_index.xml").exists()  # published all the same


def test_no_key_file_sends_nothing(tmp_path: Path, endpoint: Endpoint) -> None:
    root = site_copy(tmp_path)
    (root / f"{KEY}.txt").unlink()
    with RunningServer(root) as site:
        run = crawl(site.url, tmp_path, endpoint, "--indexnow-all")
    assert run.code == 7
    assert endpoint.posts == []
    assert "the key file answered HTTP 404" in run.stderr and KEY not in run.stderr


@pytest.mark.parametrize(("args", "says"), [
    (("--indexnow", "short"), "must be 8 to 128 letters"),
    (("--indexnow", KEY, "--state", ""), "needs --state"),
    (("--indexnow-all",), "need --indexnow KEY"),
    (("--indexnow-env", "NO_SUCH_VARIABLE_SET"), "the variable is not set"),
])
def test_bad_indexnow_options_are_one_line_and_exit_2(tmp_path: Path, args: tuple,
                                                      says: str) -> None:
    with RunningServer("seeds") as site:
        state = () if "--state" in args or "--indexnow-all" in args else (
            "--state", str(tmp_path / "s.db"))
        argv = [a for a in args if a != "--state" and a != ""]
        run = run_cli("crawl", site.url + "/", "--out", str(tmp_path / "out"), *state, *argv)
        assert site.log == []
    assert run.code == 2, run.stderr
    assert says in run.stderr and KEY not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
