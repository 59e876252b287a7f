"""Random-effects pooling: against statsmodels on the same inputs, against a published meta-analysis, and what is
never pooled."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects

from hysem_assets.findings import schema
from hysem_assets.findings.pooling import NotPooled, Pooled, StudyEffect, pool, syntheses

Z = 1.959963984540054
COMPARISON = ("statin", "no statin", "dementia")

#: The 13 BCG vaccine trials of Colditz et al. (1994), JAMA 271:698-702, as R's metafor ships them (dat.bcg):
#: (tpos, tneg, cpos, cneg) = TB positive and negative among vaccinated, then among controls.
BCG = [
    (4, 119, 11, 128),
    (6, 300, 29, 274),
    (3, 228, 11, 209),
    (62, 13536, 248, 12619),
    (33, 5036, 47, 5761),
    (180, 1361, 372, 1079),
    (8, 2537, 10, 619),
    (505, 87886, 499, 87892),
    (29, 7470, 45, 7232),
    (17, 1699, 65, 1600),
    (186, 50448, 141, 27197),
    (5, 2493, 3, 2338),
    (27, 16886, 29, 17825),
]


def ratio_study(name: str, log_estimate: float, variance: float, measure: str = "relative risk") -> StudyEffect:
    """A study's ratio with the 95% interval its log-scale variance gives, as a text would report it."""
    half = Z * math.sqrt(variance)
    return StudyEffect(
        name, name, measure, math.exp(log_estimate), math.exp(log_estimate - half), math.exp(log_estimate + half)
    )


def bcg_studies() -> tuple[list[StudyEffect], np.ndarray, np.ndarray]:
    counts = np.array(BCG, dtype=float)
    tpos, tneg, cpos, cneg = counts.T
    log_rr = np.log((tpos / (tpos + tneg)) / (cpos / (cpos + cneg)))
    variance = 1 / tpos - 1 / (tpos + tneg) + 1 / cpos - 1 / (cpos + cneg)
    studies = [ratio_study(f"trial {i + 1}", y, v) for i, (y, v) in enumerate(zip(log_rr, variance, strict=True))]
    return studies, log_rr, variance


def test_bcg_vaccine_trials_reproduce_the_published_random_effects_meta_analysis() -> None:
    """Log risk ratios and variances from the trials' counts, pooled through their 95% intervals.

    Reference values: metafor's test suite (wviechtb/metafor, tests/testthat/test_misc_metan_vs_rma.uni_with_dat.bcg.r,
    checked there against Stata's metan): DerSimonian-Laird log RR -0.7141 (95% CI -1.0644 to -0.3638), RR 0.4896
    (0.3449 to 0.6950), tau2 0.3088, I2 92.1173%; and tests/testthat/test_misc_rma_uni.r: the iterated
    DerSimonian-Laird estimate, whose fixed point is Paule and Mandel's, tau2 0.3181.
    """
    studies, _, _ = bcg_studies()
    dl = pool(studies, ("BCG vaccine", "no vaccine", "tuberculosis"), "dl")
    assert isinstance(dl, Pooled) and dl.method == "DerSimonian-Laird" and dl.measure == "relative risk"
    assert math.log(dl.estimate) == pytest.approx(-0.7141, abs=5e-5)
    assert (math.log(dl.ci_low), math.log(dl.ci_high)) == pytest.approx((-1.0644, -0.3638), abs=5e-5)
    assert (dl.estimate, dl.ci_low, dl.ci_high) == pytest.approx((0.4896, 0.3449, 0.6950), abs=5e-5)
    assert dl.tau2 == pytest.approx(0.3088, abs=5e-5)
    assert dl.i2 == pytest.approx(0.921173, abs=5e-6)
    pm = pool(studies, ("BCG vaccine", "no vaccine", "tuberculosis"), "pm")
    assert isinstance(pm, Pooled) and pm.method == "Paule-Mandel"
    assert pm.tau2 == pytest.approx(0.3181, abs=5e-5)


