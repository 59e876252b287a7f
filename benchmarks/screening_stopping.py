"""When screening may stop, and where it starts: the stopping rule and the criteria ranking on real reviews.

Every CSV of ``../shared/realdata/screening_asreview`` (reviews whose title and abstract
decisions were recorded) is screened twice over.

1. The stopping rule (``hysem_assets.screening.stopping``). From the same priors as
   ``benchmarks/screening.py`` (one included and one excluded record, drawn per seed),
   hysem's ranker (default settings) screens the highest-ranked record, the recorded decision
   answers, and the ranker retrains, as ``simulate_review`` does, but without stopping at 95%
   recall: after every decision, as the page does, the rule is asked, on all decisions so
   far (priors first), whether recall is at least 95% with 95% confidence, and screening stops
   when it says so (or when nothing is left). Reported per run and per review: the share of
   the records screened when it stopped, the true recall then (included records found of all
   included ones), the rule's bound ``recall_at_least`` then, and for reference the share
   screened when true recall first reached 95%. Beside it, in the same runs, a plain rule
   common in practice: stop after 50 exclusions in a row (``STREAK``). Counts here are of the
   whole review, priors included, as a reviewer sees them (``simulation.py``'s WSS leaves the
   priors aside).
2. Ranking before any decision. Each review gets one short set of inclusion criteria, written
   from the review's published title alone, as a protocol's author would, not tuned on the
   records (``CRITERIA``). All records are ranked once by ``criteria_relevance`` and, as a
   plain baseline, by BM25 of the same text (``bm25s``, English stopwords, default
   parameters); reported is the recall after screening the first 10% of the records in that
   fixed order, beside random order's expected recall (the share screened, about 0.10).

    python benchmarks/screening_stopping.py [--data DIR] [--seeds 3]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np
from tabulate import tabulate

from hysem_assets.screening.criteria import criteria_relevance
from hysem_assets.screening.ranker import RankerSettings, active_ranker, featurize, record_text
from hysem_assets.screening.simulation import draw_priors, read_dataset
from hysem_assets.screening.stopping import CONFIDENCE, estimate_recall
from hysem_assets.settings.profile import ScreeningSettings

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "realdata" / "screening_asreview"
TARGET_RECALL = ScreeningSettings().target_recall
SCREENED_SHARE = 0.10
#: The plain baseline rule: stop after this many exclusions in a row (a heuristic common in practice).
STREAK = 50

#: Inclusion criteria per review, in plain words from the review's published title only: the
#: Drug Effectiveness Review Project's drug class reviews behind Cohen et al. 2006 (JAMIA), and
#: Nagtegaal et al. 2019, "Nudging healthcare professionals towards evidence-based medicine:
#: a systematic scoping review" (Journal of Behavioral Public Administration).
CRITERIA = {
    "Cohen_2006_ADHD": ["Pharmacologic treatments for attention deficit hyperactivity disorder (ADHD): drugs for ADHD"],
    "Cohen_2006_ProtonPumpInhibitors": ["Proton pump inhibitors: drug treatment with a proton pump inhibitor"],
    "Nagtegaal_2019": ["Nudging healthcare professionals towards evidence-based medicine: nudges aimed at clinicians"],
}


@dataclass(frozen=True)
class Stopped:
    """One screening run: when the rule stopped, what it claimed, and what was true."""

    screened_at_stop: float  # share of all records screened (priors included)
    recall_at_stop: float  # included records found of all included records
    recall_at_least: float  # the rule's bound at that point
    screened_at_target: float  # share screened when true recall first reached the target
    screened_at_streak: float  # the plain baseline: share screened at the first STREAK exclusions in a row
    recall_at_streak: float  # true recall then (nan if no such streak came before the rule stopped)


def screen_until_rule(records, labels: np.ndarray, priors: list[int]) -> Stopped:
    """Active-learning screening from ``priors`` until the stopping rule is met; if true recall is
    still under the target then, screening goes on (unreported to the rule) until it is reached."""
    rank = active_ranker(records, RankerSettings())
    needed = math.ceil(TARGET_RECALL * labels.sum())
    screened = list(priors)
    pool = np.ones(len(labels), dtype=bool)
    pool[screened] = False
    stop = target = None  # (screened, found, bound) when the rule is met; screened when the target is reached
    streak, streak_stop = 0, (math.nan, math.nan)
    while True:
        found = int(labels[screened].sum())
        streak = 0 if labels[screened[-1]] else streak + 1
        if streak == STREAK and math.isnan(streak_stop[0]):
            streak_stop = (len(screened) / len(labels), found / labels.sum())
        if stop is None:  # asked after every decision, as the page and the asset do
            estimate = estimate_recall(labels[screened], int(pool.sum()), TARGET_RECALL, CONFIDENCE)
            if estimate.stop:
                stop = (len(screened), found, estimate.recall_at_least)
        if target is None and found >= needed:
            target = len(screened)
        if stop is not None and target is not None:
            break
        scores = rank(np.array(screened), labels[screened])
        candidates = np.flatnonzero(pool)
        best = int(candidates[np.argmax(scores[candidates])])
        screened.append(best)
        pool[best] = False
    count, found, bound = stop
    return Stopped(count / len(labels), float(found / labels.sum()), bound, target / len(labels), *streak_stop)


def recall_in_first(order: np.ndarray, labels: np.ndarray, share: float = SCREENED_SHARE) -> float:
    """Recall after screening the first ``share`` of the records in ``order``."""
    return float(labels[order[: math.ceil(share * len(labels))]].sum() / labels.sum())


def bm25_scores(texts: list[str], query: str) -> np.ndarray:
    """BM25 of ``query`` against every record (bm25s, English stopwords, default parameters)."""
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False), show_progress=False)
    return retriever.get_scores(bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)[0])


def ranked(scores: np.ndarray) -> np.ndarray:
    """Positions, highest score first (ties in file order)."""
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seeds", type=int, default=3, help="priors drawn per review")
    args = parser.parse_args(argv)
    datasets = sorted(args.data.glob("*.csv"))
    if not datasets:
        print(f"no labelled reviews under {args.data}", file=sys.stderr)
        return 1
    runs: dict[str, list[Stopped]] = {}
    first: dict[str, tuple[float, float, float]] = {}
    seconds = {"stopping rule": 0.0, "criteria ranking": 0.0, "BM25": 0.0}
    for dataset in datasets:
        frame = read_dataset(dataset)
        labels = frame["label_included"].to_numpy()
        texts = [record_text(title, abstract) for title, abstract in zip(frame["title"], frame["abstract"])]
        started = time.perf_counter()
        records = featurize(texts)
        runs[dataset.stem] = [
            screen_until_rule(records, labels, draw_priors(labels, 1, 1, s)) for s in range(args.seeds)
        ]
        seconds["stopping rule"] += time.perf_counter() - started
        if dataset.stem in CRITERIA:
            criteria = CRITERIA[dataset.stem]
            started = time.perf_counter()
            ours = recall_in_first(ranked(criteria_relevance(records, criteria)), labels)
            seconds["criteria ranking"] += time.perf_counter() - started
            started = time.perf_counter()
            bm25 = recall_in_first(ranked(bm25_scores(texts, " ".join(criteria))), labels)
            seconds["BM25"] += time.perf_counter() - started
            first[dataset.stem] = (ours, bm25, math.ceil(SCREENED_SHARE * len(labels)) / len(labels))

    table = {"tablefmt": "github", "floatfmt": ".3f"}
    measures = [
        "screened at stop", "true recall at stop", "rule's recall_at_least", "screened at 95% recall",
        f"{STREAK} in a row: screened", f"{STREAK} in a row: recall",
    ]  # fmt: skip
    print(f"\nStopping rule (target recall {TARGET_RECALL}, confidence {CONFIDENCE}), one run per prior draw:\n")
    rows = [[name, seed, *_cells(run)] for name, stopped in runs.items() for seed, run in enumerate(stopped)]
    print(tabulate(rows, headers=["review", "seed", *measures], **table))
    rows = [[name, *_cells(_mean(stopped)), *_worst(stopped)] for name, stopped in runs.items()]
    every = [run for stopped in runs.values() for run in stopped]
    rows.append(
        ["mean (of the reviews)", *_cells(_mean([_mean(stopped) for stopped in runs.values()])), *_worst(every)]
    )
    print(f"\nPer review, mean of {args.seeds} prior draw(s) (last two columns: over all runs in the mean row):\n")
    print(tabulate(rows, headers=["review", *measures, "lowest true recall", "runs at target"], **table))
    if first:
        rows = [[name, *values] for name, values in first.items()]
        rows.append(["mean (of the reviews)", *(statistics.fmean(v) for v in zip(*first.values()))])
        print(f"\nRanking before any decision: recall after screening {SCREENED_SHARE:.0%} of the records:\n")
        print(tabulate(rows, headers=["review", "criteria_relevance", "BM25 (bm25s)", "random (expected)"], **table))
        print("\ncriteria: " + "; ".join(f"{name}: {' / '.join(CRITERIA[name])}" for name in first))
    print("\nseconds: " + ", ".join(f"{what} {value:.1f}" for what, value in seconds.items()))
    return 0


def _worst(runs: list[Stopped]) -> list:
    """The lowest true recall at the stop, and how many runs stopped at or above the target."""
    reached = sum(run.recall_at_stop >= TARGET_RECALL for run in runs)
    return [min(run.recall_at_stop for run in runs), f"{reached}/{len(runs)}"]


def _cells(run: Stopped) -> list[float]:
    return list(vars(run).values())


def _mean(runs: list[Stopped]) -> Stopped:
    """Each measure averaged over ``runs``."""
    return Stopped(*(statistics.fmean(values) for values in zip(*(vars(run).values() for run in runs))))


if __name__ == "__main__":
    sys.exit(main())
