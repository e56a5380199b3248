"""What a crawl says about a site: findings, the live-sitemap comparison, reports.

Broken and redirected links, duplicates, canonical and title problems, the live
sitemap held against the crawl, and the JSON, CSV and HTML reports. It reads a
finished :class:`~crawler.engine.result.CrawlResult`; the live-sitemap reader is
handed to the crawl by the CLI.
"""
