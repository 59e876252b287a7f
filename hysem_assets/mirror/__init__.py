"""Local mirror of PubMed, OpenAlex, Scopus, Crossref and Unpaywall over a snapshot directory."""

from hysem_assets.mirror.server import (
    MIRROR_PLACEHOLDER,
    SOURCE_PREFIXES,
    MirrorServer,
    Snapshot,
    base_urls,
    create_app,
    default_snapshot_dir,
    doi_key,
)

__all__ = [
    "MIRROR_PLACEHOLDER",
    "SOURCE_PREFIXES",
    "MirrorServer",
    "Snapshot",
    "base_urls",
    "create_app",
    "default_snapshot_dir",
    "doi_key",
]
