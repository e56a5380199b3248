"""A request lost to a stale kept-alive connection is asked again, once, on a new one.

A server may close an idle connection just as the next request travels on it
(its keep-alive timer ran out, or it answers one request a connection): the
request then fails before any byte of an answer, through no fault of the page.
Browsers ask an idempotent request again on a new connection; our own client
does (``h1_transport.py``), and this does the same for httpx's transport
(``--http2``), which gives up. Whether the connection was new is read from
httpcore's public ``trace`` extension: a request that dialled no connection was
sent on a reused one.
"""

from __future__ import annotations

import typing

import httpx

IDEMPOTENT = frozenset({"GET", "HEAD"})
_NO_ANSWER = "without sending a response"  # httpcore's words for a close before any byte


class RetryStale(httpx.AsyncBaseTransport):
    """``inner`` (an ``httpx.AsyncHTTPTransport``, guarded or not), with the retry."""

    def __init__(self, inner: httpx.AsyncBaseTransport,
                 pool: typing.Any | None = None) -> None:
        self._inner = inner
        self._pool = pool  # httpcore's pool, whose other idle connections are as old

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method not in IDEMPOTENT:
            return await self._inner.handle_async_request(request)
        dialled: list[bool] = []
        traced = _tracing(request, dialled)
        try:
            return await self._inner.handle_async_request(traced)
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            stale = not dialled and (not isinstance(exc, httpx.RemoteProtocolError)
                                     or _NO_ANSWER in str(exc))
            if not stale:
                raise
        await self._drop_idle()
        return await self._inner.handle_async_request(request)

    async def _drop_idle(self) -> None:
        """The pool's idle connections closed, so the retry dials a new one."""
        pool = self._pool
        connections = getattr(pool, "_connections", None)
        if not connections:
            return
        for connection in list(connections):
            if connection.is_idle():
                await connection.aclose()

    async def aclose(self) -> None:
        await self._inner.aclose()


def _tracing(request: httpx.Request, dialled: list[bool]) -> httpx.Request:
    """``request`` whose trace notes when its connection is dialled (any trace the
    caller set is still called)."""
    earlier = request.extensions.get("trace")

    async def trace(name: str, info: dict[str, typing.Any]) -> None:
        if name.endswith(("connect_tcp.started", "connect_unix_socket.started")):
            dialled.append(True)
        if earlier is not None:
            await earlier(name, info)

    request.extensions = {**request.extensions, "trace": trace}
    return request
