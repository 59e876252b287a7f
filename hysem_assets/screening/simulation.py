"""Screening simulated on a labelled review: the ranker proposes, the recorded decision answers.

A simulation starts from prior decisions (by default one included and one excluded record,
drawn with a seed), then repeatedly retrains the ranker, screens the highest-ranked record not
yet screened and adds its recorded decision. It stops once both measures are known:

- WSS@95, work saved over sampling at 95% recall: the share of records left unscreened when
  95% of the included records (priors aside) have been found, less the 5% that random
  screening would save at that recall;
- recall after screening 10% of the records (priors aside).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hysem_assets.screening.ranker import RankerSettings, active_ranker, featurize, record_text, screening_encoder

#: The columns of a labelled review in ASReview's layout.
COLUMNS = ("record_id", "title", "abstract", "label_included")
RECALL = 0.95
SCREENED_SHARE = 0.10

Ranker = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (labelled positions, their labels) -> scores
Report = Callable[[int, int], None]  # (records screened, records to screen at most)


class DatasetError(ValueError):
    """A labelled review that cannot be simulated; the message says what is wrong and where."""


def read_dataset(path) -> pd.DataFrame:
    """A labelled review in ASReview's layout, checked: the columns there, ids unique, labels 0 or 1."""
    try:
        frame = pd.read_csv(path)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise DatasetError(f"{path}: not a readable CSV file ({exc})") from None
    missing = [column for column in COLUMNS if column not in frame.columns]
    if missing:
        raise DatasetError(f"{path}: no column {', '.join(missing)} (ASReview's layout: {', '.join(COLUMNS)})")
    duplicated = frame["record_id"][frame["record_id"].duplicated()].tolist()
    if duplicated:
        raise DatasetError(f"{path}: record_id {str(duplicated[0])!r} appears more than once")
    labels = pd.to_numeric(frame["label_included"], errors="coerce")
    bad = ~labels.isin([0, 1])
    if bad.any():
        first = frame.index[bad][0]
        raise DatasetError(
            f"{path}: record {str(frame.at[first, 'record_id'])!r} has label_included "
            f"{frame.at[first, 'label_included']!r}; labels must be 0 (excluded) or 1 (included)"
        )
    return frame.assign(label_included=labels.astype(int))


def draw_priors(labels: np.ndarray, included: int, excluded: int, seed: int) -> list[int]:
    """Positions of ``included`` included and ``excluded`` excluded records, drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    pools = {1: np.flatnonzero(labels == 1), 0: np.flatnonzero(labels == 0)}
    for label, wanted in ((1, included), (0, excluded)):
        if wanted < 1 or len(pools[label]) < wanted + (label == 1):
            kind = "included" if label else "excluded"
            raise DatasetError(
                f"{wanted} prior {kind} record(s) asked for, but the review has {len(pools[label])} {kind} "
                f"(priors need at least one of each, and one included record must remain to be found)"
            )
    return [*rng.choice(pools[1], included, replace=False), *rng.choice(pools[0], excluded, replace=False)]


@dataclass(frozen=True)
class Simulation:
    """The screening order a ranker gave after the priors, and the measures it earns."""

    labels: np.ndarray
    priors: list[int]
    order: np.ndarray  # positions screened after the priors, in order (cut once both measures are known)

    @property
    def to_find(self) -> int:
        return int(self.labels.sum() - self.labels[self.priors].sum())

    @property
    def to_screen(self) -> int:
        return len(self.labels) - len(self.priors)

    def wss(self, recall: float = RECALL) -> float:
        found = np.cumsum(self.labels[self.order])
        screened = int(np.argmax(found >= math.ceil(recall * self.to_find))) + 1
        return (self.to_screen - screened) / self.to_screen - (1 - recall)

    def recall_after(self, share: float = SCREENED_SHARE) -> float:
        screened = self.order[: math.ceil(share * self.to_screen)]
        return float(self.labels[screened].sum() / self.to_find)


def simulate(labels: np.ndarray, priors: list[int], rank: Ranker, progress: Report | None = None) -> Simulation:
    """Screen ``labels``' records in the order ``rank`` gives, retrained after every decision;
    ``progress`` hears the records screened and how many there are to screen at most."""
    labels = np.asarray(labels, dtype=int)
    labelled = list(priors)
    pool = np.ones(len(labels), dtype=bool)
    pool[labelled] = False
    order: list[int] = []
    needed = math.ceil(RECALL * (labels.sum() - labels[priors].sum()))
    screen_at_least = math.ceil(SCREENED_SHARE * (len(labels) - len(priors)))
    found = 0
    while pool.any() and (found < needed or len(order) < screen_at_least):
        scores = rank(np.array(labelled), labels[labelled])
        candidates = np.flatnonzero(pool)
        best = int(candidates[np.argmax(scores[candidates])])
        order.append(best)
        labelled.append(best)
        pool[best] = False
        found += labels[best]
        if progress is not None:
            progress(len(order), len(labels) - len(priors))
    return Simulation(labels=labels, priors=list(priors), order=np.array(order, dtype=int))


def simulate_review(
    frame: pd.DataFrame, priors: list[int], settings: RankerSettings | None = None, progress: Report | None = None
) -> Simulation:
    """A labelled review (see :func:`read_dataset`) screened by hysem's ranker from ``priors``."""
    settings = settings or RankerSettings()
    texts = [record_text(title, abstract) for title, abstract in zip(frame["title"], frame["abstract"])]
    records = featurize(texts, screening_encoder() if settings.semantic_weight else None)
    return simulate(frame["label_included"].to_numpy(), priors, active_ranker(records, settings), progress)
