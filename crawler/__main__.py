"""``python -m crawler`` is ``sitemap-crawler``."""

from crawler.cli.launch import main

if __name__ == "__main__":
    main()
