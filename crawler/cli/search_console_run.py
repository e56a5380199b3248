"""``--search-console``: the options checked before the crawl, the submission after
publishing, and the one line that says what was submitted or why not.

A failure to submit never fails the crawl: the sitemaps are published, and the
next run submits again. ``--fail-on-submit`` gives it an exit code of its own
(9) for a scheduler that must know.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cli import failure
from crawler.cli.failure import EXIT_SUBMIT, EXIT_USAGE, Failure

if TYPE_CHECKING:
    from crawler.http.address_rule import NetworkRule


@dataclass(slots=True)
class SearchConsolePlan:
    account: Any  # crawler.http.search_console.ServiceAccount
    endpoint: str
    fail_on_submit: bool


def search_console_plan(key_path: Path | None, key_env: str | None, endpoint: str,
                        fail_on_submit: bool) -> SearchConsolePlan | None:
    """The key read and checked before any request; None when not asked for."""
    if key_path is not None and key_env is not None:
        raise Failure("--search-console and --search-console-env: give the key one way",
                      EXIT_USAGE)
    if key_path is None and key_env is None:
        if fail_on_submit:
            raise Failure("--fail-on-submit needs --search-console KEY.json or "
                          "--search-console-env NAME", EXIT_USAGE)
        return None
    if key_env is not None:
        text = os.environ.get(key_env, "")
        where = f"--search-console-env {key_env}"
        if not text:
            raise Failure(f"{where}: the variable is not set", EXIT_USAGE)
    else:
        assert key_path is not None
        where = f"--search-console {key_path}"
        try:
            text = key_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise Failure(f"{where}: cannot be read ({getattr(exc, 'strerror', None) or exc})",
                          EXIT_USAGE) from None
    _keep_secret(text)
    if urllib.parse.urlsplit(endpoint).scheme not in ("http", "https"):
        raise Failure("--search-console-endpoint must be an http(s) URL", EXIT_USAGE)
    try:
        from crawler.http.search_console import BadKey, service_account
    except ImportError:
        raise Failure("--search-console needs google-auth: pip install "
                      "'sitemap-crawler[search-console]'", EXIT_USAGE) from None
    try:
        account = service_account(text)
    except BadKey as exc:
        raise Failure(f"{where}: {exc}", EXIT_USAGE) from None
    return SearchConsolePlan(account, endpoint, fail_on_submit)


def submit(plan: SearchConsolePlan, index_url: str, user_agent: str,
           echo: Callable[[str], None], rule: NetworkRule) -> int:
    """Submit the index; the exit code it asks for (0 unless --fail-on-submit)."""
    from crawler.http.search_console import NotSubmitted, submit_index

    try:
        done = submit_index(plan.account, index_url, plan.endpoint, user_agent, rule)
    except NotSubmitted as why:
        failure.warn(f"Search Console: {index_url} not submitted: {why}")
        return EXIT_SUBMIT if plan.fail_on_submit else 0
    finally:
        token = getattr(plan.account.credentials, "token", None)
        if token:
            failure.SECRETS.append(token)
    echo(f"Search Console: submitted {done.sitemap} to {done.property}")
    return 0


def _keep_secret(text: str) -> None:
    """No message shows the key: its private key, each line of it, and its id."""
    import json

    try:
        info = json.loads(text)
    except ValueError:
        return
    if not isinstance(info, dict):
        return
    for name in ("private_key", "private_key_id"):
        value = info.get(name)
        if isinstance(value, str) and value:
            failure.SECRETS.append(value)
            failure.SECRETS.extend(line for line in value.splitlines()
                                   if len(line) >= 16 and "PRIVATE KEY" not in line)
