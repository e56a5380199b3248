"""Everything that speaks HTTP, behind one call: :meth:`Fetcher.fetch`.

The crawler talks to sites through httpx's API only (``fetch.py``). Under it
sits one of two transports (``transports.py`` chooses): httpx's own with
HTTP/2 for ``--http2``, or, by default, aiohttp's HTTP/1.1 engine behind an
httpx transport (``aiohttp_transport.py``, the one module that imports
aiohttp). Pacing (``politeness.py``) and the capped body decoder
(``inflate.py``) are the same for both.
"""

from crawler.http.lean_imports import httpx_without_its_cli

httpx_without_its_cli()
