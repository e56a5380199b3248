"""Regeneration jobs on RQ: one job per site config, run by ``rq worker``."""
