"""``python -m crawler`` is ``sitemap-crawler``."""

from crawler.cli import main

if __name__ == "__main__":
    main()
