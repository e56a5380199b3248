"""How the command ends: the exit codes it documents, and every message one line on
stderr with no secret in it.

====  ===========================================================
code  meaning
====  ===========================================================
0     sitemaps written
1     unexpected error (``--debug`` shows the traceback), or every
      ``--workers`` process lost
2     invalid START_URL, option or config file, paths that collide,
      a ``--resume`` of another command's or other limits' run
3     start URL unreachable, out of scope, disallowed, or no
      indexable page found (the previous output is kept)
4     output directory, report or state file not writable
5     the new sitemap would list under half the URLs of the one in
      --out (an outage or a login wall?); ``--allow-shrink`` overrides
6     ``audit --fail-on``: a named finding is present (reports written)
7     ``--indexnow``: published, but telling IndexNow failed
8     written, but some URL met a fault of ours (its internal-error row)
9     ``--fail-on-submit``: published, but the submission to Google
      Search Console failed
130   interrupted (SIGINT/SIGTERM); the previous output is kept
====  ===========================================================
"""

from __future__ import annotations

import click

from crawler.core.credentials import Credentials

EXIT_OK, EXIT_UNEXPECTED, EXIT_USAGE, EXIT_START_URL, EXIT_OUTPUT, EXIT_SHRINK = 0, 1, 2, 3, 4, 5
EXIT_FINDINGS = 6
EXIT_INDEXNOW = 7  # the sitemaps are published; telling IndexNow of the changes failed
# the sitemaps and reports are written, but some URL met a fault of ours nobody foresaw:
# its internal-error row says which (one bad URL never ends a run, but is not hidden)
EXIT_INTERNAL = 8
EXIT_SUBMIT = 9  # --fail-on-submit: published, but Search Console was not told
EXIT_INTERRUPTED = 130


class Failure(Exception):
    """A failure already phrased for the user, with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


# The credentials of this run, to hide them from every message printed (a string:
# one secret on its own, such as a Redis password or an IndexNow key).
SECRETS: list[Credentials | str] = []
REDACTED = "[redacted]"


def redact(text: str) -> str:
    for credentials in SECRETS:
        if isinstance(credentials, str):
            text = text.replace(credentials, REDACTED) if credentials else text
        else:
            text = credentials.redact(text)
    return text


def warn(message: str) -> None:
    """A line about the output a person must act on: shown even with --quiet."""
    click.echo(f"sitemap-crawler: warning: {redact(message)}", err=True)


def fail(message: str, code: int) -> int:
    click.echo(f"sitemap-crawler: error: {redact(message)}", err=True)
    return code
