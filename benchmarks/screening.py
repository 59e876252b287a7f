"""Screening by active learning on real labelled reviews: hysem's ranker beside ASReview's default and random order.

Every CSV of ``../shared/realdata/screening_asreview`` (reviews whose title and abstract
decisions were recorded) is screened in simulation: from the same priors (one included and
one excluded record, drawn per seed), each method ranks the records, the recorded decision
answers, and the method retrains. Reported per review and as a mean, for each method:

- WSS@95, work saved over sampling at 95% recall (see ``hysem_assets.screening.simulation``);
- recall after screening 10% of the records.

ASReview's default model (ELAS u4: TF-IDF of words and pairs, a linear SVM, balanced sample
weights) runs through ASReview's own simulation API in its own environment, since it pins
libraries differently from hysem: ``make asreview-venv`` creates ``.venv-asreview`` and
``--asreview-python`` points at another. Random order is the floor.

    python benchmarks/screening.py [--data DIR] [--seeds 3] [--asreview-python PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from tabulate import tabulate

from hysem_assets.screening.simulation import Simulation, draw_priors, read_dataset, simulate_review

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "realdata" / "screening_asreview"
DEFAULT_ASREVIEW = ROOT / ".venv-asreview" / "bin" / "python"

#: Run in ASReview's environment: its default model from the priors given, the screening order as JSON.
ASREVIEW = """
import json, sys
import pandas as pd
from asreview.learner import ActiveLearningCycle
from asreview.models.models import get_ai_config
from asreview.simulation.simulate import Simulate

path, priors = sys.argv[1], [int(k) for k in sys.argv[2].split(",")]
frame = pd.read_csv(path)
data = pd.DataFrame({"title": frame["title"].fillna(""), "abstract": frame["abstract"].fillna("")})
labels = frame["label_included"].astype(int).to_numpy()
simulation = Simulate(data, labels, ActiveLearningCycle.from_meta(get_ai_config()["value"]), print_progress=False)
simulation.label(priors)
simulation.review()
print(json.dumps([int(k) for k in simulation._results["record_id"].tolist()[len(priors):]]))
"""


def asreview_order(python: Path, dataset: Path, priors: list[int]) -> np.ndarray:
    with tempfile.TemporaryDirectory() as scratch:  # ASReview leaves a request cache in its working folder
        done = subprocess.run(
            [str(python), "-c", ASREVIEW, str(dataset.resolve()), ",".join(map(str, priors))],
            capture_output=True,
            text=True,
            check=True,
            cwd=scratch,
        )
    return np.array(json.loads(done.stdout), dtype=int)


def random_order(labels: np.ndarray, priors: list[int], seed: int) -> np.ndarray:
    rest = np.setdiff1d(np.arange(len(labels)), priors)
    return np.random.default_rng(seed).permutation(rest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--seeds", type=int, default=3, help="priors drawn per review")
    parser.add_argument("--asreview-python", type=Path, default=DEFAULT_ASREVIEW)
    args = parser.parse_args(argv)
    datasets = sorted(args.data.glob("*.csv"))
    if not datasets:
        print(f"no labelled reviews under {args.data}", file=sys.stderr)
        return 1
    methods = ["hysem", "random"] + (["ASReview default"] if args.asreview_python.is_file() else [])
    if "ASReview default" not in methods:
        print(f"ASReview not run: {args.asreview_python} is missing (`make asreview-venv`)", file=sys.stderr)
    results: dict[str, dict[str, list[Simulation]]] = {m: {} for m in methods}
    seconds = {m: 0.0 for m in methods}
    frames = {dataset.stem: read_dataset(dataset) for dataset in datasets}
    for dataset in datasets:
        labels = frames[dataset.stem]["label_included"].to_numpy()
        for seed in range(args.seeds):
            priors = draw_priors(labels, 1, 1, seed)
            for method in methods:
                started = time.perf_counter()
                if method == "hysem":
                    simulation = simulate_review(frames[dataset.stem], priors)
                else:
                    order = (
                        random_order(labels, priors, seed)
                        if method == "random"
                        else asreview_order(args.asreview_python, dataset, priors)
                    )
                    simulation = Simulation(labels=labels, priors=priors, order=order)
                seconds[method] += time.perf_counter() - started
                results[method].setdefault(dataset.stem, []).append(simulation)
    measures = (Simulation.wss, Simulation.recall_after)
    rows = [
        [name, len(frame), int(frame["label_included"].sum())]
        + [f"{_mean(results[m][name], measure):.3f}" for m in methods for measure in measures]
        for name, frame in frames.items()
    ]
    means = {
        m: [statistics.fmean(_mean(runs, measure) for runs in results[m].values()) for measure in measures]
        for m in methods
    }
    rows.append(["mean (of the reviews)", "", ""] + [f"{value:.3f}" for m in methods for value in means[m]])
    headers = ["review", "records", "included"] + [f"{m} {k}" for m in methods for k in ("WSS@95", "recall@10%")]
    print(f"\n{args.seeds} prior draw(s) per review (one included and one excluded record):\n")
    print(tabulate(rows, headers=headers, tablefmt="github"))
    print("\nseconds: " + ", ".join(f"{m} {s:.0f}" for m, s in seconds.items()))
    if "ASReview default" not in methods:
        return 0
    ours, theirs = means["hysem"], means["ASReview default"]
    good = ours[0] >= theirs[0] and ours[1] >= theirs[1]
    print(
        f"hysem / ASReview: WSS@95 {ours[0] / theirs[0]:.3f}, recall@10% {ours[1] / theirs[1]:.3f}, "
        f"speed {seconds['ASReview default'] / seconds['hysem']:.2f}x; "
        + ("goal met" if good else "goal NOT met (both measures at least ASReview's)")
    )
    return 0 if good else 1


def _mean(runs: list[Simulation], measure) -> float:
    """A measure averaged over one review's prior draws."""
    return statistics.fmean(measure(run) for run in runs)


if __name__ == "__main__":
    sys.exit(main())
