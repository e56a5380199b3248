"""The command's first lines: Ctrl-C and SIGTERM answered from the very start.

Importing the crawler takes a few hundred milliseconds. A SIGTERM in that time
(a cron wrapper's timeout, ``kill`` from a script that just started the job)
found Python's default action and killed the process without a word (exit
-15), and a Ctrl-C printed a traceback. Here both become the documented exit
130 with its one line before anything heavy is imported, and they stay so while
a command reads its options and imports what it runs; a crawl then takes the
signals over (``crawler.cli.signals``).

While importing, the signals raise :class:`_Stopped`, not ``KeyboardInterrupt``:
CPython marks a ``KeyboardInterrupt`` that leaves code run by ``exec()`` (which
dataclasses use to build their methods) as unhandled even when it is caught
later, and then ends the process by SIGINT (exit -2) after our exit 130.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import NoReturn

from crawler.cli.invocation import how_to_resume

EXIT_INTERRUPTED = 130


class _Stopped(BaseException):
    """Ctrl-C or SIGTERM while the crawler is being imported."""


def _stop(signum: int, frame: FrameType | None) -> None:
    if frame is not None and frame.f_code.co_name == "cb" and hasattr(signal, "setitimer") \
            and frame.f_code.co_filename.startswith("<frozen importlib"):
        # importlib's module-lock weakref callback: an exception raised there is
        # "ignored" (printed with a traceback, then lost). The stop is raised a moment
        # later instead, by a timer's signal, once the callback has returned (sending
        # the signal again landed in the same callback: it is checked for at once).
        signal.signal(signal.SIGALRM, _stop)
        signal.setitimer(signal.ITIMER_REAL, 0.005)
        return
    raise _Stopped


def main() -> NoReturn:
    """Entry point of ``sitemap-crawler`` and ``python -m crawler``."""
    if sys.argv[1:] == ["--version"]:  # answered before anything else is imported
        from crawler.__version__ import __version__

        print(f"sitemap-crawler, version {__version__}")
        sys.exit(0)
    from crawler.core import startup_gc

    startup_gc.pause()  # back on once the crawl's first request is out
    try:  # the process boundary: a stop anywhere until a crawl takes the signals over
        _run_stoppable()
    except (_Stopped, KeyboardInterrupt):
        _interrupted()
    except Exception as exc:
        if _stopped_within(exc):  # Python wrapped the stop (a class statement's
            _interrupted()        # __set_name__ raises RuntimeError from it)
        raise


def _run_stoppable() -> None:
    """The command, with Ctrl-C and SIGTERM raising :class:`_Stopped` (where nobody
    changed their handlers before us)."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _stop)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _stop)
    from crawler.cli.commands import main as run

    # the handlers stay until a crawl takes the signals over (crawler.cli.signals):
    # its own imports come after the options are read, and may be interrupted too
    run()


def _stopped_within(exc: BaseException) -> bool:
    """Whether a stop is what caused ``exc``, however deep Python wrapped it."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, _Stopped | KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _interrupted() -> NoReturn:
    try:
        sys.stderr.write("sitemap-crawler: error: interrupted before the crawl began; "
                         "previous output left untouched; "
                         + how_to_resume(sys.argv[1:]) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    sys.exit(EXIT_INTERRUPTED)
