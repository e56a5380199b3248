"""Regeneration jobs on RQ: one job per site config, run by ``sitemap-crawler worker``
(RQ's worker, with its scheduler)."""
