"""What a URL is and whether we want it.

Normalising links as browsers read them (WHATWG, kept to RFC 3986 URIs), hosts
and registered domains, the crawl's scope, the user's filters and robots.txt.
Pure functions over strings: no I/O, nothing of pages or HTTP.
"""
