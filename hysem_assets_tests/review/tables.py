"""A small query partition for the review deliverables: 9 source records of 6 works.

Works w1-w6; w1 has three records and w2 two (3 duplicates). w6 is retracted. Of the
five sought, w3 and w4 have no PDF (no_oa_location, http_error), w5's PDF does not
parse: all five are included, w1 and w2 from their full texts, w3-w5 from their abstracts.
"""

from __future__ import annotations

import json

import pandas as pd

from hysem_assets.findings.schema import ABSTRACT, DECREASED, NO_DIFFERENCE
from hysem_assets.screening.outcome import FULLTEXT_DECISION, FULLTEXT_REASON, INCLUDED, inclusion
from hysem_assets.sources.registry import record_sources
from hysem_assets_tests.findings_table import finding, findings_table

WORKS = ["w1", "w2", "w3", "w4", "w5", "w6"]
RECORDS = {"w1": ["pubmed:1", "openalex:1", "scopus:1"], "w2": ["pubmed:2", "openalex:2"], "w3": ["pubmed:3"],
           "w4": ["openalex:4"], "w5": ["scopus:5"], "w6": ["pubmed:6"]}  # fmt: skip


def raw() -> dict[str, pd.DataFrame]:
    ids = [record for records in RECORDS.values() for record in records]
    return {
        source: pd.DataFrame(
            {"source": source, "source_id": [r.split(":")[1] for r in ids if r.startswith(source)]}, dtype="string"
        )
        for source in record_sources()
    }


def corpus() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "cluster_id": WORKS,
            "record_ids": [RECORDS[w] for w in WORKS],
            "title": [f"Study {w}" for w in WORKS],
            "year": [2019, 2020, 2021, 2021, 2022, 2018],
            "doi": [f"10.1000/{w}" for w in WORKS],
            "is_retracted": [False, False, None, False, False, True],
        }
    )


def screening(
    decisions: dict[str, tuple[str, str | None]] | None = None,
    ranked_out=(),
    fulltext: dict[str, tuple[str, str | None]] | None = None,
    works: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Nobody has screened yet and every work goes on, unless ``decisions`` (work -> decision,
    reason), ``ranked_out`` (undecided works held back by their rank) or ``fulltext`` (work ->
    full-text decision, reason) say otherwise; ``included`` as the screening asset computes it
    over ``works`` (the corpus by default)."""
    decisions, fulltext = decisions or {}, fulltext or {}
    decision = [decisions.get(w, ("undecided", None))[0] for w in WORKS]
    table = pd.DataFrame(
        {
            "cluster_id": WORKS,
            "decision": decision,
            "reason": [decisions.get(w, (None, None))[1] for w in WORKS],
            "proceeds": [
                d == "included" or (d == "undecided" and w not in ranked_out) for w, d in zip(WORKS, decision)
            ],
            FULLTEXT_DECISION: [fulltext.get(w, ("undecided", None))[0] for w in WORKS],
            FULLTEXT_REASON: [fulltext.get(w, (None, None))[1] for w in WORKS],
        }
    )
    table[INCLUDED] = inclusion(table, corpus() if works is None else works)
    return table


def pdfs() -> pd.DataFrame:
    status = ["saved", "saved", "no_oa_location", "http_error", "saved", "saved"]
    return pd.DataFrame({"cluster_id": WORKS, "status": status, "reason": ["x"] * len(WORKS)})


def parsed() -> pd.DataFrame:
    return pd.DataFrame(
        {"cluster_id": ["w1", "w2", "w5", "w6"], "error": [None, None, "no text layer: scanned pages", None]}
    )


def library() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "cluster_id": WORKS,
            "in_text_citation": [f"(Doe, {w})" for w in WORKS],
            "full_citation": [f"Doe, J. ({w}). Study {w}." for w in WORKS],
        }
    )


#: What the findings of the included works w1 and w2 pool to: their hazard ratios of stroke (w3's is not included).
POOLED_STROKE = "aspirin vs placebo: stroke"


def findings() -> pd.DataFrame:
    """Stroke on aspirin: w1 in its full text (and its abstract, which yields), w2 in its abstract only, w3 too but
    w3 is not included; w1's major bleeding, one study, is not pooled. w2's evidence is hostile to spreadsheets."""
    stroke = {"direction": DECREASED, "measure": "hazard ratio"}
    return findings_table(
        [
            finding("w1", "aspirin", "placebo", "stroke", **stroke, estimate=0.8, ci_low=0.7, ci_high=0.92),
            finding("w1", "aspirin", "placebo", "stroke", **stroke, source=ABSTRACT, preferred=False),
            finding("w1", "aspirin", "placebo", "major bleeding", measure="odds ratio", estimate=1.4, ci_low=1.1,
                    ci_high=1.8),
            finding("w2", "aspirin", "placebo", "stroke", direction=NO_DIFFERENCE, measure="hazard ratio",
                    estimate=0.9, ci_low=0.75, ci_high=1.08, source=ABSTRACT, evidence='=HYPERLINK("x")'),
            finding("w3", "aspirin", "placebo", "stroke", **stroke, estimate=0.5, ci_low=0.3, ci_high=0.8),
        ]
    )  # fmt: skip


def extracted() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "cluster_id": WORKS,
            "text_source": ["full_text", "full_text", "abstract", "abstract", "abstract", "full_text"],
            "study_design": ["cohort", "case-control", None, None, None, "cohort"],
            "outcomes": [json.dumps(["stroke", "heart failure"]), json.dumps([]), None, None, None, None],
            "sample_size": ["4402.0", None, None, None, None, None],
            "status": ["ok"] * len(WORKS),
            "error": [None] * len(WORKS),
            "chunks": [1] * len(WORKS),
        }
    )


def topics() -> pd.DataFrame:
    return pd.DataFrame({"cluster_id": WORKS, "dominant_label": ["risk, cohort"] * len(WORKS)})
