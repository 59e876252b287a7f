"""Small deduplicated corpora shaped like the real ``deduped_corpus`` asset (same columns, dtypes
and cell types: lists as numpy arrays, nullable integers), for the library tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = [
    "cluster_id",
    "record_ids",
    "sources",
    "source",
    "source_id",
    "doi",
    "title",
    "abstract",
    "authors",
    "first_author",
    "year",
    "journal",
    "volume",
    "issue",
    "pages",
    "item_type",
    "language",
    "pmid",
    "openalex_id",
    "oa_url",
    "raw",
    "provenance",
    "cited_by_count",
    "primary_topic",
    "is_retracted",
    "is_published",
    "license",
    "oa_status",
]


def _row(cluster_id: str, **fields) -> dict:
    authors = fields.pop("authors", [])
    row = dict.fromkeys(COLUMNS)
    row.update(
        cluster_id=cluster_id,
        record_ids=np.array([f"pubmed:{cluster_id}"], dtype=object),
        sources=np.array(["pubmed"], dtype=object),
        source="pubmed",
        source_id=cluster_id,
        authors=np.array(authors, dtype=object),
        first_author=authors[0].split(",")[0] if authors else None,
        provenance="{}",
        is_retracted=False,
        is_published=True,
    )
    row.update(fields)
    return row


def sample_corpus() -> pd.DataFrame:
    """Six works covering the kinds and quirks the real sample corpus has."""
    rows = [
        _row(
            "c-480b6032ca8d",
            doi="10.5555/jec.2025.0103",
            year=2025,
            item_type="journal article",
            title="Multi-pollutant exposure and subclinical atherosclerosis: elastic net and LASSO regularised "
            "regression in a Swiss cohort.",
            abstract="BACKGROUND: Carotid intima-media thickness.\n\nMETHODS: 4,402 adults; 95% CI & more.",
            authors=["Romano, Chiara", "Brunner, Lukas", "Keller, Anna"],
            journal="Journal of environmental cardiology",
            volume="18",
            issue="1",
            pages="22-35",
            language="eng",
            pmid="39874511",
            cited_by_count=0,
        ),
        _row(
            "c-d17a15471213",
            doi="10.5555/jec.2021.0601",
            year=2021,
            item_type="journal article",
            title="Air quality and cardiovascular health: 2021 update.",
            authors=["European Environmental Cardiology Working Group", "Weiß, Katrin", "Ødegaard, Ingrid"],
            journal="Journal of environmental cardiology",
            volume="14",
            issue="6",
            pages="489-510",
            language="eng",
            pmid="34890717",
            cited_by_count=12,
        ),
        _row(
            "c-66027d8cf906",
            doi=None,
            year=2022,
            item_type="book chapter",
            title="Machine learning methods for air pollution and cardiovascular outcomes.",
            authors=["Sørensen, Henrik", "Nwosu, Amara"],
            journal="Air Pollution and the Heart: A Clinical Compendium",
            language="eng",
            pmid="35675501",
        ),
        _row(
            "c-7c88eabe28d0",
            doi="10.9999/hrx.2021.08.19.21262211",
            year=2021,
            item_type="preprint",
            title="Gradient boosting reveals nonlinear PM2.5 thresholds for incident heart failure: a nationwide "
            "cohort study",
            authors=["Lima, Rafael Souza", "Carvalho, Beatriz", "Almeida, João Pedro"],
            journal="HealthRxiv",
            language="en",
            oa_url="https://example.org/hrx.pdf",
            is_published=False,
        ),
        _row(
            "c-d2d6d9670727",
            doi="10.5555/icehi.2020.0012",
            year=2020,
            item_type="conference paper",
            title="Deep temporal models for forecasting air-pollution-related cardiovascular emergency visits",
            authors=["Mehta, Arjun", "Laurent, Sophie", "Gagnon, Étienne"],
            journal="Proceedings of the 2020 International Conference on Environmental Health Informatics (ICEHI)",
            pages="77-84",
            language="en",
        ),
        _row(
            "c-1625a8ad05f5",
            doi="10.5555/ijesc.2018.0091",
            year=2018,
            item_type="journal article",
            title="Personal PM2.5 monitoring and heart rate variability in older adults, a random forest approach.",
            authors=["O'Brien, Margaret", "Nguyễn, Thị Lan", "Grant, Oliver"],
            journal="International journal of exposure science & computation",
            volume="28",
            issue="5",
            pages="455-63",
            language="eng",
            pmid="29872101",
        ),
    ]
    return _frame(rows)


def synthetic_corpus(count: int) -> pd.DataFrame:
    """``count`` distinct journal articles, for batching tests."""
    rows = [
        _row(
            f"c-{index:012x}",
            doi=f"10.5555/synthetic.{index}",
            year=2000 + index % 25,
            item_type="journal article",
            title=f"Synthetic study number {index}",
            authors=[f"Author{index}, Ann"],
            journal="Journal of synthetic results",
            volume=str(index),
            pages=f"{index}-{index + 9}",
        )
        for index in range(count)
    ]
    return _frame(rows)


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["year"] = frame["year"].astype("int64")
    frame["cited_by_count"] = frame["cited_by_count"].astype("Int64")
    return frame
