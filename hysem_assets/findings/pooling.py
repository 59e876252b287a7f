"""Random-effects meta-analysis of the findings: one pooled estimate per comparison and measure.

A study's estimate enters with the standard error its 95% confidence interval implies; ratios
(hazard, odds, risk and rate ratios) are pooled on the log scale and shown exponentiated back,
differences on their own scale. The between-study variance comes from statsmodels'
``combine_effects``, by DerSimonian and Laird's moments or Paule and Mandel's iteration; the
prediction interval is Higgins, Thompson and Spiegelhalter's (2009), on a t distribution with
k - 2 degrees of freedom. What cannot be pooled is said with its reason, never forced: one
study, different measures, a measure with no scale to pool on (a number needed to treat, a
regression coefficient, a bare "difference") or an interval that gives no standard error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from hysem_assets.findings import schema
from hysem_assets.findings.estimates import RATIO_MEASURES

#: Measures pooled as they are: the difference between the groups.
DIFFERENCE_MEASURES = frozenset({"mean difference", "standardised mean difference", "risk difference"})
#: The methods ``pool`` takes (statsmodels' ``method_re`` names) and how a synthesis names them.
METHODS = {"dl": "DerSimonian-Laird", "pm": "Paule-Mandel"}
_Z = NormalDist().inv_cdf(0.975)  # 1.959964: the half-width of a 95% interval in standard errors
_UNUSABLE = "no standard error from the interval (no width, or a ratio's bound not positive)"


@dataclass(frozen=True)
class StudyEffect:
    """One study's estimate of a comparison, as its text reports it (natural scale)."""

    cluster_id: str
    label: str
    measure: str
    estimate: float
    ci_low: float
    ci_high: float

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Pooled:
    """A random-effects pooled estimate of one comparison, on the natural scale; ``tau2`` is on the scale of pooling
    (log for ratios), ``i2`` a fraction (Higgins and Thompson's (Q - df) / Q, at least 0)."""

    comparison: tuple[str, str, str]
    measure: str
    method: str
    studies: tuple[StudyEffect, ...]
    estimate: float
    ci_low: float
    ci_high: float
    tau2: float
    i2: float
    prediction_low: float | None
    prediction_high: float | None

    def weights(self) -> tuple[float, ...]:
        """Each study's share of the random-effects weight, in the order of ``studies``."""
        raw = [1 / (_standard_error(study) ** 2 + self.tau2) for study in self.studies]
        return tuple(weight / sum(raw) for weight in raw)

    def as_json(self) -> dict[str, Any]:
        return {
            "pooled": True,
            "comparison": _comparison_json(self.comparison),
            "measure": self.measure,
            "method": self.method,
            "k": len(self.studies),
            "studies": [
                {**study.as_json(), "weight": weight}
                for study, weight in zip(self.studies, self.weights(), strict=True)
            ],
            "estimate": self.estimate,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "tau2": self.tau2,
            "i2": self.i2,
            "prediction_low": self.prediction_low,
            "prediction_high": self.prediction_high,
        }


@dataclass(frozen=True)
class NotPooled:
    """Studies of one comparison that are not pooled, and why."""

    comparison: tuple[str, str, str]
    studies: tuple[StudyEffect, ...]
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {
            "pooled": False,
            "comparison": _comparison_json(self.comparison),
            "studies": [study.as_json() for study in self.studies],
            "reason": self.reason,
        }


def _comparison_json(comparison: tuple[str, str, str]) -> dict[str, str]:
    return dict(zip(("intervention", "comparator", "outcome"), comparison, strict=True))


def is_ratio(measure: str) -> bool:
    return measure in RATIO_MEASURES


def _standard_error(study: StudyEffect) -> float:
    """The standard error a 95% interval implies, on the scale of pooling: its width over 2 x 1.96 (of the logs for a
    ratio). NaN when the interval gives none (no width, a ratio's bound not positive)."""
    low, high = study.ci_low, study.ci_high
    if is_ratio(study.measure):
        if not (low > 0 and high > 0):
            return math.nan
        low, high = math.log(low), math.log(high)
    se = (high - low) / (2 * _Z)
    return se if math.isfinite(se) and se > 0 else math.nan


