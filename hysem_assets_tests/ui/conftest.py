"""Fixtures of the UI tests (see server.py)."""

from hysem_assets_tests.ui.server import dagster_server  # noqa: F401