def test_the_prediction_interval_is_higgins_thompson_and_spiegelhalter_s() -> None:
    studies, log_rr, variance = bcg_studies()
    pooled = pool(studies, COMPARISON)
    assert isinstance(pooled, Pooled)
    weights = 1 / (variance + pooled.tau2)
    mean, se = np.sum(weights * log_rr) / np.sum(weights), math.sqrt(1 / np.sum(weights))
    half = stats.t.ppf(0.975, len(studies) - 2) * math.sqrt(pooled.tau2 + se**2)
    assert (pooled.prediction_low, pooled.prediction_high) == pytest.approx(
        (math.exp(mean - half), math.exp(mean + half)), rel=1e-9
    )
    two = pool(studies[:2], COMPARISON)
    assert isinstance(two, Pooled) and two.prediction_low is None and two.prediction_high is None


@pytest.mark.parametrize("method", ["dl", "pm"])
def test_a_pooled_ratio_is_statsmodels_combine_effects_on_the_log_scale(method: str) -> None:
    estimates, lows, highs = [0.81, 0.62, 1.05, 0.74], [0.70, 0.45, 0.88, 0.51], [0.94, 0.85, 1.25, 1.07]
    studies = [
        StudyEffect(f"w{i}", f"Study {i}", "hazard ratio", e, lo, hi)
        for i, (e, lo, hi) in enumerate(zip(estimates, lows, highs, strict=True))
    ]
    effects = np.log(estimates)
    variances = ((np.log(highs) - np.log(lows)) / (2 * Z)) ** 2
    expected = combine_effects(effects, variances, method_re=method)
    low, high = expected.conf_int(use_t=False)[1]
    pooled = pool(studies, COMPARISON, method)
    assert isinstance(pooled, Pooled) and expected.tau2 > 0
    assert math.log(pooled.estimate) == pytest.approx(expected.mean_effect_re, rel=1e-9)
    assert (math.log(pooled.ci_low), math.log(pooled.ci_high)) == pytest.approx((low, high), rel=1e-9)
    assert pooled.tau2 == pytest.approx(expected.tau2, rel=1e-9)
    assert sum(pooled.weights()) == pytest.approx(1.0)


@pytest.mark.parametrize("method", ["dl", "pm"])
def test_a_pooled_difference_is_statsmodels_combine_effects_on_its_own_scale(method: str) -> None:
    rows = [(-0.3, -1.2, 0.6), (0.9, 0.3, 1.5), (-0.1, -0.5, 0.3)]
    studies = [StudyEffect(f"w{i}", f"w{i}", "mean difference", *row) for i, row in enumerate(rows)]
    effects = np.array([row[0] for row in rows])
    variances = np.array([((row[2] - row[1]) / (2 * Z)) ** 2 for row in rows])
    expected = combine_effects(effects, variances, method_re=method)
    pooled = pool(studies, COMPARISON, method)
    assert isinstance(pooled, Pooled)
    assert pooled.estimate == pytest.approx(expected.mean_effect_re, rel=1e-9)
    assert (pooled.ci_low, pooled.ci_high) == pytest.approx(tuple(expected.conf_int(use_t=False)[1]), rel=1e-9)


def test_homogeneous_studies_pool_with_no_between_study_variance() -> None:
    """DerSimonian-Laird's moment estimate is negative when Q < k - 1; it is truncated at 0, the fixed-effect result."""
    studies = [ratio_study(name, math.log(0.8) + shift, 0.04) for name, shift in (("a", 0.01), ("b", -0.01))]
    pooled = pool(studies, COMPARISON)
    assert isinstance(pooled, Pooled) and pooled.tau2 == 0.0 and pooled.i2 == 0.0
    assert pooled.estimate == pytest.approx(0.8, rel=1e-9)


def test_different_measures_one_study_and_one_study_twice_are_never_pooled() -> None:
    hr = ratio_study("w1", math.log(0.8), 0.01, "hazard ratio")
    other = ratio_study("w2", math.log(0.7), 0.02, "odds ratio")
    difference = StudyEffect("w3", "w3", "mean difference", -0.3, -1.2, 0.6)
    assert pool([hr, other], COMPARISON) == NotPooled(
        COMPARISON, (hr, other), "different measures: hazard ratio, odds ratio"
    )
    mixed = pool([hr, difference], COMPARISON)
    assert isinstance(mixed, NotPooled) and "ratio and difference scales cannot be pooled" in mixed.reason
    assert pool([hr], COMPARISON) == NotPooled(COMPARISON, (hr,), "one study")
    twice = pool([hr, hr], COMPARISON)
    assert isinstance(twice, NotPooled) and twice.reason == "one study twice: w1"


