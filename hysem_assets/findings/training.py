"""Training the findings model: the packaged MiniLM fine-tuned twice to read a comparison beside one sentence.

Both parts read a pair, the comparison ("outcome: intervention versus comparator") and a
sentence of the article. The **evidence** part gives four probabilities: the sentence states
no result of this comparison, or a result of each direction; the evidence is the sentence least
likely to state none. Its pairs are the doctors' evidence sentences (each with the label of the
doctors who cited it, and again with the arms swapped and the direction mirrored) and, as
"no result", the sentences that share most words with the comparison but were not cited (the
ones the first pass hands the model) plus a few drawn at random. The **direction** part reads
only evidence sentences and gives the three directions; its pairs are the doctors' evidence
sentences as the text has them, arms unswapped. A part trained for both jobs learnt directions
poorly: given the doctors' own evidence, the evidence part's directions scored macro-F1 0.62 on
the development split, the direction part's 0.75, and "significantly increased" most of all
(recall 0.29 against 0.64): the mirrored pairs, which teach the evidence part that a sentence
about either arm is evidence, take from it the wording that says which way a result went.
Seeded, single-process and CPU-only.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from tokenizers import Tokenizer
from transformers import AutoModel

from hysem_assets.embedding.fine_tuning import Schedule, fine_tune, save, seeded
from hysem_assets.findings.candidates import Sentence, ranked, sentences
from hysem_assets.findings.corpus import Labelled, article
from hysem_assets.findings.pairs import CANDIDATES, OUTPUTS, comparison, encode
from hysem_assets.findings.schema import DECREASED, DIRECTIONS, INCREASED

log = logging.getLogger(__name__)

_MIRRORED = {INCREASED: DECREASED, DECREASED: INCREASED}


@dataclass(frozen=True)
class TrainingSettings(Schedule):
    """What a training run depends on besides the data; written beside the weights."""

    epochs: float = 2.0
    batch_size: int = 32
    learning_rate: float = 5e-5
    hard_negatives: int = 6
    random_negatives: int = 2


#: The two parts' settings: the direction part has fewer, shorter pairs and takes smaller batches for longer.
EVIDENCE = TrainingSettings()
DIRECTION = TrainingSettings(epochs=3.0, batch_size=16, hard_negatives=0, random_negatives=0)


def cited(item: Labelled, article_sentences: Sequence[Sentence]) -> dict[int, str]:
    """Index of each sentence a doctor's evidence overlaps, with the label most of its citing doctors gave."""
    labels: dict[int, list[str]] = {}
    for start, end, label in item.evidence:
        for index, sentence in enumerate(article_sentences):
            if sentence.start < end and start < sentence.end:
                labels.setdefault(index, []).append(label)
    return {index: Counter(found).most_common(1)[0][0] for index, found in labels.items()}


def evidence_pairs(
    items: Sequence[Labelled], texts: Path, settings: TrainingSettings, tokenizer: Tokenizer
) -> list[tuple[list[int], int]]:
    """(word-piece ids, index in :data:`OUTPUTS`) of every evidence pair of ``items``; texts read from ``texts``."""
    draw = random.Random(settings.seed)
    read: dict[str, list[Sentence]] = {}
    made: list[tuple[list[int], int]] = []
    for item in items:
        prompt = item.prompt
        found = read.setdefault(prompt.pmcid, sentences(article(texts, prompt.pmcid)))
        gold = cited(item, found)
        first = comparison(prompt.intervention, prompt.comparator, prompt.outcome)
        mirrored = comparison(prompt.comparator, prompt.intervention, prompt.outcome)
        for index, label in gold.items():
            made.append((encode(tokenizer, first, found[index].text), OUTPUTS.index(label)))
            made.append((encode(tokenizer, mirrored, found[index].text), OUTPUTS.index(_MIRRORED.get(label, label))))
        near = [
            i
            for i in ranked(found, prompt.intervention, prompt.comparator, prompt.outcome, CANDIDATES)
            if i not in gold
        ]
        rest = [i for i in range(len(found)) if i not in gold and i not in near]
        chosen = near[: settings.hard_negatives] + draw.sample(rest, min(len(rest), settings.random_negatives))
        made.extend((encode(tokenizer, first, found[i].text), 0) for i in chosen)
    return made


def direction_pairs(items: Sequence[Labelled], texts: Path, tokenizer: Tokenizer) -> list[tuple[list[int], int]]:
    """(word-piece ids, index in :data:`DIRECTIONS`) of each doctor-cited sentence of ``items`` beside its prompt."""
    read: dict[str, list[Sentence]] = {}
    made = []
    for item in items:
        prompt = item.prompt
        found = read.setdefault(prompt.pmcid, sentences(article(texts, prompt.pmcid)))
        first = comparison(prompt.intervention, prompt.comparator, prompt.outcome)
        made.extend(
            (encode(tokenizer, first, found[i].text), DIRECTIONS.index(label))
            for i, label in cited(item, found).items()
        )
    return made


class PairClassifier(torch.nn.Module):
    """The encoder, its pieces' mean (as the packaged MiniLM was trained to pool) and a linear layer of logits."""

    def __init__(self, encoder: torch.nn.Module, outputs: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.dropout = torch.nn.Dropout(0.1)
        self.head = torch.nn.Linear(encoder.config.hidden_size, outputs)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(self.dropout(pooled))


def train(
    data: Sequence[tuple[list[int], int]],
    outputs: Sequence[str],
    base: Path,
    target: Path,
    settings: TrainingSettings,
    progress: Callable[[str], None] = log.info,
) -> Path:
    """Fine-tune the model in ``base`` on ``data`` (pairs with the index of their output in ``outputs``); save it
    (transformers format plus ``head.pt``) to ``target``."""
    seeded(settings)

    progress(f"{len(data)} pairs: {dict(Counter(outputs[label] for _, label in data))}")
    model = PairClassifier(
        AutoModel.from_pretrained(base, local_files_only=True, attn_implementation="eager"), len(outputs)
    )
    steps = fine_tune(
        model,
        data,
        settings,
        lambda pair: len(pair[0]) // 16,
        lambda batch: torch.nn.functional.cross_entropy(
            model(*collate([pair[0] for pair in batch])), torch.tensor([pair[1] for pair in batch])
        ),
        progress,
    )
    return save(model, target, {**asdict(settings), "pairs": len(data), "steps": steps})


def collate(batch: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Ids padded with zeros to the longest, and their attention mask."""
    width = max(len(ids) for ids in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    for row, found in enumerate(batch):
        ids[row, : len(found)] = torch.tensor(found)
    return ids, (ids != 0).long()
