"""Small frames for dedup tests: records as keyword dicts, ids assigned in order."""

from __future__ import annotations

from typing import Any

import pandas as pd

from hysem_assets.dedup.cluster import ClusterResult, cluster_records


def table(*records: dict[str, Any]) -> pd.DataFrame:
    """A frame of ``records``; rows without ``record_id`` are named r1, r2, ..."""
    rows = [{"record_id": f"r{n}", **record} for n, record in enumerate(records, 1)]
    return pd.DataFrame(rows)


def together(result: ClusterResult, frame: pd.DataFrame, a: str, b: str) -> bool:
    """Whether records ``a`` and ``b`` share a cluster."""
    by_id = dict(zip(frame["record_id"], result.cluster_id))
    return by_id[a] == by_id[b]


def cluster_pair(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two records end up in one cluster."""
    frame = table(a, b)
    return together(cluster_records(frame), frame, "r1", "r2")
