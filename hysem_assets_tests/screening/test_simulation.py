"""Screening simulated: its measures, its checks on a labelled review, and the ranker on a real one."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hysem_assets.screening.simulation import DatasetError, Simulation, draw_priors, read_dataset
from hysem_assets_tests.paths import HYSEM


def test_wss_and_recall_count_from_the_records_after_the_priors():
    labels = np.array([1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1])  # 12 records, 4 included
    order = np.array([2, 4, 3, 5, 6, 11, 7, 8, 9, 10])  # after priors 0 (included) and 1 (excluded)
    simulation = Simulation(labels=labels, priors=[0, 1], order=order)
    assert simulation.to_find == 3 and simulation.to_screen == 10
    assert simulation.wss() == pytest.approx((10 - 6) / 10 - 0.05)  # the third found at the 6th record
    assert simulation.recall_after(0.1) == pytest.approx(1 / 3) and simulation.recall_after(0.3) == pytest.approx(2 / 3)


def write(tmp_path: Path, frame: pd.DataFrame) -> Path:
    path = tmp_path / "review.csv"
    frame.to_csv(path, index=False)
    return path


def test_a_labelled_review_that_cannot_be_simulated_says_why(tmp_path: Path):
    good = pd.DataFrame({"record_id": [1, 2, 3], "title": ["a", "b", "c"], "abstract": ["", "", ""]})
    with pytest.raises(DatasetError, match="no column label_included"):
        read_dataset(write(tmp_path, good))
    with pytest.raises(DatasetError, match="record '2' has label_included 'yes'; labels must be 0"):
        read_dataset(write(tmp_path, good.assign(label_included=["1", "yes", "0"])))
    with pytest.raises(DatasetError, match="record_id '1' appears more than once"):
        read_dataset(write(tmp_path, good.assign(record_id=[1, 1, 2], label_included=[1, 0, 0])))
    with pytest.raises(DatasetError, match="1 prior included record"):
        draw_priors(np.array([1, 0, 0]), 1, 1, seed=0)  # no included record would be left to find
    assert sorted(draw_priors(np.array([1, 1, 0, 0]), 1, 1, seed=3)) in ([0, 2], [0, 3], [1, 2], [1, 3])


def test_simulate_on_a_real_review_finds_the_included_records_far_sooner_than_random(tmp_path: Path, realdata: Path):
    source = pd.read_csv(realdata / "screening_asreview" / "Cohen_2006_ProtonPumpInhibitors.csv")
    # a third of the review, its included records kept: a short run that still holds real vocabulary
    sample = pd.concat([source[source["label_included"] == 1], source[source["label_included"] == 0].iloc[:400]])
    path = write(tmp_path, sample.sample(frac=1.0, random_state=1))
    done = subprocess.run(
        [HYSEM, "screen", "simulate", str(path), "--seed", "2", "--json"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["records"] == len(sample) and result["included"] == 51 and len(result["priors"]) == 2
    # random screening finds 10% of them after 10% of the records and saves nothing at 95% recall
    assert result["recall@10%"] >= 0.3 and result["wss@95"] >= 0.2, result
    bad = subprocess.run(
        [HYSEM, "screen", "simulate", str(write(tmp_path, sample.drop(columns="abstract")))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1 and "no column abstract" in bad.stderr and "Traceback" not in bad.stderr
