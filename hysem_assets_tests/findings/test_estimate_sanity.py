"""Numbers the words lead to that are no effect estimate, intervals that cannot be an estimate's, and samples that
are no study's: composed sentences in the forms real abstracts and full texts write them."""

from __future__ import annotations

import pytest

from hysem_assets.extraction.numbers import sample_size
from hysem_assets.findings.estimates import effect_estimates


def read(text: str) -> list[tuple]:
    return [
        (found["measure"], found["value"], found["ci_lower"], found["ci_upper"]) for found in effect_estimates(text)
    ]


@pytest.mark.parametrize(
    "text",
    [
        # a year: the bundled statins snapshot's full text once gave a hazard ratio of 2021
        "Weighted Cox models estimated hazard ratios with follow-up until dementia, death or the end of 2021.",
        "Odds ratios were estimated for the cohort of 1998.",
        # a count of people or groups, or one written with its percentage (HR is also a heart rate)
        "Hazard ratios of 41,290 patients were estimated with Cox models.",
        "Hazard ratios were computed in each of 3 groups.",
        "Positive for HR 208 (36.1%) 56 (40.3%) 152 (58.2%)",
        # a mean with its spread
        "The HR recorded before intubation was 66 ± 12 beats per minute.",
        # a dose
        "The hazard ratio of 80 mg versus 10 mg atorvastatin was 0.9.",
        "An odds ratio of 40 mg daily was assumed.",
        "A mean difference of 20 mg/day between the arms was allowed.",
    ],
)
def test_a_year_a_count_a_mean_or_a_dose_is_no_estimate(text: str) -> None:
    assert read(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a year-like amount that a labelled interval holds is a value
        ("Steps rose (mean difference 2010, 95% CI 1500 to 2520).", ("mean difference", 2010, 1500, 2520)),
        # a coefficient with its standard error, a difference in grams
        ("Knowledge rose (β = 3.9 ± 0.6, p < 0.001).", ("regression coefficient", 3.9, None, None)),
        ("Blood loss fell (MD = 35.2 g, 95% CI = −65.3–135.7).", ("mean difference", 35.2, -65.3, 135.7)),
    ],
)
def test_numbers_like_those_that_are_estimates_stay(text: str, expected: tuple) -> None:
    assert read(text) == [expected]


def test_page_table_and_reference_numbers_never_reach_a_measure() -> None:
    """A period or a word with digits ends the words before a value, so these are never read (a guard, no rule)."""
    for text in ("Odds ratios, p. 12", "Hazard ratios: Table 2.", "Odds ratios, Stat Med 2019;38:1201-1210."):
        assert read(text) == []


def test_a_labelled_interval_that_does_not_hold_its_value_drops_the_estimate() -> None:
    assert read("Diabetes (HR 1.88; 95% CI 1.42 to 1.49, p<0.001)") == []
    assert read("Harm was perceived (RR = 1.19, 95 % CI = 1.20–2.08).") == []
    # numbers after a value that are no interval leave the estimate, without one
    assert read("Survival (HR 0.7, 12 to 24 months)") == [("hazard ratio", 0.7, None, None)]
    # an interval that cannot be read in full (a decimal comma) is no evidence against the value
    assert read("Failure (OR = 0.478; 95% CI = 0.323 to 0,706; P = 0.01)") == [("odds ratio", 0.478, None, None)]


def test_a_ratio_is_positive_and_its_interval_unsigned() -> None:
    assert read("Death (HR -0.5, 95% CI -0.9 to -0.1).") == []
    assert read("Outcomes were similar, respectively OR 0,93 [0,67–1,30].") == []  # a decimal comma, read as 0
    assert read("Psoriasis with metformin [OR = 0.77 (95 % CI – 0.62–0.96)]") == [("odds ratio", 0.77, 0.62, 0.96)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # whole thousands in a bound, the label after "CI", a number broken across lines
        ("Trophozoites (odds ratio = 42; 95% CI, 2.4–2,061; Fisher's test)", ("odds ratio", 42, 2.4, 2061)),
        ("Wound infection (P < 0.001, OR: 51.0, CI 95%: 7.56-343.73).", ("odds ratio", 51.0, 7.56, 343.73)),
        ("Pain fell (mean difference −\n0.10, 95% CI −0.20 to 0.00).", ("mean difference", -0.1, -0.2, 0.0)),
    ],
)
def test_intervals_written_other_ways_are_read(text: str, expected: tuple) -> None:
    assert read(text) == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "A previous meta-analysis of 12 trials including 45,000 participants found no benefit. We randomly "
            "assigned 300 adults with sepsis to vitamin C or placebo.",
            300,
        ),
        ("A meta-analysis of 12 trials (n = 45,000) found no benefit. Our trial randomised 300 adults.", 300),
        ("A meta-analysis of seven clinical trials with over 500 patients has shown a benefit.", None),
        # a review's own pooled sample is its sample
        ("Thirty-six cohort studies with 5,630,221 participants were included.", 5_630_221),
        ("Four trials with 26,340 participants (mean age 63-75 years) met the inclusion criteria.", 26_340),
        # a count of n at the end of a sentence
        ("Adults with sepsis were randomised, n = 300.", 300),
    ],
)
def test_a_pooled_sample_of_another_work_is_no_study_s_sample(text: str, expected: int | None) -> None:
    assert sample_size(text) == expected