def _usable(study: StudyEffect) -> bool:
    """Whether a study has a place on the scale of pooling: a finite estimate (positive for a ratio) and a standard
    error from its interval."""
    valid = study.estimate > 0 if is_ratio(study.measure) else True
    return valid and math.isfinite(study.estimate) and not math.isnan(_standard_error(study))


def _to_scale(measure: str, value: float) -> float:
    return math.log(value) if is_ratio(measure) else value


def _from_scale(measure: str, value: float) -> float:
    return math.exp(value) if is_ratio(measure) else value


def _measures_reason(measures: Sequence[str]) -> str:
    names = ", ".join(sorted(set(measures)))
    scales = {is_ratio(m) for m in measures if is_ratio(m) or m in DIFFERENCE_MEASURES}
    mixed = " (ratio and difference scales cannot be pooled)" if len(scales) > 1 else ""
    return f"different measures: {names}{mixed}"


def _refusal(studies: Sequence[StudyEffect]) -> str | None:
    """Why these studies cannot be pooled, or None when they can."""
    ids = [study.cluster_id for study in studies]
    if not studies:
        return "no study"
    if len(set(ids)) < len(ids):
        return f"one study twice: {', '.join(sorted({i for i in ids if ids.count(i) > 1}))}"
    if len(studies) == 1:
        return "one study"
    measures = [study.measure for study in studies]
    if len(set(measures)) > 1:
        return _measures_reason(measures)
    if not (is_ratio(measures[0]) or measures[0] in DIFFERENCE_MEASURES):
        return f"{measures[0]}: not a ratio or a difference, so there is no scale to pool it on"
    unusable = [study.label for study in studies if not _usable(study)]
    if unusable:
        return f"{_UNUSABLE}: {', '.join(unusable)}"
    return None


def pool(studies: Sequence[StudyEffect], comparison: tuple[str, str, str], method: str = "dl") -> Pooled | NotPooled:
    """The random-effects pooled estimate of ``studies`` (one per study, one measure), or why there is none.

    ``method`` picks the between-study variance: "dl" (DerSimonian-Laird) or "pm" (Paule-Mandel). A negative
    moment estimate is truncated at 0, where the pooled estimate is the fixed-effect one.
    """
    if method not in METHODS:
        raise ValueError(f"unknown pooling method {method!r}: use one of {', '.join(METHODS)}")
    studies = tuple(studies)
    reason = _refusal(studies)
    if reason:
        return NotPooled(comparison, studies, reason)
    measure = studies[0].measure
    effects = np.array([_to_scale(measure, study.estimate) for study in studies])
    variances = np.array([_standard_error(study) ** 2 for study in studies])
    from statsmodels.stats.meta_analysis import combine_effects  # here: statsmodels takes a second to import

    with np.errstate(invalid="ignore", divide="ignore"):  # a negative moment estimate leaves NaNs in unused figures
        result = combine_effects(effects, variances, method_re=method)
    if result.tau2 > 0:
        mean, se, tau2 = float(result.mean_effect_re), float(result.sd_eff_w_re), float(result.tau2)
    else:
        mean, se, tau2 = float(result.mean_effect_fe), float(result.sd_eff_w_fe), 0.0
    prediction = _prediction_interval(mean, se, tau2, len(studies))
    low, high = (_from_scale(measure, bound) for bound in prediction) if prediction else (None, None)
    return Pooled(
        comparison=comparison,
        measure=measure,
        method=METHODS[method],
        studies=studies,
        estimate=_from_scale(measure, mean),
        ci_low=_from_scale(measure, mean - _Z * se),
        ci_high=_from_scale(measure, mean + _Z * se),
        tau2=tau2,
        i2=max(0.0, float(result.i2)),
        prediction_low=low,
        prediction_high=high,
    )


