"""One response into facts: is the page listable, and where does it lead?

Decoding bytes to text, extracting links, canonical, robots directives, hreflang
and images, the content fingerprint and lastmod, and the verdict. Pure: it is
handed a :class:`~crawler.core.response.Response` and never fetches.
"""
