"""Training the span tagger: the packaged MiniLM fine-tuned as a multi-label token classifier.

Each word piece gets one sigmoid output per class, so an abstract labelled for interventions
only still teaches interventions: the loss leaves out the classes a document's labels do not
cover (:attr:`~hysem_assets.pico.corpus.Document.known`). Words are split into word pieces
by the packaged tokenizer; every piece of a labelled word carries its label, and a window
holds whole sentences up to :data:`WINDOW` pieces, as :mod:`hysem_assets.pico.tagger` reads
text. The run is seeded, single-process and CPU-only, so the same data gives the same weights
on the same library versions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import AutoModel

from hysem_assets.embedding.fine_tuning import Schedule, fine_tune, save, seeded
from hysem_assets.embedding.minilm import wordpiece_tokenizer
from hysem_assets.pico.corpus import CLASSES, Document
from hysem_assets.pico.tagger import WINDOW

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainingSettings(Schedule):
    """What a training run depends on besides the data: the loop's defaults."""


@dataclass
class Window:
    """Word-piece ids of a window, per-piece targets (pieces x classes) and which classes count in the loss."""

    ids: list[int]
    targets: np.ndarray
    known: tuple[bool, ...]


def windows(document: Document, tokenizer: Tokenizer, window: int = WINDOW) -> list[Window]:
    """``document`` cut into windows of whole sentences (a sentence longer than a window is cut anywhere)."""
    pieces: list[list[int]] = [tokenizer.encode(word, add_special_tokens=False).ids or [100] for word in document.words]
    room = window - 2
    result: list[Window] = []
    ids: list[int] = []
    targets: list[list[float]] = []

    def close() -> None:
        if ids:
            target = np.array([[0.0] * len(CLASSES), *targets, [0.0] * len(CLASSES)], dtype=np.float32)
            result.append(Window([101, *ids, 102], target, document.known))
        ids.clear()
        targets.clear()

    sentence_start = 0
    for index, word in enumerate(document.words):
        word_pieces = pieces[index]
        if len(ids) + len(word_pieces) > room:
            # move the open sentence to the next window, unless it alone fills one
            keep = sum(len(pieces[i]) for i in range(sentence_start, index))
            carried = (ids[-keep:], targets[-keep:]) if 0 < keep < len(ids) else ([], [])
            if carried[0]:
                del ids[-keep:], targets[-keep:]
            close()
            ids.extend(carried[0])
            targets.extend(carried[1])
        label = [float(document.tags[c][index]) for c in range(len(CLASSES))]
        ids.extend(word_pieces)
        targets.extend([label] * len(word_pieces))
        if word in (".", "?", "!"):
            sentence_start = index + 1
    close()
    return result


def train(
    documents: Sequence[Document],
    base: Path,
    target: Path,
    settings: TrainingSettings = TrainingSettings(),
    progress: Callable[[str], None] = log.info,
) -> Path:
    """Fine-tune the model in ``base`` on ``documents``; save it (transformers format) to ``target``."""
    seeded(settings)

    tokenizer = wordpiece_tokenizer(base / "tokenizer.json")
    data = [w for document in documents for w in windows(document, tokenizer)]
    model = TokenTagger(AutoModel.from_pretrained(base, local_files_only=True, attn_implementation="eager"))
    steps = fine_tune(
        model,
        data,
        settings,
        lambda w: len(w.ids) // 32,
        lambda batch: model.loss(*_collate(batch)),
        progress,
    )
    return save(model, target, {**asdict(settings), "windows": len(data), "documents": len(documents), "steps": steps})


def _collate(batch: Sequence[Window]) -> tuple[torch.Tensor, ...]:
    width = max(len(w.ids) for w in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    targets = torch.zeros((len(batch), width, len(CLASSES)))
    weights = torch.zeros((len(batch), width, len(CLASSES)))
    for row, w in enumerate(batch):
        n = len(w.ids)
        ids[row, :n] = torch.tensor(w.ids)
        mask[row, :n] = 1
        targets[row, :n] = torch.from_numpy(w.targets)
        weights[row, 1 : n - 1] = torch.tensor([float(k) for k in w.known])
    return ids, mask, targets, weights


class TokenTagger(torch.nn.Module):
    """The encoder with one linear layer giving a logit per class and word piece."""

    def __init__(self, encoder: torch.nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.dropout = torch.nn.Dropout(0.1)
        self.head = torch.nn.Linear(encoder.config.hidden_size, len(CLASSES))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(self.dropout(hidden))

    def loss(self, ids: torch.Tensor, mask: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """Binary cross-entropy per class and piece, over the pieces and classes ``weights`` keeps."""
        each = torch.nn.functional.binary_cross_entropy_with_logits(self(ids, mask), targets, reduction="none")
        return (each * weights).sum() / weights.sum().clamp(min=1.0)
