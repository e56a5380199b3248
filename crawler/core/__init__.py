"""The shared vocabulary, at the bottom of the crawler: what every layer speaks.

Errors and the kinds of failure a page can have, page records and verdicts, the
parts of an HTTP answer that are read, dates, and the user's credentials. It
imports nothing of the crawler above it (import-linter holds this in CI), so
any layer may use it and none of it can reach back up.
"""
