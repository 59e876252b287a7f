"""Findings tables for tests of the views that read them: real DataFrames in the contract's columns and dtypes."""

from __future__ import annotations

from typing import Any

import pandas as pd

from hysem_assets.findings.schema import ABSTRACT, COLUMNS, FULLTEXT, INCREASED


def finding(cluster_id: str, intervention: str, comparator: str, outcome: str, **values: Any) -> dict[str, Any]:
    """One row: the arms as written and as terms (folded), a full-text result unless ``values`` say otherwise."""
    source = values.get("source", FULLTEXT)
    return {
        "finding_id": f"{cluster_id}:{intervention}:{comparator}:{outcome}:{source}",
        "cluster_id": cluster_id,
        "intervention": intervention,
        "comparator": comparator,
        "outcome": outcome,
        "intervention_term": intervention.casefold(),
        "comparator_term": comparator.casefold(),
        "outcome_term": outcome.casefold(),
        "direction": INCREASED,
        "confidence": 0.9,
        "evidence": f"{intervention} changed {outcome} compared with {comparator}.",
        "source": source,
        "section": "Abstract" if source == ABSTRACT else "Results",
        "start": 0,
        "end": 40,
        "preferred": True,
        "study_kind": "primary",
        **values,
    }


def findings_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """``rows`` as the findings asset writes them: every column, in order, with its dtype."""
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(COLUMNS)
