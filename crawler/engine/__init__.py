"""The crawl itself: a coordinator that schedules, and the page sources it drives.

The coordinator owns the frontier, the state and the records; pages are fetched
and read by a page fetcher in this process (its parse in a child it can kill)
or by worker processes. ``crawl(config)`` is the entry point.
"""
