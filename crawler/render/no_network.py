"""The browser's only network: a proxy address that refuses every connection.

Every request a rendered page makes is intercepted and answered by the crawler
(``renderer.py``), under the crawl's network rule. What interception cannot see
(a WebSocket opened past it, a prefetch, anything Chromium starts on its own)
must fail closed rather than reach the machine's network, so the browser is
launched with this as its proxy, loopback included: a TCP port bound and never
listened on, held for the browser's life so nothing else can take it. A
connection to it is refused at once by the kernel.
"""

from __future__ import annotations

import socket

# Chromium's proxy bypass rule that sends loopback through the proxy too (by default
# Chromium connects to loopback directly, whatever its proxy)
NO_BYPASS = "<-loopback>"


class DeadEnd:
    """A bound, never-listening port on 127.0.0.1: every connect is refused."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._socket.close()
