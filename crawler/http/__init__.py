"""Everything that speaks HTTP, behind one call: :meth:`Fetcher.fetch`.

The crawler talks to sites through httpx's API only (``fetch.py``). Under it
sits one of three transports (``transports.py`` chooses): by default our own
HTTP/1.1 client on an asyncio protocol with llhttp's parser
(``h1_transport.py``); through a proxy, aiohttp's engine behind an httpx
transport (``aiohttp_transport.py``, the one module that imports aiohttp);
httpx's own with HTTP/2 for ``--http2``. Pacing (``politeness.py``) and the
capped body decoder (``inflate.py``) are the same for all.
"""

from crawler.http.lean_imports import httpx_without_its_cli

httpx_without_its_cli()
