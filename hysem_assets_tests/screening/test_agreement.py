"""Cohen's kappa of two reviewers: the same number scikit-learn computes, over the records both decided."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from hysem_assets.screening.agreement import cohen_kappa, stage_agreement
from hysem_assets.screening.decisions import FULLTEXT, Decision, replay


@pytest.mark.parametrize("seed", range(6))
def test_kappa_equals_scikit_learns_on_the_same_decisions(seed: int):
    rng = np.random.default_rng(seed)
    labels = ["included", "maybe", "excluded"][: 2 + seed % 2]
    first = rng.choice(labels, size=int(rng.integers(5, 200))).tolist()
    # the second reviewer agrees on some share of the records and draws the rest
    second = [a if rng.random() < 0.6 else str(rng.choice(labels)) for a in first]
    assert cohen_kappa(first, second) == pytest.approx(cohen_kappa_score(first, second), abs=1e-12)


def test_kappa_at_the_edges_matches_scikit_learn():
    same = ["included", "excluded", "excluded", "included"]
    assert cohen_kappa(same, same) == 1.0 == cohen_kappa_score(same, same)
    flipped = ["excluded", "included", "included", "excluded"]
    assert cohen_kappa(same, flipped) == pytest.approx(cohen_kappa_score(same, flipped)) == -1.0
    with warnings.catch_warnings():  # scikit-learn warns that kappa is undefined there
        warnings.simplefilter("ignore")
        assert math.isnan(cohen_kappa_score(["excluded"] * 3, ["excluded"] * 3))
    assert math.isnan(cohen_kappa(["excluded"] * 3, ["excluded"] * 3))
    with pytest.raises(ValueError, match="equally long"):
        cohen_kappa(["included"], [])


def votes(ann: dict[str, str], bo: dict[str, str], stage: str = "title_abstract") -> list[Decision]:
    def vote(record: str, action: str, who: str) -> Decision:
        return Decision(record, action, "other" if action == "excluded" else None, reviewer=who, stage=stage)

    return [vote(r, a, "Ann") for r, a in ann.items()] + [vote(r, a, "Bo") for r, a in bo.items()]


def test_the_stage_agreement_is_over_the_records_both_decided_on_whether_they_go_on():
    ann = {"a": "included", "b": "excluded", "c": "maybe", "d": "excluded", "e": "included"}
    bo = {"a": "maybe", "b": "excluded", "c": "excluded", "d": "excluded", "f": "included"}
    agreement = stage_agreement(replay(votes(ann, bo)))
    assert agreement.reviewers == ("Ann", "Bo") and agreement.records == 4 and agreement.disagreements == 1
    goes_on = {"included": 1, "maybe": 1, "excluded": 0}
    expected = cohen_kappa_score([goes_on[ann[r]] for r in "abcd"], [goes_on[bo[r]] for r in "abcd"])
    assert agreement.kappa == round(expected, 4)


def test_no_agreement_with_one_reviewer_or_none_in_common_and_stages_apart():
    assert stage_agreement(replay(votes({"a": "included"}, {}))) is None
    assert stage_agreement(replay(votes({"a": "included"}, {"b": "included"}))) is None
    full_text = votes({"a": "included", "b": "excluded"}, {"a": "included", "b": "excluded"}, stage=FULLTEXT)
    assert stage_agreement(replay(full_text)) is None  # title and abstract: nobody decided
    assert stage_agreement(replay(full_text, FULLTEXT)).kappa == 1.0
    agreed_one_verdict = votes({"a": "excluded", "b": "excluded"}, {"a": "excluded", "b": "excluded"})
    undefined = stage_agreement(replay(agreed_one_verdict))
    assert undefined.records == 2 and undefined.kappa is None
