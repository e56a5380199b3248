"""What a crawl keeps: the state file between runs, and what one run holds until its end.

The SQLite state (validators, fingerprints, outlinks, the queue of an
interrupted run), the record and skipped-URL stores and referrers that spill to
temporary files, and the live sitemap's entries. Nothing here decides; it keeps.
"""
