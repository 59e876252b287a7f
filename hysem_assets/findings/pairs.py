"""What the findings model reads: a comparison and one sentence, as one pair of word pieces.

Training and run time build pairs with the same functions, so the model never meets a pair
cut or worded otherwise than it learnt from.
"""

from __future__ import annotations

from tokenizers import Tokenizer

from hysem_assets.findings.schema import DIRECTIONS

#: The model's outputs: no result of this comparison, then the three directions.
OUTPUTS = ("no result", *DIRECTIONS)
#: Most word pieces of a pair, [CLS] and both [SEP] included; of the comparison alone.
PAIR_PIECES = 160
COMPARISON_PIECES = 48
#: Sentences the first pass keeps per comparison, at training (negatives) and at run time.
CANDIDATES = 24


def comparison(intervention: str, comparator: str, outcome: str) -> str:
    """The first text of a pair."""
    return f"{' '.join(outcome.split())}: {' '.join(intervention.split())} versus {' '.join(comparator.split())}"


def encode(tokenizer: Tokenizer, first: str, second: str) -> list[int]:
    """Word-piece ids of ``[CLS] first [SEP] second [SEP]``, each part cut to fit :data:`PAIR_PIECES`."""
    head = tokenizer.encode(first, add_special_tokens=False).ids[:COMPARISON_PIECES]
    tail = tokenizer.encode(second, add_special_tokens=False).ids[: PAIR_PIECES - len(head) - 3]
    return [101, *head, 102, *tail, 102]
