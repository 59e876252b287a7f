"""A small stored corpus for the sample query: works on its protocol's criteria and works beside them."""

from __future__ import annotations

import pandas as pd

ON_TOPIC = "Random forest models of fine particulate matter air pollution and incident stroke in a cohort"
OFF_TOPIC = "Dietary fibre and bowel habits of office workers: a survey"


def corpus() -> pd.DataFrame:
    """Twelve works: six on the sample protocol's criteria (air pollution, cardiovascular, machine
    learning), six beside them."""
    titles = [f"{ON_TOPIC} {k}" for k in range(6)] + [f"{OFF_TOPIC} {k}" for k in range(6)]
    abstracts = ["We trained machine learning models on ambient air pollution and cardiovascular outcomes."] * 6 + [
        "A questionnaire on diet and digestion; no exposure was measured."
    ] * 6
    return pd.DataFrame(
        {
            "cluster_id": [f"w{k:02d}" for k in range(12)],
            "title": titles,
            "abstract": abstracts,
            "authors": [["Doe, Jane", "Roe, Rick"]] * 12,
            "year": [2020] * 12,
            "journal": ["Journal of Tests"] * 12,
            "doi": [f"10.1000/w{k:02d}" for k in range(12)],
            # searched and imported on topic, found by citation searching beside it
            "sources": [["pubmed", "embase"]] * 6 + [["citations"]] * 6,
        }
    )
