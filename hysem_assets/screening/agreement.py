"""How far two reviewers agree: Cohen's kappa over the records both decided at a stage.

Kappa is computed on what the conflicts are about: whether a work goes on (included or
"maybe") or not (excluded), so a kappa of 1 means no conflict and every conflict lowers it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from hysem_assets.screening.decisions import Votes, goes_on


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters' labels on the same items: (observed - chance agreement) / (1 - chance).
    NaN when chance agreement is certain (both gave one and the same label throughout), as scikit-learn has it."""
    if len(first) != len(second) or not first:
        raise ValueError(f"kappa needs two equally long, non-empty label lists, not {len(first)} and {len(second)}")
    count = len(first)
    observed = sum(a == b for a, b in zip(first, second)) / count
    firsts, seconds = Counter(first), Counter(second)
    chance = sum(firsts[label] * seconds[label] for label in firsts) / count**2
    return float("nan") if chance == 1 else (observed - chance) / (1 - chance)


@dataclass(frozen=True)
class Agreement:
    """Two reviewers' agreement at one stage."""

    reviewers: tuple[str, str]
    #: The records both decided, which kappa is computed over.
    records: int
    #: None when undefined: both always gave the same single verdict.
    kappa: float | None
    #: The records they disagree on (resolved or not).
    disagreements: int

    @property
    def said(self) -> str:
        """The agreement in words."""
        kappa = "undefined (one verdict throughout)" if self.kappa is None else self.kappa
        first, second = self.reviewers
        return (
            f"Cohen's kappa {kappa} between {first} and {second} over the {self.records:,} records both decided, "
            f"{self.disagreements:,} of them in disagreement"
        )

    def as_dict(self) -> dict:
        return {
            "reviewers": list(self.reviewers),
            "records": self.records,
            "kappa": self.kappa,
            "disagreements": self.disagreements,
        }


def stage_agreement(votes: Votes) -> Agreement | None:
    """Cohen's kappa of the two reviewers at a stage on the records both decided (of three or more, the two
    who decided most records in common); None with fewer than two reviewers or no record decided by both."""
    names = list(votes.reviewers)
    pairs = [(a, b) for k, a in enumerate(names) for b in names[k + 1 :]]
    if not pairs:
        return None
    common = {pair: [r for r in votes.reviewers[pair[0]] if r in votes.reviewers[pair[1]]] for pair in pairs}
    pair = max(pairs, key=lambda p: len(common[p]))
    records = common[pair]
    if not records:
        return None
    first = [goes_on(votes.reviewers[pair[0]][record]) for record in records]
    second = [goes_on(votes.reviewers[pair[1]][record]) for record in records]
    kappa = cohen_kappa(first, second)
    disagreeing = sum(a != b for a, b in zip(first, second))
    return Agreement(pair, len(records), None if math.isnan(kappa) else round(kappa, 4), disagreeing)
