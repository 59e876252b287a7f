"""Scores of the entity model as its commands give them: entity-level and relation F1 on labelled files.

An entity counts when its words and its type are the gold one's exactly (the CoNLL shared
tasks' measure). Each corpus is scored over its own types; ``all types`` also counts as wrong
every entity of another corpus' types the model puts in that corpus' text, which is what a
reader of the merged output meets.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from hysem_assets.entities.corpus import RELATIONS, Pair, Sentence, spans


def _prf(true: int, predicted: int, gold: int) -> dict[str, float]:
    precision = true / predicted if predicted else 0.0
    recall = true / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def entity_scores(predicted: Sequence[Sequence[str]], gold: Sequence[Sentence], types: Sequence[str]) -> dict:
    """Per type and over ``types`` (micro), exact-span entity scores of ``predicted`` tags against ``gold``."""
    true, found, wanted, foreign = Counter(), Counter(), Counter(), 0
    for tags, sentence in zip(predicted, gold, strict=True):
        mine, theirs = spans(tags), spans(sentence.tags)
        for span in mine:
            if span[2] in types:
                found[span[2]] += 1
                true[span[2]] += span in theirs
            else:
                foreign += 1
        wanted.update(span[2] for span in theirs)
    scores = {kind: {**_prf(true[kind], found[kind], wanted[kind]), "gold": wanted[kind]} for kind in types}
    total_true, total_found, total_gold = sum(true.values()), sum(found.values()), sum(wanted.values())
    scores["micro"] = _prf(total_true, total_found, total_gold)
    scores["all types"] = {**_prf(total_true, total_found + foreign, total_gold), "other types": foreign}
    return scores


def relation_scores(predicted: Sequence[str], gold: Sequence[Pair]) -> dict:
    """Per label and macro-averaged F1, and accuracy, of ``predicted`` labels against ``gold``."""
    scores = {}
    for label in RELATIONS:
        true = sum(p == label and g.label == label for p, g in zip(predicted, gold, strict=True))
        scores[label] = _prf(true, sum(p == label for p in predicted), sum(g.label == label for g in gold))
    scores["macro"] = {"f1": round(sum(scores[label]["f1"] for label in RELATIONS) / len(RELATIONS), 4)}
    scores["accuracy"] = round(sum(p == g.label for p, g in zip(predicted, gold, strict=True)) / max(1, len(gold)), 4)
    return scores


def timed(function, *args):
    """``function(*args)`` and the seconds it took."""
    started = time.monotonic()
    result = function(*args)
    return result, time.monotonic() - started
