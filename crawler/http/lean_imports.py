"""Importing the HTTP stack without what a crawl never uses: ~70 ms of every start.

* httpx's package imports its command-line client (``httpx._main``: click,
  rich, pygments) to offer ``httpx.main``; a crawler never runs it. It is
  replaced by a stand-in that imports the real one if it is ever called.
* aiohttp builds two default TLS contexts when imported, loading the system's
  certificate store into each (50 ms on this machine). The crawler always
  hands aiohttp its own context (``transports.tls_context``), so the store is
  pointed at nothing while aiohttp is imported, then restored.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

_TLS_STORE_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")


def _httpx_cli(*args: Any, **kwargs: Any) -> Any:
    """``httpx.main``, for whoever calls it: the real command, imported now."""
    sys.modules.pop("httpx._main", None)
    return importlib.import_module("httpx._main").main(*args, **kwargs)


def httpx_without_its_cli() -> None:
    """Import httpx with a stand-in for its command-line module (idempotent)."""
    if "httpx" in sys.modules:
        return
    stand_in = types.ModuleType("httpx._main")
    stand_in.main = _httpx_cli  # type: ignore[attr-defined]
    sys.modules["httpx._main"] = stand_in
    try:
        importlib.import_module("httpx")
    finally:
        if sys.modules.get("httpx._main") is stand_in:
            del sys.modules["httpx._main"]  # a later import finds the real module


@contextlib.contextmanager
def no_default_tls_store() -> Iterator[None]:
    """The system's certificate store unreachable for the duration: only for importing
    a library whose default contexts the crawler never uses."""
    saved = {name: os.environ.get(name) for name in _TLS_STORE_VARIABLES}
    missing = os.path.join(os.sep, "nonexistent-sitemap-crawler-store")
    for name in _TLS_STORE_VARIABLES:
        os.environ[name] = missing
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
