"""Where campaigns live under ``data/`` (a constant the quick up-to-date check of a build
needs without importing the record models)."""

CAMPAIGNS_DIR = "campaigns"
"""Folder of ``data/`` holding one directory per campaign."""
