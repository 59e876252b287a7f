"""Local mirror of PubMed, OpenAlex, Scopus, Crossref and Unpaywall over snapshot directories, searchable."""

from hysem_assets.mirror.server import (
    MIRROR_PLACEHOLDER,
    SOURCE_PREFIXES,
    MirrorServer,
    Snapshot,
    base_urls,
    bundled_snapshot_dirs,
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
    "bundled_snapshot_dirs",
    "create_app",
    "default_snapshot_dir",
    "doi_key",
]
