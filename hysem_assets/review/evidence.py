"""The evidence table: one row per included study with its citation and extracted fields, and its
findings sheet: one row per comparison those studies report.

Its columns follow the query's extraction fields (whatever the review protocol
declares), so the table serves any subject. Values stored as JSON (lists, records)
become readable text, and each value's evidence sentences (from the ``evidence`` column
extraction writes) stand beside it as ``<field>_evidence``, so a reviewer checks a value
against its source without opening the paper.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from hysem_assets.core.cells import text_of
from hysem_assets.core.empty import typed_when_empty
from hysem_assets.dedup.normalize import is_missing
from hysem_assets.findings.schema import ABSTRACT
from hysem_assets.settings.fields import RESERVED_NAMES

#: Columns of ``extracted_fields`` that describe the extraction run, not the study.
_RUN_COLUMNS = RESERVED_NAMES | {"cluster_id", "text_source", "cache_hits", "protocol", "evidence"}
STUDY_COLUMNS = ("cluster_id", "citation", "year", "title", "doi", "topic", "retracted", "text_source")
#: The findings sheet: who found what, the result and its estimate, where it was read, then the terms.
FINDING_COLUMNS = (
    "cluster_id",
    "citation",
    "intervention",
    "comparator",
    "outcome",
    "direction",
    "measure",
    "estimate",
    "ci_low",
    "ci_high",
    "p_value",
    "evidence",
    "source",
    "section",
    "abstract_only",
    "preferred",
    "confidence",
    "intervention_term",
    "comparator_term",
    "outcome_term",
    "study_kind",
    "finding_id",
)


def readable(value: Any) -> str:
    """A field value as text: JSON lists joined with "; ", records as "key: value"."""
    if isinstance(value, str) and not is_missing(value):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return text_of(value)


def field_columns(extracted: pd.DataFrame) -> list[str]:
    """The extraction fields of the table, in their order."""
    return [column for column in extracted.columns if column not in _RUN_COLUMNS]


def evidence_sentences(evidence: Any) -> dict[str, str]:
    """field -> its distinct evidence sentences joined, from the JSON ``evidence`` of one row."""
    if is_missing(evidence) or not evidence:
        return {}
    found = json.loads(evidence) if isinstance(evidence, str) else evidence
    return {
        name: " | ".join(dict.fromkeys(item["sentence"] for item in items if item.get("sentence")))
        for name, items in found.items()
    }


def evidence_table(
    included: list[str],
    corpus: pd.DataFrame,
    library: pd.DataFrame,
    extracted: pd.DataFrame,
    topics: pd.DataFrame,
) -> pd.DataFrame:
    """One row per included work (in ``included`` order): study columns, then every field."""
    works = corpus.set_index("cluster_id")
    citations = library.set_index("cluster_id")["full_citation"]
    topic_labels = topics.set_index("cluster_id")["dominant_label"] if len(topics) else pd.Series(dtype=object)
    fields = extracted.set_index("cluster_id")
    columns = field_columns(extracted)
    with_evidence = "evidence" in fields.columns
    if with_evidence:
        columns = [name for column in columns for name in (column, f"{column}_evidence")]
    rows = []
    for cluster_id in included:
        work = works.loc[cluster_id]
        row = {
            "cluster_id": cluster_id,
            "citation": citations.get(cluster_id) or "",
            "year": None if is_missing(work.get("year")) else int(work["year"]),
            "title": work.get("title") or "",
            "doi": work.get("doi") or "",
            "topic": "" if is_missing(topic_labels.get(cluster_id)) else topic_labels.get(cluster_id),
            "retracted": bool(work.get("is_retracted")) if not is_missing(work.get("is_retracted")) else False,
            "text_source": fields["text_source"].get(cluster_id, "") if "text_source" in fields else "",
        }
        sentences = evidence_sentences(fields["evidence"].get(cluster_id)) if with_evidence else {}
        for column in columns:
            if column.endswith("_evidence") and column not in fields.columns:
                row[column] = sentences.get(column.removesuffix("_evidence"), "")
            else:
                row[column] = readable(fields[column].get(cluster_id)) if cluster_id in fields.index else ""
        rows.append(row)
    table = pd.DataFrame(rows, columns=[*STUDY_COLUMNS, *columns])
    table["year"] = table["year"].astype("Int64")
    return typed_when_empty(table, {"retracted": "bool"})


def findings_sheet(included: list[str], findings: pd.DataFrame, library: pd.DataFrame) -> pd.DataFrame:
    """One row per finding of an included study: preferred rows first, each part in ``included`` order.

    A finding that is not preferred repeats in an abstract what its full text reports; ``abstract_only``
    marks a preferred one read in an abstract, whose full text (when there is one) does not report it.
    """
    order = {cluster_id: n for n, cluster_id in enumerate(included)}
    rows = findings[findings["cluster_id"].isin(order)]
    preferred = rows["preferred"].fillna(False).astype(bool)
    sheet = rows.assign(
        citation=rows["cluster_id"].map(library.set_index("cluster_id")["full_citation"]),
        preferred=preferred,
        abstract_only=preferred & rows["source"].eq(ABSTRACT).fillna(False).astype(bool),
        study=rows["cluster_id"].map(order),
    ).sort_values(["preferred", "study"], ascending=[False, True], kind="stable")
    sheet = sheet[list(FINDING_COLUMNS)].reset_index(drop=True)
    texts = sheet.select_dtypes(exclude=["number", "bool"]).columns
    sheet[texts] = sheet[texts].map(text_of)
    return sheet
