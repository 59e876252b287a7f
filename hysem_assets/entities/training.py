"""Training the entity model: the packaged MiniLM fine-tuned with three heads on one encoder.

One linear layer over each word piece gives the scientific-entity BIO tags (SciERC's six
types), the disease BIO tags (NCBI-disease) and two relation projections. A relation between
two marked entities is scored from the pieces that open their markers (``[[`` and ``<<``): the
first projection of the one plus the second of the other, a linear layer over the two pieces
side by side, written so the exported graph stays one token classifier. A word's tag is
learned at its first piece. Each corpus counts only in its own head's loss; SciERC, the
smallest, is read most often. The scientific abstracts also teach the disease head that their
entities are no diseases (computer-science abstracts name none): without it, the disease head
learned to mark whatever the shared encoder reads as an entity. Seeded, single-process, CPU-only: the same data gives the
same weights on the same library versions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from tokenizers import Tokenizer
from transformers import AutoModel

from hysem_assets.embedding.fine_tuning import Schedule, fine_tune, save, seeded
from hysem_assets.embedding.minilm import wordpiece_tokenizer
from hysem_assets.entities.corpus import DISEASE, RELATIONS, SCIENTIFIC, Pair, Sentence, tag_names
from hysem_assets.entities.tagger import marked_input
from hysem_assets.entities.windows import pieces, windows

log = logging.getLogger(__name__)

#: The heads, in the order of the model's outputs: (name, outputs).
HEADS = (
    ("scientific", len(tag_names(SCIENTIFIC))),
    ("disease", len(tag_names(DISEASE))),
    ("relation", 2 * len(RELATIONS)),
)
IGNORED = -100


@dataclass(frozen=True)
class TrainingSettings(Schedule):
    """What a training run depends on besides the data; written beside the weights."""

    epochs: float = 1.0
    batch_size: int = 8
    learning_rate: float = 6e-5
    #: Times each corpus is read: the tagging corpora have a window per abstract, the relation corpus an item per
    #: pair, so per item read the smaller tagging corpora need more passes.
    scientific_passes: int = 10
    disease_passes: int = 6
    relation_passes: int = 4


@dataclass
class Item:
    """One input: word-piece ids, its head, per-piece tag targets (tagging) or marker pieces and label (relation)."""

    ids: list[int]
    head: int
    targets: list[int] | None = None
    markers: tuple[int, int] = (0, 0)
    label: int = IGNORED


def tagging_items(sentences: Sequence[Sentence], head: int, tokenizer: Tokenizer) -> list[Item]:
    """``sentences`` as windows with a target at each word's first piece."""
    tags = tag_names(SCIENTIFIC if head == 0 else DISEASE)
    encoded = [pieces(tokenizer, s.words) for s in sentences]
    items = []
    for window in windows(encoded, [s.document for s in sentences]):
        targets = [IGNORED]
        for index, first, end in window.parts:
            owners = encoded[index].words
            for at in range(first, end):
                opens = at == 0 or owners[at] != owners[at - 1]
                targets.append(tags.index(sentences[index].tags[owners[at]]) if opens else IGNORED)
        items.append(Item(window.ids(encoded), head, targets + [IGNORED]))
    return items


def train(
    scientific: Sequence[Sentence],
    disease: Sequence[Sentence],
    pairs: Sequence[Pair],
    base: Path,
    target: Path,
    settings: TrainingSettings = TrainingSettings(),
    progress: Callable[[str], None] = log.info,
) -> Path:
    """Fine-tune the model in ``base`` on the three corpora; save it (transformers format) to ``target``."""
    seeded(settings)
    tokenizer = wordpiece_tokenizer(base / "tokenizer.json")
    data = tagging_items(scientific, 0, tokenizer) * settings.scientific_passes
    data += tagging_items(disease, 1, tokenizer) * settings.disease_passes
    for pair in pairs:
        ids, markers = marked_input(tokenizer, pair.text)
        data += [Item(ids, 2, markers=markers, label=RELATIONS.index(pair.label))] * settings.relation_passes
    model = EntityModel(AutoModel.from_pretrained(base, local_files_only=True, attn_implementation="eager"))
    progress(f"{len(data)} items read: {sum(i.head < 2 for i in data)} windows, {len(pairs)} relations")
    steps = fine_tune(model, data, settings, lambda i: len(i.ids) // 32, lambda b: model.loss(b), progress)
    record = {**asdict(settings), "items": len(data), "steps": steps}
    record |= {"scientific_sentences": len(scientific), "disease_sentences": len(disease), "relations": len(pairs)}
    return save(model, target, record)


class EntityModel(torch.nn.Module):
    """The encoder with one linear layer: every head's outputs for every word piece, side by side."""

    def __init__(self, encoder: torch.nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.dropout = torch.nn.Dropout(0.1)
        self.head = torch.nn.Linear(encoder.config.hidden_size, sum(size for _, size in HEADS))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(self.dropout(hidden))

    def loss(self, batch: Sequence[Item]) -> torch.Tensor:
        """Cross-entropy of each head over the items of its corpus, summed over the heads in the batch."""
        width = max(len(item.ids) for item in batch)
        ids = torch.zeros((len(batch), width), dtype=torch.long)
        for row, item in enumerate(batch):
            ids[row, : len(item.ids)] = torch.tensor(item.ids)
        logits = self(ids, (ids != 0).long())
        total = logits.new_zeros(())
        start = 0
        for head, (_, size) in enumerate(HEADS):
            rows = [row for row, item in enumerate(batch) if item.head == head]
            if head == 1:  # the scientific windows too, every word outside a disease
                rows = [row for row, item in enumerate(batch) if item.head < 2]
            if rows and head < 2:
                targets = torch.full((len(rows), width), IGNORED, dtype=torch.long)
                for at, row in enumerate(rows):
                    own = torch.tensor(batch[row].targets)
                    targets[at, : len(own)] = own if batch[row].head == head else own.clamp(max=0)
                scores = logits[rows, :, start : start + size]
                total = total + torch.nn.functional.cross_entropy(scores.reshape(-1, size), targets.reshape(-1))
            elif rows:
                half = size // 2
                index = torch.tensor(rows)
                first = torch.tensor([batch[row].markers[0] for row in rows])
                second = torch.tensor([batch[row].markers[1] for row in rows])
                scores = logits[index, first, start : start + half] + logits[index, second, start + half : start + size]
                labels = torch.tensor([batch[row].label for row in rows])
                total = total + torch.nn.functional.cross_entropy(scores, labels)
            start += size
        return total
