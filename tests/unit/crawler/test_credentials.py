from __future__ import annotations

import base64

import pytest

from crawler.cli.invocation import redact_arguments
from crawler.core.credentials import REDACTED, build_credentials
from crawler.core.errors import ConfigError
from crawler.http.prebuilt import RequestFactory


def test_basic_auth_header_and_secrets() -> None:
    credentials = build_credentials(auth="anna:s3cret:with:colons")
    name, value = credentials.headers[0]
    assert name == "Authorization"
    assert base64.b64decode(value.removeprefix("Basic ")) == b"anna:s3cret:with:colons"
    assert "s3cret:with:colons" in credentials.secrets()
    text = f"boom: {value} and anna:s3cret:with:colons"
    assert "s3cret" not in credentials.redact(text)


def test_auth_env_reads_the_environment() -> None:
    credentials = build_credentials(auth_env="LOGIN", environ={"LOGIN": "u:p4ssw0rd"})
    assert credentials.sends_authorization
    with pytest.raises(ConfigError, match=r"LOGIN.*not set"):
        build_credentials(auth_env="LOGIN", environ={})


@pytest.mark.parametrize("header", ["Host: evil", "User-Agent: x", "Cookie: a=b",
                                    "Accept-Encoding: br"])
def test_headers_the_crawl_controls_are_refused(header: str) -> None:
    with pytest.raises(ConfigError, match=header.split(":")[0]):
        build_credentials(headers=[header])


def test_cookies_join_in_order() -> None:
    assert build_credentials(cookies=["a=1", " b = 2"]).cookie == "a=1; b=2"


def test_private_headers_go_to_the_origin_only() -> None:
    factory = RequestFactory("http://site.test:80", [(b"Host", b"site.test:80")],
                             private=[(b"Authorization", b"Basic eA==")])
    assert factory.get("http://site.test:80/a").headers.get("authorization") == "Basic eA=="
    assert factory.get("http://site.test:80").headers.get("authorization") == "Basic eA=="
    for elsewhere in ("http://site.test:8080/a", "http://site.test:800/a",
                      "https://site.test:80/a", "http://other.test/a"):
        assert "authorization" not in factory.get(elsewhere).headers, elsewhere
    # validators with a raw latin-1 byte take another path: the same rule holds there
    odd = (("If-None-Match", '"\u00e9"'),)
    assert "authorization" not in factory.get("http://site.test:8080/a", odd).headers
    assert factory.get("http://site.test:80/a", odd).headers["authorization"] == "Basic eA=="


@pytest.mark.parametrize(("argv", "shown"), [
    (["crawl", "u", "--auth", "a:b", "--out", "o"],
     ["crawl", "u", "--auth", REDACTED, "--out", "o"]),
    (["crawl", "--auth=a:b"], ["crawl", f"--auth={REDACTED}"]),
    (["--header", "K: v", "--cookie", "s=1"], ["--header", REDACTED, "--cookie", REDACTED]),
    (["--auth-env", "VAR"], ["--auth-env", "VAR"]),  # a name, not a secret
])
def test_resume_command_hides_secret_arguments(argv: list[str], shown: list[str]) -> None:
    assert redact_arguments(argv) == shown


def test_an_unexpected_error_and_its_traceback_never_show_a_secret(
        monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    from click.testing import CliRunner

    import crawler.cli.commands as cli_module
    import crawler.cli.crawl_site as run_module

    secret = "pw-Q9-SECRET"

    async def explode(config: object, **_kwargs: object) -> None:
        # a library's error that happens to quote a header value, and the password
        raise RuntimeError(f"bad header {config.credentials.headers[0][1]} for me:{secret}")

    monkeypatch.setattr(run_module, "crawl", explode)
    from crawler.cli import failure
    monkeypatch.setattr(failure, "SECRETS", [])
    result = CliRunner().invoke(cli_module.cli, [
        "crawl", "http://127.0.0.1:9/", "--out", str(tmp_path), "--auth", f"me:{secret}",
        "--debug"], standalone_mode=False)
    assert result.return_value == 1
    text = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert "Traceback" in text and "RuntimeError" in text
    assert secret not in text and "bWU6" not in text  # nor its base64 (me:...)


def test_a_late_thread_result_for_a_cancelled_future_is_not_printed() -> None:
    """Stopping a crawl cancels what waits on threads; asyncio used to print a thread's
    late ``set_result`` on such a future as a traceback after the one-line message."""
    import asyncio

    from crawler.cli.crawl_site import _late_results_ignored

    shown: list[dict[str, object]] = []

    class Loop:
        def default_exception_handler(self, context: dict[str, object]) -> None:
            shown.append(context)

    loop = Loop()
    _late_results_ignored(loop, {"message": "Exception in callback Future.set_result(None)",
                                 "exception": asyncio.InvalidStateError("invalid state")})
    assert shown == []
    other = {"message": "boom", "exception": RuntimeError("boom")}
    _late_results_ignored(loop, other)
    assert shown == [other]
