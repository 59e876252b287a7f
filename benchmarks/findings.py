"""Findings on Evidence Inference: the shipped model beside a plain sentence-picker with a TF-IDF classifier.

Reads ../shared/realdata/evidence_inference and scores, on the held-out articles that ``hysem
train findings`` never trains on or chooses by (and, for reference, on the development articles
it chose its rule on), per prompt from the full text with no evidence given:

* the shipped model (``hysem findings classify``'s path): macro-F1, F1 per label, the share of
  prompts whose evidence sentence overlaps a doctor's evidence, and prompts per second on this
  machine (one thread per call, as in the ``findings`` asset);
* the plain baseline of the task's papers, in the same run: the sentence sharing most words with
  the prompt (the same first pass, its top sentence) classified by TF-IDF word and word-pair
  features with logistic regression trained on the training articles' evidence sentences;
* the same baseline classifying the doctors' own evidence sentences (oracle evidence), which
  bounds what a better sentence-picker alone would give it.

    python benchmarks/findings.py [--split held_out|development]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from tabulate import tabulate

from hysem_assets.findings.build import splits
from hysem_assets.findings.candidates import ranked, sentences
from hysem_assets.findings.classifier import load
from hysem_assets.findings.corpus import Labelled, article
from hysem_assets.findings.evaluation import label_scores, scored
from hysem_assets.findings.pairs import comparison
from hysem_assets.findings.schema import DIRECTIONS
from hysem_assets_tests.paths import REALDATA

DATA = REALDATA / "evidence_inference"


def evidence_texts(items: list[Labelled], texts: Path) -> tuple[list[str], list[str]]:
    """The doctors' evidence of each prompt (its first valid span) with the prompt's comparison, and its label."""
    found, labels = [], []
    for item in items:
        text = article(texts, item.prompt.pmcid)
        start, end, label = item.evidence[0]
        prompt = item.prompt
        found.append(f"{comparison(prompt.intervention, prompt.comparator, prompt.outcome)} || {text[start:end]}")
        labels.append(label)
    return found, labels


def baseline(train: list[Labelled], scored_items: list[Labelled], texts: Path) -> tuple[dict, dict]:
    """The TF-IDF baseline from the first pass's top sentence, and from the doctors' evidence."""
    started = time.monotonic()
    model = make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True),
        LogisticRegression(max_iter=2000, C=4.0, random_state=13),
    )
    model.fit(*evidence_texts(train, texts))
    picked, gold, hits = [], [], 0
    for item in scored_items:
        prompt = item.prompt
        found = sentences(article(texts, prompt.pmcid))
        best = found[ranked(found, prompt.intervention, prompt.comparator, prompt.outcome, 1)[0]]
        picked.append(f"{comparison(prompt.intervention, prompt.comparator, prompt.outcome)} || {best.text}")
        gold.append(item.label)
        hits += any(best.start < end and start < best.end for start, end, _ in item.evidence)
    seconds = time.monotonic() - started
    predicted = list(model.predict(picked))
    from_text = {
        **label_scores(gold, predicted),
        "evidence_hit_rate": round(hits / len(scored_items), 4),
        "prompts_per_second": round(len(scored_items) / seconds, 2),
    }
    oracle_texts, oracle_gold = evidence_texts(scored_items, texts)
    oracle = {**label_scores(oracle_gold, list(model.predict(oracle_texts))), "evidence_hit_rate": 1.0}
    return from_text, oracle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("held_out", "development"), default="held_out")
    args = parser.parse_args()
    train, development, held_out = splits(DATA)
    items = held_out if args.split == "held_out" else development
    texts = DATA / "txt"
    print(f"{args.split}: {len(items)} prompts of {len({i.prompt.pmcid for i in items})} articles")
    shipped = scored(load(), items, texts)
    plain, oracle = baseline(train, items, texts)
    rows = [
        ("hysem findings model", shipped),
        ("TF-IDF + LR, first-pass sentence", plain),
        ("TF-IDF + LR, doctors' evidence (oracle)", oracle),
    ]
    print(
        tabulate(
            [
                [
                    name,
                    scores["macro_f1"],
                    *(scores["labels"][label]["f1"] for label in DIRECTIONS),
                    scores["evidence_hit_rate"],
                    scores.get("prompts_per_second", "-"),
                ]
                for name, scores in rows
            ],
            headers=[
                "system",
                "macro-F1",
                "F1 increased",
                "F1 decreased",
                "F1 no difference",
                "evidence hit",
                "prompts/s",
            ],
            tablefmt="github",
        )
    )
    print(f"ratio of macro-F1, model / plain baseline: {shipped['macro_f1'] / max(plain['macro_f1'], 1e-9):.2f}")


if __name__ == "__main__":
    main()
