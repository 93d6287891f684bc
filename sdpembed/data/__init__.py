"""Bundled data files (see README.md in this folder for sources and attribution)."""
