"""``python -m crawler`` is ``sitemap-crawler``."""

from crawler.launch import main

if __name__ == "__main__":
    main()
