"""Secrets given on the command line never come back on screen (crawler.cli.invocation).

The options that carry a secret are one list; these tests hold it to the
commands as they are, so an option added later cannot be forgotten: any with an
``-env`` twin (the way to keep a secret out of ``ps``) or whose help says it is
"visible in ps" must be on it. Then a Ctrl-C at the very start, before the
crawler is imported, prints a resume hint with every secret hidden.
"""

from __future__ import annotations

import subprocess
import sys

import click

from crawler.cli.commands import cli
from crawler.cli.invocation import SECRET_OPTIONS, how_to_resume, redact_arguments
from crawler.core.credentials import REDACTED


def _options() -> dict[str, click.Option]:
    found: dict[str, click.Option] = {}
    for command in cli.commands.values():
        for param in command.params:
            if isinstance(param, click.Option):
                for name in param.opts:
                    found[name] = param
    return found


def test_every_secret_bearing_option_is_on_the_one_list() -> None:
    options = _options()
    secret = {name for name in options
              if name.startswith("--") and f"{name}-env" in options}
    secret |= {name for name, option in options.items()
               if "visible in ps" in (option.help or "")}
    secret |= {"--redis"}  # a Redis URL may hold a password
    # a file's path is no secret (--search-console KEY.json: the key is in the file)
    secret -= {name for name in secret if isinstance(options[name].type, click.Path)}
    assert secret, "no secret options found: the test is not reading the commands"
    assert secret <= SECRET_OPTIONS, sorted(secret - SECRET_OPTIONS)
    assert set(options) >= SECRET_OPTIONS, sorted(SECRET_OPTIONS - set(options))
    # and every option on the list is hidden, in both spellings
    for name in sorted(SECRET_OPTIONS):
        shown = redact_arguments(["crawl", "u", name, "s3cret-value", f"{name}=s3cret-value"])
        assert "s3cret-value" not in " ".join(shown), name


def test_the_resume_hint_hides_the_indexnow_key() -> None:
    hint = how_to_resume(["crawl", "https://example.com/", "--out", "o", "--state", "s.db",
                          "--indexnow", "key-1234567890abcdef"])
    assert "key-1234567890abcdef" not in hint and REDACTED in hint


def test_ctrl_c_at_the_very_start_shows_no_key(tmp_path: object) -> None:
    """The launcher's own handler (before anything heavy is imported) prints the hint."""
    from conftest import REPO, ctrl_c_as_in_a_terminal, until_sigterm_is_caught

    key = "abcdef0123456789secret"
    process = subprocess.Popen(
        [sys.executable, "-m", "crawler", "crawl", "http://127.0.0.1:9/", "--out",
         f"{tmp_path}/out", "--state", f"{tmp_path}/s.db", "--indexnow", key],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=ctrl_c_as_in_a_terminal)
    until_sigterm_is_caught(process.pid)  # the launcher's handlers are in (both at once)
    process.send_signal(2)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert key not in err + out
    assert "resume with:" in err and REDACTED in err
