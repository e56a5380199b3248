"""A TCP listener on 127.0.0.1 whose every connection is handled by the test's own
function, for what a well-behaved HTTP server cannot do (never answer, drip, close
a kept-alive connection when the next request comes)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable


class RawServer:
    """Hands each accepted connection to ``serve`` in a thread of its own; counts them.
    ``stop`` is set on close, for a handler that waits."""

    def __init__(self, serve: Callable[[socket.socket], None], backlog: int = 512) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(backlog)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = 0
        self.stop = threading.Event()
        self._serve = serve
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            self._serve(conn)

    def close(self) -> None:
        self.stop.set()
        self.listener.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
