"""Configuration: the profile, queries, review protocols, environment variables and YAML loading.

The one place hysem reads ``HYSEM_*`` variables and ``config/``; everything above receives
what it needs from here.
"""
