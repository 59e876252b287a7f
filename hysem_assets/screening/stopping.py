"""When to stop screening: a statistical stopping rule and the recall it guarantees.

The rule is the hypergeometric test of Callaghan and Müller-Hansen (Systematic Reviews 9,
273, 2020). Take the last ``k`` records screened, and suppose ``K`` relevant records still
hide among the unscreened ones. Had those ``k`` records been drawn at random from themselves
plus the unscreened, finding as few relevant records among them as the reviewer did would
have probability ``P(X <= found in the last k)`` under a hypergeometric law. When that is
below ``1 - confidence`` for some ``k``, ``K`` is rejected. Active learning screens the
likeliest records first, so the last ``k`` are if anything richer than a random draw and the
test errs on the safe side.

The largest ``K`` no window rejects bounds the relevant records left; recall is at least
``found / (found + K)`` with that confidence, and screening may stop once that bound reaches
the target recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import hypergeom

CONFIDENCE = 0.95
#: Most windows of recent decisions tested per estimate.
WINDOWS = 400


@dataclass(frozen=True)
class StoppingEstimate:
    screened: int
    found: int
    unscreened: int
    #: At most this many relevant records remain unscreened, with ``confidence``.
    remaining_at_most: int
    #: Recall is at least this, with ``confidence`` (0 before any relevant record is found).
    recall_at_least: float
    target_recall: float
    confidence: float

    @property
    def stop(self) -> bool:
        """The rule is met: recall reaches the target with the stated confidence (or nothing is left)."""
        return self.unscreened == 0 or (self.found > 0 and self.recall_at_least >= self.target_recall)

    def as_dict(self) -> dict[str, object]:
        return {
            "screened": self.screened,
            "found": self.found,
            "unscreened": self.unscreened,
            "remaining_at_most": self.remaining_at_most,
            "recall_at_least": round(self.recall_at_least, 4),
            "target_recall": self.target_recall,
            "confidence": self.confidence,
            "stop": self.stop,
        }


def estimate_recall(
    labels_in_order: Sequence[int],
    unscreened: int,
    target_recall: float,
    confidence: float = CONFIDENCE,
) -> StoppingEstimate:
    """The bound on relevant records left after screening ``labels_in_order`` (1 relevant, 0 not,
    oldest first) with ``unscreened`` records still to screen."""
    labels = np.asarray(labels_in_order, dtype=int)
    found = int(labels.sum())
    remaining = _remaining_at_most(labels, unscreened, 1 - confidence)
    return StoppingEstimate(
        screened=len(labels),
        found=found,
        unscreened=unscreened,
        remaining_at_most=remaining,
        recall_at_least=found / (found + remaining) if found else 0.0,
        target_recall=target_recall,
        confidence=confidence,
    )


def _remaining_at_most(labels: np.ndarray, unscreened: int, alpha: float) -> int:
    """The largest count of relevant unscreened records that no window of recent decisions rejects."""
    if unscreened == 0:
        return 0
    if not len(labels):
        return unscreened
    # The last k decisions, for k on a geometric grid of WINDOWS sizes: every k up to a few dozen,
    # then fewer (a window left out only weakens the bound, and keeps each estimate fast).
    windows = np.unique(np.geomspace(1, len(labels), WINDOWS).round().astype(int))
    found_in = np.cumsum(labels[::-1])[windows - 1]

    def plausible(hidden: int) -> bool:
        p = hypergeom.cdf(found_in, unscreened + windows, found_in + hidden, windows)
        return bool(p.min() >= alpha)

    low, high = 0, unscreened  # plausible(0) always holds; find the largest plausible count
    if plausible(high):
        return high
    while high - low > 1:
        middle = (low + high) // 2
        if plausible(middle):
            low = middle
        else:
            high = middle
    return low
