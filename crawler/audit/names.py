"""The names of the audit's findings: what ``--fail-on`` takes and the reports use.

Apart from the findings themselves so that the command's help can name them
without importing the audit (and the HTTP stack under its live-sitemap reader).
"""

LIVE_FINDINGS = ("non-indexable-in-sitemap", "orphans", "missing-from-sitemap",
                 "sitemap-lastmod", "no-sitemap", "sitemap-errors", "legacy-sitemap-namespace",
                 "deprecated-sitemap-tags")
# --check-external (on in audits): links that leave the crawl, and their origins' certificates
EXTERNAL_FINDINGS = ("broken-external-links", "redirected-external-links",
                     "unchecked-external-links", "expiring-certificates", "broken-fragments")
# what pages say of themselves (read for every audit)
PAGE_FINDINGS = ("missing-descriptions", "duplicate-descriptions", "missing-h1", "multiple-h1",
                 "structured-data-errors", "incomplete-videos", "misleading-last-modified")
# --render: what JavaScript changed (crawler.audit.render_findings)
RENDER_FINDINGS = ("rendered-links", "render-changes", "render-errors")
FINDINGS = ("broken-links", "redirected-links", "soft-404", "duplicates", "canonical-problems",
            "titles", "noindex-linked", *PAGE_FINDINGS, *EXTERNAL_FINDINGS, *LIVE_FINDINGS,
            *RENDER_FINDINGS)
# since the last audit (crawler.audit.changes): pages added, removed and changed, and
# each finding's new and fixed items
CHANGE_FINDINGS = ("added-pages", "removed-pages", "changed")
CHANGES = (*CHANGE_FINDINGS, *(f"new-{name}" for name in FINDINGS),
           *(f"fixed-{name}" for name in FINDINGS))

# invalid or out-of-scope locs of a live sitemap kept by name, and wrong lastmods
# listed; the rest are counted
KEPT = 1000
