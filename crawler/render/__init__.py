"""Rendering pages in headless Chromium (``--render``): the only package that imports
Playwright, and only when a crawl asks for rendering."""