def test_measures_with_no_scale_or_intervals_with_no_width_are_never_pooled() -> None:
    nnt = [StudyEffect(i, i, "number needed to treat", 4, 3, 12) for i in ("a", "b")]
    refused = pool(nnt, COMPARISON)
    assert isinstance(refused, NotPooled) and "no scale to pool it on" in refused.reason
    zero_bound = StudyEffect("c", "Lee 2019", "odds ratio", 0.1, 0.0, 1.5)
    refused = pool([zero_bound, ratio_study("d", 0.0, 0.01, "odds ratio")], COMPARISON)
    assert isinstance(refused, NotPooled) and "Lee 2019" in refused.reason
    with pytest.raises(ValueError, match="unknown pooling method"):
        pool(nnt, COMPARISON, "reml")


def finding(cluster_id: str, measure: str, estimate: float, low: float, high: float, **columns: object) -> dict:
    row: dict[str, object] = dict.fromkeys(schema.COLUMNS)
    row.update(
        cluster_id=cluster_id,
        finding_id=f"{cluster_id}-{columns.get('source', schema.ABSTRACT)}-{measure}",
        intervention_term="statin",
        comparator_term="no statin",
        outcome_term="dementia",
        direction=schema.DECREASED,
        source=schema.ABSTRACT,
        preferred=True,
        measure=measure,
        estimate=estimate,
        ci_low=low,
        ci_high=high,
        study_kind="primary",
    )
    row.update(columns)
    return row


def table(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(schema.COLUMNS)).astype(schema.COLUMNS)


def test_syntheses_pool_each_study_once_from_its_preferred_row() -> None:
    findings = table(
        [
            finding("w1", "hazard ratio", 0.90, 0.80, 1.01, preferred=False),
            finding("w1", "hazard ratio", 0.81, 0.70, 0.94, source=schema.FULLTEXT),
            finding("w2", "adjusted hazard ratio", 0.78, 0.64, 0.95),
            finding("w3", "hazard ratio", 0.87, 0.83, 0.91),
            finding("w4", "hazard ratio", 0.79, 0.68, 0.92, study_kind="review"),  # a meta-analysis: never pooled
            finding("w5", "hazard ratio", 0.70, None, None),  # no interval
        ]
    )
    (pooled,) = syntheses(findings, labels={"w1": "Lindqvist 2019"})
    assert isinstance(pooled, Pooled) and pooled.comparison == COMPARISON and pooled.measure == "hazard ratio"
    assert [(s.cluster_id, s.label, s.estimate) for s in pooled.studies] == [
        ("w1", "Lindqvist 2019", 0.81),
        ("w2", "w2", 0.78),
        ("w3", "w3", 0.87),
    ]
    assert json.loads(json.dumps(pooled.as_json()))["k"] == 3


def test_syntheses_say_what_they_do_not_pool() -> None:
    findings = table(
        [
            finding("w1", "hazard ratio", 0.81, 0.70, 0.94),
            finding("w2", "hazard ratio", 0.78, 0.64, 0.95),
            finding("w3", "odds ratio", 1.12, 0.95, 1.31),  # the only odds ratio of the comparison
            finding("w4", "odds ratio", 0.10, 0.00, 1.50),  # a bound of 0: no standard error
            finding("w5", "mean difference", -0.3, -1.2, 0.6, outcome_term="ADAS-Cog"),
        ]
    )
    results = syntheses(findings)
    assert [(type(r).__name__, r.comparison[2], [s.cluster_id for s in r.studies]) for r in results] == [
        ("NotPooled", "ADAS-Cog", ["w5"]),
        ("NotPooled", "dementia", ["w4"]),
        ("Pooled", "dementia", ["w1", "w2"]),
        ("NotPooled", "dementia", ["w3"]),
    ]
    reasons = [r.reason for r in results if isinstance(r, NotPooled)]
    assert reasons[0] == "one study" and "no standard error" in reasons[1]
    assert reasons[2] == "different measures: hazard ratio, odds ratio"
    assert all(json.dumps(r.as_json()) for r in results)


def test_reviews_alone_give_no_synthesis() -> None:
    findings = table([finding(f"w{i}", "relative risk", 0.8, 0.7, 0.9, study_kind="review") for i in range(3)])
    assert syntheses(findings) == []
