"""The Dagster layer: every asset, asset check, job, sensor, resource and the IO manager.

One module per asset group (``acquisition``, ``screening``, ``fulltext``, ``parsing``,
``enrichment``, ``knowledge``, ``qa``, ``review``). Each asset is a thin shell over pure
functions of a stage package; stage packages never import this one. ``definitions.py`` loads
whatever a module here declares at module scope with Dagster's package loader, so a new asset
needs no registration beyond its module.
"""
