"""Small utilities every layer may use: atomic writes, identifiers, records, text and term matching, progress.

Nothing here reads configuration or the environment, and nothing imports another hysem package.
"""
