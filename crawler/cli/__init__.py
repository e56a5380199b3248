"""The ``sitemap-crawler`` command: the only place that joins crawler and writer.

The launcher (signals from the first moment), the click commands and their
options, the config file, progress on stderr, and turning every failure into
one line and an exit code.
"""
