"""Acquisition: raw metadata per source, and later the merged corpus."""
