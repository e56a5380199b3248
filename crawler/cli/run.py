"""Running a command: the boundary between a run and the process.

Whatever a run raises ends here as one line and a documented exit code: a
:class:`Failure` its own, Ctrl-C (or SIGTERM) ``interrupted``, and anything
unforeseen ``unexpected error`` (its traceback only with --debug). Imported only
when a command runs (``crawler.cli.commands`` declares the commands and their
options, which ``--help`` and a usage error need without the crawler's imports).
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

import click

from crawler.cli import failure
from crawler.cli.failure import EXIT_INTERRUPTED, EXIT_UNEXPECTED, Failure
from crawler.cli.invocation import INVOCATION, how_to_resume
from crawler.cli.progress import CrawlDisplay
from crawler.cli.signals import TermAsInterrupt


class _Redacted(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return failure.redact(super().format(record))


def _show_unforeseen_errors() -> None:
    """--debug: the traceback of each URL's unforeseen error, on stderr, redacted."""
    handler = logging.StreamHandler()
    handler.setFormatter(_Redacted("sitemap-crawler: debug: %(message)s"))
    logger = logging.getLogger("sitemap_crawler")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def run_command(*, debug: bool, quiet: bool, verbose: bool, **options: Any) -> int:
    """``crawl`` or (``audit=True``) ``audit``, as click parsed it; the exit code."""
    if debug:
        _show_unforeseen_errors()
    display = CrawlDisplay(quiet=quiet, verbose=verbose,
                           concurrency=max(1, int(options.get("concurrency") or 1)),
                           max_pages=options.get("max_pages"))
    try:  # the process boundary: what the run raises becomes one line and an exit code
        return _command(display, options, quiet=quiet)
    except Failure as failed:
        return failure.fail(str(failed), failed.code)
    except KeyboardInterrupt:
        latest = display.latest
        done = (f"after {latest.stats.fetched} pages ({latest.stats.listed} listable)"
                if latest else "before the first page")
        return failure.fail(f"interrupted {done}; previous output left untouched; "
                            + _how_to_resume(options.get("state_path")), EXIT_INTERRUPTED)
    except Exception as exc:  # the last line of defence: one line, not a traceback
        if debug:
            click.echo(failure.redact(traceback.format_exc()), err=True, nl=False)
        return failure.fail(f"unexpected error: {exc!r} (run with --debug for details)",
                            EXIT_UNEXPECTED)


def _command(display: CrawlDisplay, options: dict[str, Any], *, quiet: bool) -> int:
    # The HTTP stack first, from here. Imported where the command's modules first
    # need it, eight imports deep, httpx's own tree (email, http.cookiejar) ran at
    # the edge of one of the 16 KB chunks CPython 3.11 keeps frames in, which it
    # maps when the stack enters one and unmaps as soon as the stack leaves it:
    # 1,700 mmap and munmap pairs, 15 ms of a run's CPU. From here: a few dozen.
    import crawler.http  # noqa: F401

    # imported before the crawl takes the signals over: a stop inside an import is the
    # launcher's (a KeyboardInterrupt raised in the exec() of a dataclass's methods
    # would end the process by SIGINT after our exit 130)
    if options.pop("audit", False):
        from crawler.cli.audit_command import audit_command as command
    else:
        from crawler.cli.crawl_command import crawl_command as command
    with TermAsInterrupt():
        return command(display, options, quiet=quiet)


def _how_to_resume(state_path: str | None) -> str:
    if state_path is None:
        return "--state FILE makes a crawl resumable"
    return how_to_resume(INVOCATION)
