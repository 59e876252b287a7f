"""``hysem findings classify``: Evidence Inference prompts judged from their articles, one JSON line each.

Prompts come in the corpus' own columns and articles as ``PMC<PMCID>.txt``, as the task is
shared, so a reviewer can check one claim and a benchmark can run the whole set. Every prompt
is answered: one whose article has no sentence at all gets "no significant difference" with
no evidence. A prompt whose article file is missing is named and left out; the others are
still judged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from hysem_assets.findings.classifier import load
from hysem_assets.findings.corpus import Prompt, read_prompts
from hysem_assets.findings.evaluation import judged
from hysem_assets.findings.schema import NO_DIFFERENCE


def classify(
    prompts_file: Path, articles: Path, output: TextIO, progress: Callable[[str], None] = lambda _: None
) -> list[str]:
    """Write a line per prompt of ``prompts_file`` to ``output``; returns one problem line per prompt not judged."""
    prompts = read_prompts(prompts_file)
    problems: list[str] = []

    def missing(prompt: Prompt) -> None:
        problems.append(f"prompt {prompt.prompt_id}: no article {articles / f'PMC{prompt.pmcid}.txt'}")

    progress(f"{len(prompts):,} prompts over {len({p.pmcid for p in prompts}):,} articles")
    found = judged(load(), prompts, articles, missing)
    for prompt in prompts:
        if prompt.prompt_id not in found:
            continue
        judgement = found[prompt.prompt_id]
        line = {
            "PromptID": prompt.prompt_id,
            "label": judgement.direction if judgement else NO_DIFFERENCE,
            "evidence": judgement.evidence.text if judgement else "",
            "confidence": round(judgement.confidence, 4) if judgement else None,
            "section": judgement.evidence.section if judgement else None,
        }
        output.write(json.dumps(line, ensure_ascii=False) + "\n")
    return problems
