"""--search-console: each run hands its sitemap index to a local fake of Google's token
endpoint and Search Console API (tests/search_console_fake.py), over real sockets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from search_console_fake import RunningSearchConsole
from siteserver import RunningServer


def _key_file(tmp_path: Path, key: dict[str, str]) -> Path:
    path = tmp_path / "key.json"
    path.write_text(json.dumps(key))
    return path


def _secret_parts(key: dict[str, str]) -> list[str]:
    lines = [line for line in key["private_key"].splitlines() if "PRIVATE KEY" not in line]
    return [key["private_key_id"], *lines]


def _everything_written(*places: Path) -> str:
    text = ""
    for place in places:
        for path in [place] if place.is_file() else sorted(place.rglob("*")):
            if path.is_file():
                text += path.read_bytes().decode("latin-1")
    return text


def test_each_run_submits_the_index_once_to_the_property_that_owns_it(tmp_path: Path) -> None:
    out, state, report = tmp_path / "out", tmp_path / "state.db", tmp_path / "r.json"
    with RunningServer("sections") as site:
        base = site.url + "/"
        sites = [{"siteUrl": "sc-domain:example.com", "permissionLevel": "siteOwner"},
                 {"siteUrl": "http://127.0.0.1:1/", "permissionLevel": "siteOwner"},
                 {"siteUrl": base, "permissionLevel": "siteFullUser"},
                 {"siteUrl": base + "blog/", "permissionLevel": "siteOwner"}]
        with RunningSearchConsole(sites) as fake:
            key = fake.key()
            site.overlay = out  # the index is served where the sitemaps say
            runs = [run_cli("crawl", base, "--out", str(out), "--state", str(state),
                            "--report", str(report), "--search-console",
                            str(_key_file(tmp_path, key)),
                            "--search-console-endpoint", fake.root + "/webmasters/v3/",
                            "--debug") for _ in range(2)]
    for run in runs:
        assert run.code == 0, run.stderr
        assert f"Search Console: submitted {base}sitemap_index.xml to {base}" in run.stderr
    assert fake.submitted == [(base, base + "sitemap_index.xml")] * 2
    assert not fake.refusals and len(fake.tokens) == 2
    # what went where: the assertion to the token endpoint, the token to the API only
    assert [(method, path.split("?")[0]) for method, path, *_ in fake.calls] == [
        ("POST", "/token"), ("GET", "/webmasters/v3/sites"),
        ("PUT", "/webmasters/v3/sites/" + base.replace(":", "%3A").replace("/", "%2F")
         + "/sitemaps/" + (base + "sitemap_index.xml").replace(":", "%3A").replace("/", "%2F")),
    ] * 2
    token_request = fake.calls[0][3].decode()
    assert "assertion=" in token_request and "BEGIN" not in token_request
    written = "".join(run.stdout + run.stderr for run in runs) + _everything_written(
        out, state, report)
    for secret in [*_secret_parts(key), *fake.tokens]:
        assert secret not in written
    assert not any(hit.headers.get("authorization") for hit in site.log)


def test_the_key_from_the_environment_and_a_domain_property(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("sections") as site, RunningSearchConsole([{"siteUrl": "sc-domain:0.0.1",
                                "permissionLevel": "siteOwner"}]) as fake:
        site.overlay = out
        run = run_cli("crawl", site.url + "/", "--out", str(out),
                      "--search-console-env", "SC_KEY",
                      "--search-console-endpoint", fake.root + "/webmasters/v3",
                      env_extra={"SC_KEY": json.dumps(fake.key())})
    assert run.code == 0, run.stderr
    assert fake.submitted == [("sc-domain:0.0.1", site.url + "/sitemap_index.xml")]


@pytest.mark.parametrize("fail_on_submit", [False, True])
def test_an_index_not_served_at_its_url_is_not_submitted(tmp_path: Path,
                                                         fail_on_submit: bool) -> None:
    out = tmp_path / "out"
    with RunningServer("sections") as site, RunningSearchConsole([{"siteUrl": site.url + "/",
                                "permissionLevel": "siteOwner"}]) as fake:
        run = run_cli("crawl", site.url + "/", "--out", str(out), "--search-console",
                      str(_key_file(tmp_path, fake.key())), "--search-console-endpoint",
                      fake.root + "/webmasters/v3/",
                      *(["--fail-on-submit"] if fail_on_submit else []))
    assert run.code == (9 if fail_on_submit else 0), run.stderr
    assert (out / "sitemap_index.xml").is_file()  # published all the same
    assert "not submitted: the index " in run.stderr and "answered HTTP 404" in run.stderr
    assert fake.calls == []  # not even a token asked for


def test_no_access_to_the_property_and_a_refused_key_say_why(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with RunningServer("sections") as site:
        site.overlay = out
        with RunningSearchConsole([{"siteUrl": site.url + "/",
                                    "permissionLevel": "siteRestrictedUser"}]) as fake:
            args = ("crawl", site.url + "/", "--out", str(out), "--search-console-endpoint",
                    fake.root + "/webmasters/v3/", "--allow-shrink", "--search-console")
            restricted = run_cli(*args, str(_key_file(tmp_path, fake.key())))
            other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            forged = {**fake.key(), "private_key": other.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption()).decode()}
            refused = run_cli(*args, str(_key_file(tmp_path, forged)))
    assert restricted.code == 0, restricted.stderr
    assert (f"no access to submit to {site.url}/: crawler@sitemaps-project.iam."
            "gserviceaccount.com is siteRestrictedUser") in restricted.stderr
    assert refused.code == 0
    assert "not submitted: the token endpoint refused the key" in refused.stderr
    assert fake.refusals == ["bad signature"] and fake.submitted == []


@pytest.mark.parametrize(("content", "why"), [
    ("{not json", "not JSON"),
    ('{"type": "authorized_user"}', "not a service account key"),
    ('{"type": "service_account", "client_email": "a@b"}', "the key has no private_key"),
    ('{"type": "service_account", "client_email": "a@b", "private_key": "-----BEGIN '
     'PRIVATE KEY-----\\nAAAAsecretpartsecretpart\\n-----END PRIVATE KEY-----\\n", '
     '"token_uri": "https://oauth2.googleapis.com/token"}', "private key cannot be read"),
])
def test_a_key_that_cannot_work_is_refused_before_any_request(
        tmp_path: Path, content: str, why: str) -> None:
    key = tmp_path / "key.json"
    key.write_text(content)
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "out"),
                  "--search-console", str(key))
    assert run.code == 2 and why in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert "secretpart" not in run.stderr


def test_fail_on_submit_without_a_key_is_a_usage_error(tmp_path: Path) -> None:
    run = run_cli("crawl", "http://127.0.0.1:9/", "--out", str(tmp_path), "--fail-on-submit")
    assert run.code == 2 and "--fail-on-submit needs --search-console" in run.stderr
