"""Contracts of the deduplicated corpus, as pure functions the asset checks call."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from hysem_assets.core.identifiers import doi_work_key


def lost_and_repeated(raw_ids: list[str], corpus: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Raw record ids missing from every cluster, and ids that sit in more than one."""
    placed = Counter(record_id for ids in corpus["record_ids"] for record_id in ids)
    lost = [record_id for record_id in raw_ids if record_id not in placed]
    repeated = sorted(record_id for record_id, count in placed.items() if count > 1)
    return lost, repeated


def repeated_cluster_ids(corpus: pd.DataFrame) -> list[str]:
    counts = corpus["cluster_id"].value_counts()
    return sorted(counts[counts > 1].index)


def clusters_with_several_dois(raw: pd.DataFrame, cluster_ids: pd.Series) -> dict[str, list[str]]:
    """Clusters whose member records carry DOIs of more than one work.

    Versions of one work (``CD002273.pub2`` and ``.pub3``, a copied ``/full`` suffix)
    share a :func:`doi_work_key` and count as one DOI.
    """
    keys = raw["doi"].map(lambda doi: doi_work_key(doi) if isinstance(doi, str) else None)
    pairs = pd.DataFrame({"cluster_id": cluster_ids.to_numpy(), "doi": keys.to_numpy()}).dropna()
    dois = pairs.groupby("cluster_id")["doi"].agg(lambda values: sorted(set(values)))
    return {cluster: values for cluster, values in dois.items() if len(values) > 1}
