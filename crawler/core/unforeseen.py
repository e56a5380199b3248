"""Where an error nobody foresaw is told, with its traceback, for ``--debug``.

One URL's unforeseen failure becomes that URL's ``internal-error`` row (its
type and message in the report, a warning line on screen); the traceback, which
is what a bug report needs, goes to this logger, shown on stderr with
``--debug`` (``crawler.cli.run``), secrets redacted there like every message.
"""

from __future__ import annotations

import logging

LOG = logging.getLogger("sitemap_crawler")


def log_unforeseen(url: str, exc: BaseException) -> None:
    LOG.debug("unforeseen error at %s", url, exc_info=exc)
