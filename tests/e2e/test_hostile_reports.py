"""What a hostile site writes into our reports (hostile items 10 and 11)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from conftest import run_cli
from siteserver import RunningServer

pytestmark = pytest.mark.timeout(90)
HTML = {"Content-Type": "text/html"}
FORMULAS = ["=HYPERLINK(\"http://evil.test/\",\"x\")", "+1+2", "-3", "@SUM(A1)",
            "\uff1dcmd()"]


def test_csv_cells_that_would_start_a_formula_are_written_as_text(tmp_path: Path) -> None:
    pages = {f"/p{i}.html": {"headers": HTML,
                             "body": f"<title>{title}</title><p>page {i}</p>"}
             for i, title in enumerate(FORMULAS)}
    links = "".join(f'<a href="{path}">{title}</a>' for path, title in
                    zip(pages, ["=1+1", "+x", "-y", "@z", "\tq"], strict=True))
    routes = {"/": {"headers": HTML, "body": f"<title>home</title>{links}"}, **pages}
    csv_report, json_report = tmp_path / "r.csv", tmp_path / "r.json"
    with RunningServer("hostile", routes) as site:
        run = run_cli("audit", site.url + "/", "--report", str(csv_report), "--report",
                      str(json_report), "--compare-sitemap", "off")
    assert run.code == 0, run.stderr
    with csv_report.open(newline="", encoding="utf-8") as handle:
        rows = {row["url"].removeprefix(site.url): row for row in csv.DictReader(handle)}
    dangerous = ("=", "+", "-", "@", "\t", "\r", "\uff1d")
    for row in rows.values():
        for column, cell in row.items():
            assert not cell.startswith(dangerous), (column, cell)
    for i, title in enumerate(FORMULAS):
        assert rows[f"/p{i}.html"]["title"] == "'" + title
    assert rows["/p0.html"]["anchor"] == "'=1+1"
    # the JSON report is not a spreadsheet: it keeps the text as the site wrote it
    document = json.loads(json_report.read_text())
    titles = {row["url"].removeprefix(site.url): row.get("title") for row in document["urls"]}
    assert titles["/p0.html"] == FORMULAS[0]


SESSION = "sess-Qw83-SECRET/x+y"
API_KEY = "key Vb72 SECRET"
USER_PASSWORD = "crawler:pw-Lm51-SECRET"


def test_secrets_the_site_echoes_back_are_never_listed_stored_or_shown(tmp_path: Path) -> None:
    """The session cookie in links (raw, percent-encoded either way, ;jsessionid=), the
    API key in a title and an anchor, the password in a canonical and a redirect."""
    import base64
    from urllib.parse import quote
    basic = "Basic " + base64.b64encode(USER_PASSWORD.encode()).decode()
    encoded = quote(SESSION, safe="")
    lower_hex = re.sub(r"%[0-9A-F]{2}", lambda match: match.group().lower(), encoded)
    links = [f"/a.html?sid={SESSION}", f"/b.html;jsessionid={encoded}",
             f"/c.html?sid={lower_hex}", f"/d.html?auth={quote(basic)}",
             f"/e.html?k={quote(API_KEY, safe='').replace('%20', '+')}", "/ok.html",
             "/go.html"]
    anchors = "".join(f'<a href="{link}">see {API_KEY}</a>' for link in links)
    routes = {
        "/": {"headers": HTML, "body": f"<title>Hello {API_KEY}</title>{anchors}"},
        "/ok.html": {"headers": HTML, "body": '<link rel="canonical" href="/ok.html">'
                     '<title>ok</title><a href="https://elsewhere.test/?p=pw-Lm51-SECRET">x</a>'},
        "/go.html": {"status": 302, "headers": {"Location": f"/z.html?sid={encoded}"}},
        "/canon.html": {"headers": HTML,
                        "body": f'<link rel="canonical" href="/ok.html?x={encoded}">'},
    }
    routes["/"]["body"] += '<a href="/canon.html">c</a>'
    out, state = tmp_path / "out", tmp_path / "state.db"
    reports = [tmp_path / name for name in ("r.json", "r.csv", "r.html")]
    with RunningServer("hostile", routes,
                       required={"cookie": f"session={quote(SESSION, safe='/+')}"}) as site:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--state", str(state), "-v",
                      *[arg for report in reports for arg in ("--report", str(report))],
                      "--cookie", f"session={quote(SESSION, safe='/+')}",
                      "--header", f"X-Api-Key: {API_KEY}", "--auth", USER_PASSWORD)
        requested = site.paths()
    assert run.code == 0, run.stderr
    assert not any(path.startswith(("/a.html", "/b.html", "/c.html", "/d.html", "/e.html",
                                    "/z.html")) for path in requested), requested
    assert "/ok.html" in requested and "/go.html" in requested
    forms = {SESSION, encoded, lower_hex, quote(SESSION, safe="/+"), API_KEY,
             quote(API_KEY), quote(API_KEY, safe="").replace("%20", "+"), "pw-Lm51-SECRET",
             basic, quote(basic), basic.split()[1]}
    outputs = [("stderr", run.stderr.encode()), ("stdout", run.stdout.encode())]
    outputs += [(str(path), path.read_bytes()) for path in [*reports, state]]
    outputs += [(str(path), path.read_bytes()) for path in out.iterdir()]
    import gzip
    outputs += [(str(path), gzip.decompress(path.read_bytes())) for path in out.glob("*.gz")]
    leaks = [(name, form) for name, data in outputs for form in forms if form.encode() in data]
    assert leaks == []
    rows = json.loads(reports[0].read_text())["urls"]
    secret_rows = [row for row in rows if row["reason"] == "secret-in-url"]
    assert len(secret_rows) >= 6 and all("***" in row["url"] for row in secret_rows)
    assert next(row for row in rows if row["url"] == site.url + "/")["title"] == "Hello ***"
