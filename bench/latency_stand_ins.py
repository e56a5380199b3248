"""Other origins on loopback that answer after a delay, as servers across a network do.

    python bench/latency_stand_ins.py FIRST_PORT COUNT LATENCY_MS

One process, one port an origin, HTTP/1.1 with keep-alive: each request is
answered ``LATENCY_MS`` after it arrived (robots.txt: 404, anything else: 200
"ok", no body for HEAD). nginx answers at once, and the external check's pace
depends on how fast answers come back, so ``external_cost.py --latency-ms``
uses these instead. Runs until killed.
"""

from __future__ import annotations

import asyncio
import sys


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 latency: float) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            method, _, rest = head.partition(b" ")
            path = rest.partition(b" ")[0]
            await asyncio.sleep(latency)
            status, body = (b"404 Not Found", b"no") if path == b"/robots.txt" else (
                b"200 OK", b"ok")
            writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html\r\n"
                         b"Content-Length: 2\r\n\r\n" + (b"" if method == b"HEAD" else body))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def main(first: int, count: int, latency_ms: float) -> None:
    latency = latency_ms / 1000
    servers = [await asyncio.start_server(lambda r, w: _serve(r, w, latency), "127.0.0.1",
                                          first + n) for n in range(count)]
    print("ready", flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])))
