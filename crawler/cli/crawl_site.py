"""The crawl phase, shared by ``crawl`` and ``audit``: the site's pages, then (when
asked) its live sitemap's orphans and its external links, run on the event loop
(``crawler.engine.coordinator``), its setup failures turned into exit codes."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from crawler.cli import failure
from crawler.cli.failure import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_START_URL,
    EXIT_UNEXPECTED,
    EXIT_USAGE,
    Failure,
)
from crawler.cli.progress import CrawlDisplay
from crawler.cli.signals import TermAsInterrupt, signals_held
from crawler.cli.wiring import live_reader
from crawler.config import CrawlConfig
from crawler.core.errors import ConfigError, StartUrlError, StorageError, WorkerError
from crawler.engine.coordinator import crawl
from crawler.engine.result import CrawlResult


def crawl_site(display: CrawlDisplay, config: CrawlConfig) -> CrawlResult:
    """What the crawl found; a worker given up on the way is said, and --links's graph
    written."""
    if config.links_path is not None:  # the link graph's writer: only for --links
        from crawler.cli.link_graph import check_links_path, write_link_graph

        check_links_path(config.links_path)
    result = _on_the_event_loop(display, config)
    if config.links_path is not None:
        write_link_graph(Path(config.links_path), result)
    for why in result.workers_lost:
        failure.warn(f"{why}: killed, and its pages went to the other workers")
    return result


def _late_results_ignored(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's error handler: silent about a thread's result that arrives for a
    future the interrupt already cancelled, and the default for anything else.

    Stopping a crawl cancels what waits on threads; the default executor's shutdown
    thread (DNS lookups run there) may still post ``set_result`` to its cancelled
    future, and asyncio printed that as a traceback after the one-line message,
    about once in 50 SIGTERMs with two workers."""
    if isinstance(context.get("exception"), asyncio.InvalidStateError):
        return
    loop.default_exception_handler(context)


def _on_the_event_loop(display: CrawlDisplay, config: CrawlConfig) -> CrawlResult:
    interrupt = TermAsInterrupt.active

    async def main() -> CrawlResult:
        asyncio.get_running_loop().set_exception_handler(_late_results_ignored)
        if interrupt is not None:
            interrupt.task = asyncio.current_task()
        return await crawl(config, on_record=display, live_sitemap=live_reader(config),
                           seed_sitemap=live_reader(config, config.from_sitemap))

    try:
        with display, contextlib.ExitStack() as stack:
            # asyncio's runner, as anyio.run would use: anyio's own machinery (20 ms
            # of imports) then loads while the first request travels (the coordinator).
            # Its event loop is made on entry, whole before a signal may stop it.
            with signals_held():
                runner = stack.enter_context(asyncio.Runner())
            return runner.run(main())
    except asyncio.CancelledError:
        if interrupt is not None and interrupt.fired:  # SIGTERM with Ctrl-C ignored
            raise KeyboardInterrupt from None
        raise
    except StartUrlError as exc:
        raise Failure(str(exc), EXIT_START_URL) from None
    except ConfigError as exc:  # e.g. a state file of another scope
        raise Failure(str(exc), EXIT_USAGE) from None
    except StorageError as exc:  # the state file's disk is full
        raise Failure(f"{exc}; previous output kept", EXIT_OUTPUT) from None
    except WorkerError as exc:  # a worker process was killed, or met a bug of ours
        raise Failure(f"{exc}; previous output kept", EXIT_UNEXPECTED) from None


def internal_errors(result: CrawlResult) -> int:
    """EXIT_OK, or EXIT_INTERNAL with one line when some URL met a fault of ours."""
    count = result.stats.internal_errors
    if not count:
        return EXIT_OK
    return failure.fail(f"{count:,} URL(s) met an internal error (rows internal-error: the "
                        "output is written without them; run with --debug for the "
                        "traceback, and please report it)", EXIT_INTERNAL)
