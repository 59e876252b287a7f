"""Preference records from the revise loop, and the dataset exported for DPO training.

Every draft the auditor rejected is paired with the answer finally given to the same
prompt: the rejected draft as ``rejected``, the final answer as ``chosen``. The log keeps
verdicts, round, models and time; the dataset keeps exactly what TRL's DPO trainer reads.
A ``chosen`` answer must have been approved and must pass the post-hoc citation audit
(every citation resolves, no claim removed): the auditor can approve a claim whose citation
does not exist, and training on it would teach exactly that. Pairs that fail are kept in the
log with the reason and left out of the dataset, and the dataset says how many.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from hysem_assets.qa.citations import audit_citations
from hysem_assets.qa.drafts import render_claims, render_prompt
from hysem_assets.qa.loop import LoopResult
from hysem_assets.qa.sources import ContextChunk, Library, clean

DPO_KEYS = ("prompt", "chosen", "rejected")
#: Why a logged pair is not exported: its chosen side was not approved, or failed the citation audit.
EXCLUSION_REASONS = ("chosen_not_approved", "chosen_failed_citation_audit")
#: Columns and types of a preference record, so a log without pairs keeps them.
PREFERENCE_DTYPES = {
    "query": object,
    "question": object,
    "prompt": object,
    "chosen": object,
    "rejected": object,
    "chosen_json": object,
    "rejected_json": object,
    "chosen_verdict": object,
    "rejected_verdict": object,
    "chosen_approved": bool,
    "chosen_cited": bool,
    "chosen_citation_problems": object,
    "rejected_round": "int64",
    "chosen_round": "int64",
    "generator_model": object,
    "auditor_model": object,
    "logged_at": object,
}


def preference_records(
    *,
    query: str,
    question: str,
    context: list[ContextChunk],
    loop: LoopResult,
    generator_model: str,
    auditor_model: str,
    library: Library,
) -> list[dict[str, Any]]:
    """One record per rejected draft of ``loop``, paired with its final answer, which is audited
    against ``library`` and the context here (``chosen_cited``)."""
    final = loop.final
    chosen = render_claims(final.draft)
    audit = audit_citations(final.draft, [c.metadata for c in context], library)
    cited = not audit.removed and all(check["problem"] is None for check in audit.checks)
    prompt = render_prompt(question, context)
    logged_at = datetime.now(UTC).isoformat()
    return [
        {
            "query": query,
            "question": question,
            "prompt": prompt,
            "chosen": chosen,
            "rejected": render_claims(rejected.draft),
            "chosen_json": json.dumps(final.draft.as_json(), ensure_ascii=False),
            "rejected_json": json.dumps(rejected.draft.as_json(), ensure_ascii=False),
            "chosen_verdict": json.dumps(final.verdict.as_json(), ensure_ascii=False),
            "rejected_verdict": json.dumps(rejected.verdict.as_json(), ensure_ascii=False),
            "chosen_approved": final.verdict.approved,
            "chosen_cited": cited,
            "chosen_citation_problems": json.dumps(audit.removed, ensure_ascii=False),
            "rejected_round": rejected.number,
            "chosen_round": final.number,
            "generator_model": generator_model,
            "auditor_model": auditor_model,
            "logged_at": logged_at,
        }
        for rejected in loop.rejected
        if render_claims(rejected.draft) != chosen
    ]


def exclusion(record: Mapping[str, Any]) -> str | None:
    """Why a logged pair may not be exported (one of ``EXCLUSION_REASONS``), or None when it may.

    A record that does not say its chosen side passed the citation audit (a log written before
    the audit was recorded) has not shown that it did.
    """
    if not clean(record.get("chosen_approved")):
        return "chosen_not_approved"
    if not clean(record.get("chosen_cited")):
        return "chosen_failed_citation_audit"
    return None


def excluded_pairs(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many logged pairs are left out of the dataset, by reason."""
    reasons = [exclusion(record) for record in records]
    return {reason: reasons.count(reason) for reason in EXCLUSION_REASONS}


def dpo_rows(records: Iterable[Mapping[str, Any]], *, approved_only: bool = True) -> list[dict[str, str]]:
    """``prompt``/``chosen``/``rejected`` rows; by default only pairs whose chosen answer was
    approved and passed the citation audit (``approved_only=False``: every pair)."""
    return [
        {key: str(record[key]) for key in DPO_KEYS}
        for record in records
        if not approved_only or exclusion(record) is None
    ]


def export_preferences(
    records: Iterable[Mapping[str, Any]], path: Path, *, format: str = "jsonl", approved_only: bool = True
) -> int:
    """Write the DPO dataset as JSONL (one object per line) or Parquet; returns the number of pairs."""
    rows = dpo_rows(records, approved_only=approved_only)
    path.parent.mkdir(parents=True, exist_ok=True)
    if format == "jsonl":
        with path.open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    elif format == "parquet":
        pd.DataFrame(rows, columns=list(DPO_KEYS)).to_parquet(path, index=False)
    else:
        raise ValueError(f"unknown preference export format {format!r}; choose jsonl or parquet")
    return len(rows)
