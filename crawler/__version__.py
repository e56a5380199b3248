"""The version, in one place, so the default User-Agent and packaging agree."""

__version__ = "0.1.0"
