"""A small partition of the generic protocol with findings, whose counts by direction are known.

t-1 (aspirin vs placebo): stroke decreased (in the full text, and in the abstract, which yields),
major bleeding increased with its hazard ratio; t-2 (aspirin vs clopidogrel): no difference in
stroke, read in the abstract only; t-3, without a DOI (statin vs placebo): stroke decreased.
The extracted fields spell "Aspirin" where the findings' terms, folded, say "aspirin".
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from hysem_assets.findings.schema import ABSTRACT, DECREASED, INCREASED, NO_DIFFERENCE
from hysem_assets.knowledge.build import build_partition_graph
from hysem_assets.settings.protocols import load_protocol, load_protocols
from hysem_assets.stores.graph import PartitionGraph
from hysem_assets.stores.graph_schema import GraphSchema, graph_schema
from hysem_assets_tests.findings_table import finding, findings_table

QUERY = "antiplatelets-stroke"
WORKS = {"t-1": "10.2000/T1", "t-2": "10.2000/t2", "t-3": None}

FINDINGS: list[dict[str, Any]] = [
    finding("t-1", "Aspirin", "placebo", "stroke", direction=DECREASED),
    finding("t-1", "Aspirin", "placebo", "stroke", direction=DECREASED, source=ABSTRACT, preferred=False),
    finding(
        "t-1", "aspirin", "placebo", "major bleeding", direction=INCREASED,
        measure="hazard ratio", estimate=1.5, ci_low=1.1, ci_high=2.05, p_value=0.01,
    ),
    finding("t-2", "aspirin", "clopidogrel", "stroke", direction=NO_DIFFERENCE, source=ABSTRACT, confidence=0.7),
    finding("t-3", "statin", "placebo", "stroke", direction=DECREASED),
]  # fmt: skip
#: Preferred findings per direction, as the graph must count them.
BY_DIRECTION = {DECREASED: 2, INCREASED: 1, NO_DIFFERENCE: 1}


def schema() -> GraphSchema:
    return graph_schema(load_protocols(), load_protocol("generic"))


def frames(findings: list[dict[str, Any]] = FINDINGS) -> dict[str, pd.DataFrame]:
    corpus = pd.DataFrame({"cluster_id": list(WORKS), "doi": list(WORKS.values()), "title": ["A", "B", "C"]})
    fields = pd.DataFrame(
        {
            "cluster_id": list(WORKS),
            "intervention_or_exposure": [["Aspirin"], ["Aspirin", "clopidogrel"], ["statin"]],
            "outcomes": [["stroke", "major bleeding"], ["stroke"], ["stroke"]],
        }
    )
    return {"corpus": corpus, "fields": fields, "findings": findings_table(findings)}


def partition(findings: list[dict[str, Any]] = FINDINGS, query: str = QUERY) -> PartitionGraph:
    return build_partition_graph(schema(), query, **frames(findings))
