"""Preference records from the revise loop, and the dataset exported for DPO training.

Every draft the auditor rejected is paired with the answer finally given to the same
prompt: the rejected draft as ``rejected``, the final answer as ``chosen``. The log keeps
verdicts, round, models and time; the dataset keeps exactly what TRL's DPO trainer reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from hysem_assets.qa.drafts import render_claims, render_prompt
from hysem_assets.qa.loop import LoopResult
from hysem_assets.qa.sources import ContextChunk

DPO_KEYS = ("prompt", "chosen", "rejected")


def preference_records(
    *,
    query: str,
    question: str,
    context: list[ContextChunk],
    loop: LoopResult,
    generator_model: str,
    auditor_model: str,
) -> list[dict[str, Any]]:
    """One record per rejected draft of ``loop``, paired with its final answer."""
    final = loop.final
    chosen = render_claims(final.draft)
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
            "rejected_round": rejected.number,
            "chosen_round": final.number,
            "generator_model": generator_model,
            "auditor_model": auditor_model,
            "logged_at": logged_at,
        }
        for rejected in loop.rejected
        if render_claims(rejected.draft) != chosen
    ]


def dpo_rows(records: Iterable[Mapping[str, Any]], *, approved_only: bool = True) -> list[dict[str, str]]:
    """``prompt``/``chosen``/``rejected`` rows; by default only pairs whose chosen answer was approved."""
    return [
        {key: str(record[key]) for key in DPO_KEYS}
        for record in records
        if record.get("chosen_approved", True) or not approved_only
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