def _prediction_interval(mean: float, se: float, tau2: float, k: int) -> tuple[float, float] | None:
    """Where the effect of a new study's setting is expected (Higgins et al. 2009): the mean plus or minus t(k - 2)
    times the square root of tau2 + se2. It needs k >= 3: with two studies there are no degrees of freedom left."""
    if k < 3:
        return None
    from scipy import stats

    half = float(stats.t.ppf(0.975, k - 2)) * math.sqrt(tau2 + se**2)
    return mean - half, mean + half


def _measure(name: str) -> str:
    """A measure as pooled: an adjusted estimate is an estimate of the same measure."""
    return name.removeprefix("adjusted ")


def _one_per_study(rows: pd.DataFrame) -> pd.DataFrame:
    """Each study's one row of a comparison: the preferred one (full text over abstract), adjusted over crude, then
    the first by its id, so a study counts once and the same row is chosen on every run."""
    ranked = rows.assign(
        _preferred=rows["preferred"].fillna(False).astype(bool),
        _fulltext=rows["source"].eq(schema.FULLTEXT).fillna(False).astype(bool),
        _adjusted=rows["measure"].str.startswith("adjusted ").fillna(False).astype(bool),
    ).sort_values(
        ["cluster_id", "_preferred", "_fulltext", "_adjusted", "finding_id"],
        ascending=[True, False, False, False, True],
    )
    return ranked.drop_duplicates("cluster_id")


def _candidates(findings: pd.DataFrame) -> pd.DataFrame:
    """The rows a synthesis may use: primary studies' estimates with an interval, of named comparisons."""
    needed = ["intervention_term", "comparator_term", "outcome_term", "measure", "estimate", "ci_low", "ci_high"]
    primary = findings[findings["study_kind"].eq("primary").fillna(False).astype(bool)]
    return primary.dropna(subset=needed)


def syntheses(
    findings: pd.DataFrame, labels: Mapping[str, str] | None = None, method: str = "dl"
) -> list[Pooled | NotPooled]:
    """Groups a findings table (schema.COLUMNS) by comparison terms; only primary studies (study_kind == "primary"),
    rows with a measure, estimate and CI; one estimate per study per comparison (the preferred row, i.e. full text
    over abstract); never pools different measures or one study twice; a group of one study is NotPooled("one study").

    A comparison whose studies report different measures gets one result per measure: the studies of a measure that
    two or more report are pooled; one that only one study reports is not pooled, for its different measure. A study
    whose interval gives no standard error is set apart with that reason rather than stopping the others' pooling.
    ``labels`` shows a study by name ("Author Year"), else by its cluster id; studies are listed by label. Results
    come in the order of their comparison's terms, then measure.
    """
    labels = labels or {}
    results: list[Pooled | NotPooled] = []
    rows = _candidates(findings)
    for comparison, group in rows.groupby(["intervention_term", "comparator_term", "outcome_term"], sort=True):
        terms = (str(comparison[0]), str(comparison[1]), str(comparison[2]))
        chosen = _one_per_study(group)
        studies = [
            StudyEffect(
                cluster_id=str(row.cluster_id),
                label=labels.get(str(row.cluster_id), str(row.cluster_id)),
                measure=_measure(str(row.measure)),
                estimate=float(row.estimate),
                ci_low=float(row.ci_low),
                ci_high=float(row.ci_high),
            )
            for row in chosen.itertuples(index=False)
        ]
        studies.sort(key=lambda study: (study.label, study.cluster_id))
        unusable = tuple(study for study in studies if not _usable(study))
        if unusable:
            results.append(NotPooled(terms, unusable, _UNUSABLE))
        results.extend(_by_measure([study for study in studies if _usable(study)], terms, method))
    return results


def _by_measure(studies: Sequence[StudyEffect], terms: tuple[str, str, str], method: str) -> list[Pooled | NotPooled]:
    """One result per measure of a comparison's studies: pooled, or one study apart for its different measure."""
    measures = sorted({study.measure for study in studies})
    results: list[Pooled | NotPooled] = []
    for measure in measures:
        of_measure = [study for study in studies if study.measure == measure]
        if len(of_measure) == 1 and len(measures) > 1:
            results.append(NotPooled(terms, tuple(of_measure), _measures_reason(measures)))
        else:
            results.append(pool(of_measure, terms, method))
    return results
