"""Scoring the findings model as Evidence Inference scores it: per prompt, the label and the evidence.

Macro-F1 over the three labels is the task's measure; the evidence hit rate is the share of
prompts whose evidence sentence overlaps a span a doctor cited.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from hysem_assets.findings.candidates import sentences
from hysem_assets.findings.classifier import Comparison, FindingsModel, Judgement
from hysem_assets.findings.corpus import Labelled, Prompt, article
from hysem_assets.findings.schema import DIRECTIONS


def judged(
    model: FindingsModel,
    prompts: Sequence[Prompt],
    texts: Path,
    missing: Callable[[Prompt], None] | None = None,
) -> dict[str, Judgement | None]:
    """Each prompt's judgement from its article in ``texts``, articles read once; a prompt whose article file
    is missing is handed to ``missing`` (default: the error propagates) and judged no further."""
    by_article: dict[str, list[Prompt]] = defaultdict(list)
    for prompt in prompts:
        by_article[prompt.pmcid].append(prompt)
    found: dict[str, Judgement | None] = {}
    for pmcid, asked in by_article.items():
        try:
            text = article(texts, pmcid)
        except FileNotFoundError:
            if missing is None:
                raise
            for prompt in asked:
                missing(prompt)
            continue
        comparisons = [Comparison(p.intervention, p.comparator, p.outcome) for p in asked]
        for prompt, judgement in zip(asked, model.judge(comparisons, sentences(text))):
            found[prompt.prompt_id] = judgement
    return found


def label_scores(gold: Sequence[str], predicted: Sequence[str]) -> dict:
    """Precision, recall and F1 per label, and their macro-F1."""
    per_label = {}
    for label in DIRECTIONS:
        hits = sum(g == p == label for g, p in zip(gold, predicted))
        said = sum(p == label for p in predicted)
        true = sum(g == label for g in gold)
        precision = hits / said if said else 0.0
        recall = hits / true if true else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_label[label] = {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}
    macro = sum(scores["f1"] for scores in per_label.values()) / len(DIRECTIONS)
    return {"macro_f1": round(macro, 4), "labels": per_label}


def scored(model: FindingsModel, items: Sequence[Labelled], texts: Path) -> dict:
    """Macro-F1, per-label scores, evidence hit rate and speed of ``model`` on ``items``."""
    started = time.monotonic()
    found = judged(model, [item.prompt for item in items], texts)
    seconds = time.monotonic() - started
    gold, predicted, hits = [], [], 0
    for item in items:
        judgement = found[item.prompt.prompt_id]
        gold.append(item.label)
        predicted.append(judgement.direction if judgement else DIRECTIONS[2])
        if judgement and any(
            judgement.evidence.start < end and start < judgement.evidence.end for start, end, _ in item.evidence
        ):
            hits += 1
    return {
        **label_scores(gold, predicted),
        "evidence_hit_rate": round(hits / max(1, len(items)), 4),
        "prompts": len(items),
        "articles": len({item.prompt.pmcid for item in items}),
        "prompts_per_second": round(len(items) / max(seconds, 1e-9), 2),
    }
