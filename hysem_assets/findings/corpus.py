"""Evidence Inference as the shared folder holds it: prompts, doctors' labels and evidence, article texts.

A prompt asks how an intervention compared with a comparator on an outcome in one article;
several doctors may answer it, each with a label and the evidence span they read (character
offsets into ``txt/PMC<id>.txt``). Answers marked invalid are left out; a prompt's label is
the doctors' majority, ties going to "no significant difference" (a tie is a doubt about a
difference). Splits are by article, so no article's sentences are both trained on and scored.
"""

from __future__ import annotations

import csv
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hysem_assets.findings.schema import DECREASED, DIRECTIONS, INCREASED, NO_DIFFERENCE

#: The corpus' label codes.
CODES = {1: INCREASED, -1: DECREASED, 0: NO_DIFFERENCE}
#: Columns a prompts file must have (the corpus' own names).
PROMPT_COLUMNS = ("PromptID", "PMCID", "Outcome", "Intervention", "Comparator")


@dataclass(frozen=True)
class Prompt:
    """One comparison to judge in one article."""

    prompt_id: str
    pmcid: str
    intervention: str
    comparator: str
    outcome: str


@dataclass(frozen=True)
class Labelled:
    """A prompt with the doctors' label and the character spans of the evidence they cited, each with its own label."""

    prompt: Prompt
    label: str
    evidence: tuple[tuple[int, int, str], ...]


def read_prompts(path: Path) -> list[Prompt]:
    """The prompts of a CSV in the corpus' columns; a missing column is refused, naming the file."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in PROMPT_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}: no column {', '.join(missing)} (a prompts file has {', '.join(PROMPT_COLUMNS)})")
        return [
            Prompt(
                row["PromptID"],
                row["PMCID"].removeprefix("PMC"),
                row["Intervention"],
                row["Comparator"],
                row["Outcome"],
            )
            for row in reader
        ]


def labelled(folder: Path) -> list[Labelled]:
    """Every prompt of ``folder`` that has at least one valid answer, with its label and evidence spans."""
    prompts = {p.prompt_id: p for p in read_prompts(folder / "prompts.csv")}
    answers: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    with (folder / "annotations.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["Valid Label"] != "True" or row["PromptID"] not in prompts:
                continue
            answers[row["PromptID"]].append(
                (int(float(row["Evidence Start"])), int(float(row["Evidence End"])), CODES[int(row["Label Code"])])
            )
    return [
        Labelled(prompts[prompt_id], majority(label for _, _, label in spans), tuple(spans))
        for prompt_id, spans in answers.items()
    ]


def majority(labels: Iterable[str]) -> str:
    """The most frequent label; a tie is no significant difference, else the first of :data:`DIRECTIONS` tied."""
    counts = Counter(labels)
    best = max(counts.values())
    tied = [label for label in DIRECTIONS if counts[label] == best]
    return NO_DIFFERENCE if len(tied) > 1 and NO_DIFFERENCE in tied else tied[0]


def split(items: Sequence[Labelled], share: float, seed: int) -> tuple[list[Labelled], list[Labelled]]:
    """``items`` cut by article: those of a ``share`` of the articles (drawn with ``seed``) apart."""
    articles = sorted({item.prompt.pmcid for item in items})
    apart = set(random.Random(seed).sample(articles, round(len(articles) * share)))
    return [i for i in items if i.prompt.pmcid not in apart], [i for i in items if i.prompt.pmcid in apart]


def article(folder: Path, pmcid: str) -> str:
    """The text of ``PMC<pmcid>.txt`` in ``folder``."""
    return (folder / f"PMC{pmcid}.txt").read_text(encoding="utf-8", errors="replace")
