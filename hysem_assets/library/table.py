"""The ``library`` table: one row per work with its citations and library keys."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict

from hysem_assets.library.csl import Citation
from hysem_assets.library.exports import bibtex_keys

LIBRARY_COLUMNS = (
    "cluster_id",
    "doi",
    "title",
    "in_text_citation",
    "full_citation",
    "full_citation_html",
    "citation_error",
    "bibtex_key",
    "zotero_key",
    "zotero_error",
    #: The work's published corrections (errata linked to it), as a reader finds them; None without any.
    "correction",
)


class CitationSettings(BaseModel):
    """``config/citations.yaml``: the CSL style and locale used for every rendering."""

    model_config = ConfigDict(extra="forbid")

    style: str = "apa"
    locale: str = "en-US"


def load_citation_settings(path: Path) -> CitationSettings:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    return CitationSettings.model_validate(data or {})


def library_table(
    corpus: pd.DataFrame,
    citations: Mapping[str, Citation],
    zotero_keys: Mapping[str, str] | None = None,
    zotero_failures: Mapping[str, str] | None = None,
    corrections: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Join the corpus with its rendered citations, BibTeX keys, Zotero keys and corrections."""
    keys = bibtex_keys(corpus)
    corrections = corrections or {}
    zotero_keys, zotero_failures = zotero_keys or {}, zotero_failures or {}
    rows = []
    for cluster_id, doi, title in corpus[["cluster_id", "doi", "title"]].itertuples(index=False):
        citation = citations.get(cluster_id) or Citation("", "", error="not rendered")
        rows.append(
            {
                "cluster_id": cluster_id,
                "doi": doi,
                "title": title,
                "in_text_citation": citation.in_text,
                "full_citation": citation.bibliography,
                "full_citation_html": citation.bibliography_html,
                "citation_error": citation.error,
                "bibtex_key": keys.get(cluster_id),
                "zotero_key": zotero_keys.get(cluster_id),
                "zotero_error": zotero_failures.get(cluster_id),
                "correction": corrections.get(cluster_id),
            }
        )
    return pd.DataFrame(rows, columns=list(LIBRARY_COLUMNS))
