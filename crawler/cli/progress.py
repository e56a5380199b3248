"""What the user sees while a crawl runs: rich progress, ``-v`` request lines, the summary.

All of it goes to stderr, so stdout stays clean for cron and pipes; the
live display appears only when stderr is a terminal, and rich is imported only
then (25 ms of every start under cron or in a pipe): elsewhere the lines are
written as they are, by :class:`PlainConsole`.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.live import Live

from crawler.core.errors import ErrorKind
from crawler.core.records import PageRecord
from crawler.engine.result import CrawlResult

REFRESH_SECONDS = 0.1


class TextConsole(Protocol):
    """What the display needs of a console: rich's, or :class:`PlainConsole`."""

    is_terminal: bool

    def print(self, *objects: Any, markup: bool | None = None) -> None: ...


class PlainConsole:
    """Lines to stderr as they are, for a stderr that is not a terminal. Control
    characters a page or a server put into a message are shown escaped, never
    sent to whatever reads the log."""

    is_terminal = False

    def print(self, *objects: Any, markup: bool | None = None) -> None:
        text = " ".join(str(item) for item in objects)
        sys.stderr.write(text.translate(_CONTROLS) + "\n")
        sys.stderr.flush()


_CONTROLS = {code: f"\\x{code:02x}" for code in [*range(32), 127] if code not in (9, 10)}


def _console(quiet: bool) -> TextConsole:
    if quiet or not sys.stderr.isatty():
        return PlainConsole()
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


class CrawlDisplay:
    """The ``on_record`` callback of :func:`crawler.crawl`, plus its screen."""

    def __init__(self, *, quiet: bool, verbose: bool, concurrency: int = 1,
                 max_pages: int | None = None, console: TextConsole | None = None) -> None:
        self.concurrency = concurrency
        self.max_pages = max_pages
        self.console = console or _console(quiet)
        self.verbose = verbose and not quiet
        self.quiet = quiet
        self.live_enabled = not quiet and self.console.is_terminal and sys.stderr.isatty()
        self._live: Live | None = None
        self._last_draw = 0.0
        self.latest: CrawlResult | None = None

    def __enter__(self) -> CrawlDisplay:
        if self.live_enabled:
            from rich.live import Live
            from rich.text import Text

            self._live = Live(Text("starting…"), console=self.console,  # type: ignore[arg-type]
                              transient=True, auto_refresh=False)
            self._live.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.__exit__(exc_type, exc, tb)
            self._live = None

    def __call__(self, record: PageRecord, result: CrawlResult) -> None:
        self.latest = result
        if record.error is ErrorKind.INTERNAL and not self.quiet:  # a bug of ours: say where
            self.console.print(f"sitemap-crawler: warning: {record.url}: {record.detail} "
                               "(recorded as internal-error; please report it)", markup=False)
        if self.verbose:
            outcome = str(record.status) if record.error is None else record.error.value
            self.console.print(
                f"GET {record.url} {outcome} {record.elapsed * 1000:.0f}ms", markup=False
            )
        now = time.monotonic()
        if self._live is not None and now - self._last_draw >= REFRESH_SECONDS:
            self._last_draw = now
            from rich.text import Text

            self._live.update(Text(status_line(result, self.concurrency, self.max_pages)),
                              refresh=True)


def status_line(result: CrawlResult, concurrency: int, max_pages: int | None = None) -> str:
    """One line of counters a person can read at a glance: how long, how far, how fast.

    "Known" is every URL the crawl will request as far as it knows now (done,
    queued, in flight; at most ``--max-pages``), so the share grows as the
    crawl discovers the site and is honest about it. Jobs beyond
    ``concurrency`` wait at a worker, not on the wire.
    """
    stats = result.stats
    elapsed = max(time.monotonic() - stats.started, 1e-6) if stats.started else 0.0
    rate = stats.fetched / elapsed if elapsed else 0.0
    known = stats.fetched + stats.queued + stats.in_flight
    if max_pages is not None:
        known = min(known, max_pages)
    share = 100 * stats.fetched // known if known else 0
    return (
        f"{clock(elapsed)} · pages {stats.fetched} of {known} known ({share}%) · "
        f"queued {stats.queued} · in flight {min(stats.in_flight, concurrency)} · "
        f"listed {stats.listed} · errors {stats.errors} · {rate:.0f} pages/s"
    )


def clock(seconds: float) -> str:
    """``125`` → ``2:05``, ``3725`` → ``1:02:05``."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
