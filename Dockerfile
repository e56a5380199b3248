# sitemap-crawler as a container: the CLI is the entry point.
#   docker build -t sitemap-crawler .                  # the crawler alone
#   docker build -t sitemap-crawler:render --target render .   # with Chromium for --render
#   docker run --rm -v "$PWD/public:/data" sitemap-crawler crawl https://www.example.com/ --out /data
FROM python:3.12-slim AS base
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY crawler ./crawler
COPY sitemap_writer ./sitemap_writer
RUN pip install '.[jobs,parquet]' && rm -rf /src \
    && useradd --create-home --uid 10001 crawler && mkdir /data && chown crawler /data
USER crawler
WORKDIR /data
ENTRYPOINT ["sitemap-crawler"]
CMD ["--help"]

# --render: the render extra (Playwright's driver) and Debian's Chromium (no browser
# download)
FROM base AS render
USER root
WORKDIR /src
COPY pyproject.toml README.md ./
COPY crawler ./crawler
COPY sitemap_writer ./sitemap_writer
RUN apt-get update && apt-get install -y --no-install-recommends chromium \
    && rm -rf /var/lib/apt/lists/* && pip install '.[jobs,parquet,render]' && rm -rf /src
ENV SITEMAP_CRAWLER_BROWSER=/usr/bin/chromium
USER crawler
WORKDIR /data
