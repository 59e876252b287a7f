"""hysem: a literature-review data product as a Dagster asset graph."""

__version__ = "0.1.0"
