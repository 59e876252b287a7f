"""The shipped findings model at run time: ONNX Runtime over the packaged weights, no torch.

:func:`load` opens the two parts in ``model/`` (``evidence.onnx`` and ``direction.onnx``, built
by ``make findings-model``) once each file's sha256 is the one the card (``findings.json``)
records. :meth:`FindingsModel.judge` answers comparisons in one article: the first pass keeps
the sentences that share most words with each comparison
(:func:`~hysem_assets.findings.candidates.ranked`), the evidence part reads each beside the
comparison and the evidence is the sentence least likely to state no result of it; the
direction part then reads that sentence beside the comparison and says which way it went. A
comparison whose best sentence is still more likely to state no result than a result has no
finding in the article.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from hysem_assets.core.filehash import CardMismatch, card_sha256, stamp
from hysem_assets.embedding.minilm import PACKAGE, tokenizer_file, wordpiece_tokenizer
from hysem_assets.findings.candidates import Sentence, ranked
from hysem_assets.findings.pairs import CANDIDATES, comparison, encode
from hysem_assets.findings.schema import DIRECTIONS

#: Where the shipped weights live, and what rebuilds them.
MODEL_DIR = Path(__file__).parent / "model"
#: The two parts' files, by name: what ``findings.json`` records each one's sha256 under.
PARTS = {"evidence": "evidence.onnx", "direction": "direction.onnx"}
CARD_FILE = "findings.json"
REBUILD = "make findings-model"
#: Pairs in one call of the session.
BATCH = 16


class FindingsModelUnavailable(RuntimeError):
    """The weights are missing, unreadable or not the card's; the message names the file and what restores it."""


@dataclass(frozen=True)
class Comparison:
    """What is asked of an article: how the intervention compared with the comparator on the outcome."""

    intervention: str
    comparator: str
    outcome: str


@dataclass(frozen=True)
class Judgement:
    """The model's answer for one comparison: the direction, its probability, and the evidence sentence with
    how likely it is to state this comparison's result at all."""

    direction: str
    confidence: float
    evidence: Sentence
    evidence_score: float

    @property
    def found(self) -> bool:
        """The article states a result of this comparison: its best sentence is likelier a result than not."""
        return self.evidence_score >= 0.5


class FindingsModel:
    """One ONNX Runtime session per part; one thread per call, as the span tagger's."""

    def __init__(self, folder: Path = MODEL_DIR, files: dict[str, str] | None = None, card: dict | None = None) -> None:
        files = files or PARTS
        fix = f"rebuild it with `{REBUILD}`, or reinstall hysem"
        try:
            self.card = card if card is not None else json.loads((folder / CARD_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise FindingsModelUnavailable(
                f"the findings model's card {folder / CARD_FILE} cannot be read ({type(error).__name__}); {fix}"
            ) from None
        recorded = self.card.get("sha256", {})
        hashes = [_checked(folder / files[part], recorded.get(part), fix) for part in PARTS]
        self.evidence, self.direction = (_session(folder / files[part], fix) for part in PARTS)
        words = _checked(
            tokenizer_file(),
            self.card.get("tokenizer_sha256"),
            f"it was trained with another tokenizer: reinstall the {PACKAGE} version it was trained with, "
            f"or rebuild it with `{REBUILD}`",
        )
        self.tokenizer = wordpiece_tokenizer(tokenizer_file())
        #: Names these weights in the ids of caches: new weights, new answers.
        self.version = "-".join(found[:12] for found in [*hashes, words])

    def judge(
        self, comparisons: Sequence[Comparison], article: Sequence[Sentence], keep: int | None = None
    ) -> list[Judgement | None]:
        """Per comparison, the model's judgement from ``article``'s sentences (``None``: the article has none),
        reading the ``keep`` sentences the first pass ranks highest (default :data:`CANDIDATES`)."""
        if not article:
            return [None] * len(comparisons)
        asked = [comparison(c.intervention, c.comparator, c.outcome) for c in comparisons]
        chosen = [ranked(article, c.intervention, c.comparator, c.outcome, keep or CANDIDATES) for c in comparisons]
        evidence = probabilities(
            self.evidence,
            [encode(self.tokenizer, first, article[i].text) for first, indices in zip(asked, chosen) for i in indices],
        )
        best, at = [], 0
        for indices in chosen:
            likely = 1.0 - evidence[at : at + len(indices), 0]
            at += len(indices)
            top = int(np.argmax(likely))
            best.append((article[indices[top]], float(likely[top])))
        directions = probabilities(
            self.direction, [encode(self.tokenizer, first, sentence.text) for first, (sentence, _) in zip(asked, best)]
        )
        return [
            Judgement(DIRECTIONS[int(np.argmax(p))], float(p.max()), sentence, score)
            for p, (sentence, score) in zip(directions, best)
        ]


def _checked(path: Path, expected: str | None, fix: str) -> str:
    try:
        return card_sha256(path, expected, "the findings model", fix)
    except CardMismatch as mismatch:
        raise FindingsModelUnavailable(str(mismatch)) from None
    except OSError as error:
        raise FindingsModelUnavailable(
            f"the findings model cannot be loaded from {path} ({type(error).__name__}); {fix}"
        ) from None


def _session(path: Path, fix: str) -> Any:
    from hysem_assets.embedding.onnx_encoder import single_thread_session

    try:
        return single_thread_session(path)
    except Exception as error:  # onnxruntime raises its own classes for a bad file
        raise FindingsModelUnavailable(
            f"the findings model cannot be loaded from {path} ({type(error).__name__}); {fix}"
        ) from None


def probabilities(session: Any, pairs: Sequence[list[int]]) -> np.ndarray:
    """Softmax over a part's outputs for each pair of word-piece ids, in batches of similar length."""
    found: np.ndarray | None = None
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i]))
    for first in range(0, len(order), BATCH):
        rows = order[first : first + BATCH]
        width = max(len(pairs[i]) for i in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        for row, index in enumerate(rows):
            ids[row, : len(pairs[index])] = pairs[index]
        (logits,) = session.run(None, {"input_ids": ids, "attention_mask": (ids != 0).astype(np.int64)})
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        if found is None:
            found = np.zeros((len(pairs), logits.shape[1]), dtype=np.float32)
        found[rows] = shifted / shifted.sum(axis=1, keepdims=True)
    return found if found is not None else np.zeros((0, 0), dtype=np.float32)


def load(folder: Path | None = None) -> FindingsModel:
    """The process' model of ``folder`` (default :data:`MODEL_DIR`): loaded and checked on first use, and again
    only once its weights, card or tokenizer change on disk."""
    where = Path(folder or MODEL_DIR)
    return _load(
        str(where), *(stamp(where / name) for name in PARTS.values()), stamp(where / CARD_FILE), stamp(tokenizer_file())
    )


@lru_cache(maxsize=2)
def _load(folder: str, *versions: object) -> FindingsModel:
    return FindingsModel(Path(folder))
