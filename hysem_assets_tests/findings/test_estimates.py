"""Effect estimates in the notations abstracts use, on composed sentences."""

from __future__ import annotations

import pytest

from hysem_assets.findings.estimates import effect_estimates


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Mortality was lower with the vaccine (HR 0.83, 95% CI 0.76–0.91).", ("hazard ratio", 0.83, 0.76, 0.91)),
        ("Wound infection: OR = 1.12 (0.95, 1.31).", ("odds ratio", 1.12, 0.95, 1.31)),
        ("Relapse of the lymphoma: RR 0.79 [0.68 to 0.92].", ("relative risk", 0.79, 0.68, 0.92)),
        ("Sepsis (hazard ratio [HR], 1.21; 95% CI, 1.05-1.40).", ("hazard ratio", 1.21, 1.05, 1.40)),
        ("Reinfection (aHR: 0.9 (95%CI: 0.8–1.0)).", ("adjusted hazard ratio", 0.9, 0.8, 1.0)),
        ("Anastomotic leak (OR, 1.860; 95% CI, 1.439 to 2.405; P < 0.001)", ("odds ratio", 1.86, 1.439, 2.405)),
        ("Tumour size fell (β, −0.146; 95% CI, −0.201 to −0.086).", ("regression coefficient", -0.146, -0.201, -0.086)),
        ("Pain scores: mean difference −2.3 points (95% CI −3.1 to −1.5).", ("mean difference", -2.3, -3.1, -1.5)),
        ("Quality of life: SMD 0.45 (0.20–0.70).", ("standardised mean difference", 0.45, 0.20, 0.70)),
        ("Malaria episodes: IRR 1.5 (1.2-1.9).", ("incidence rate ratio", 1.5, 1.2, 1.9)),
        # tokenised text, written-out percent, bracketed names with spaces, percent bounds, a comma before "to"
        ("Relapse ( odds ratio [ OR ] = 1.98 ; 95 % CI , 1.16 to 3.38 ; P = .01 )", ("odds ratio", 1.98, 1.16, 3.38)),
        ("changes ( odds ratio , 2.1 ; 95 percent confidence interval , 1.2 to 3.8 )", ("odds ratio", 2.1, 1.2, 3.8)),
        ("Asthma ( odds ratio , 0.47 ; 95 % CI , 0.23 % to 0.96 % ; P = .035 )", ("odds ratio", 0.47, 0.23, 0.96)),
        ("Stroke ( hazard ratio , 1.23 ; 95 % CI , 1.01 , to 1.49 ; P=0.04 )", ("hazard ratio", 1.23, 1.01, 1.49)),
        ("Dropout was lower; HR (95% CI) of 0.46 (0.39, 0.54).", ("hazard ratio", 0.46, 0.39, 0.54)),
        ("Function (mean difference between groups, 2.7; 95% CI, 1.22 to 4.17)", ("mean difference", 2.7, 1.22, 4.17)),
        (
            "the odds ratio for carrying the mutation and a positive margin was 17.2 (95% CI: 2.1-142.3)",
            ("odds ratio", 17.2, 2.1, 142.3),
        ),
        ("Bone density rose (βoverall = .04; P = .002).", ("regression coefficient", 0.04, None, None)),
        ("A longer history (OR 0.92: 95% CI: 0.88-0.97) predicted failure.", ("odds ratio", 0.92, 0.88, 0.97)),
        # a bare "difference" or "ratio" with a labelled interval; signed bounds
        (
            "Cure was likelier with A (94% vs. 84%; difference, 9.8%; 95% confidence interval, - 0.7% to + 20.4%).",
            ("difference", 9.8, -0.7, 20.4),
        ),
        ("Exposure of the moiety (ratio = 110.2%; 90% CI = 103.7-117.2)", ("ratio", 110.2, 103.7, 117.2)),
        ("Deaths fell (absolute risk difference 4.3%, 95% CI 1.0 to 7.6)", ("risk difference", 4.3, 1.0, 7.6)),
        ("Deaths fell (ARD 2%, 95% CI 1-3)", ("risk difference", 2.0, 1.0, 3.0)),
        ("Deaths fell (aOR 1.5, 95% CI 1.1-2.0)", ("adjusted odds ratio", 1.5, 1.1, 2.0)),
        # numbers needed to treat or harm, risk reductions (not a relative risk), a doubled hyphen
        ("Improved health (number needed to treat [NNT] 4, 95% CI 3 to 12).", ("number needed to treat", 4, 3, 12)),
        ("Sedation (NNH 6).", ("number needed to harm", 6, None, None)),
        ("Ulcers (absolute-risk reduction 5% [95% CI 1-10]).", ("absolute risk reduction", 5, 1, 10)),
        ("a relative risk reduction of 22% (95% CI 9-35)", ("relative risk reduction", 22, 9, 35)),
        ("Relapse (OR 2.5, 95% CI 0.6--10.3).", ("odds ratio", 2.5, 0.6, 10.3)),
        # qualifiers and no link word before the value, with a labelled interval
        (
            "relative risk for healing with dressing A 1.02, 95% confidence interval 0.83 to 1.28",
            ("relative risk", 1.02, 0.83, 1.28),
        ),
        # changes named by their direction, before or after the value, with a labelled interval
        ("Episodes fell (55% reduction; 95% confidence interval [CI], 44%-66%).", ("reduction", 55, 44, 66)),
        ("Prescribing was 21% higher (95% confidence interval 7% to 36%).", ("increase", 21, 7, 36)),
        ("an absolute increase of 24.7% (95% CI, 21.6%-27.7%)", ("increase", 24.7, 21.6, 27.7)),
        ("a mean reduction in LDL-C of 33.6 mg/dL (95% CI, 30.1-37.1)", ("reduction", 33.6, 30.1, 37.1)),
        ("Waist fell (beta 2.7 cm, 95% CI 0.6-4.7).", ("regression coefficient", 2.7, 0.6, 4.7)),
        # bounds written high to low
        ("Sitting fell (β -28, 95% CI -2 to -54).", ("regression coefficient", -28, -54, -2)),
    ],
)
def test_notations(sentence: str, expected: tuple) -> None:
    found = effect_estimates(sentence)
    assert [(r["measure"], r["value"], r["ci_lower"], r["ci_upper"]) for r in found] == [expected]
    written = sentence[found[0]["start"] : found[0]["end"]]
    assert any(char.isdigit() for char in written) and written == written.strip()


def test_several_estimates_each_with_its_interval_and_context() -> None:
    text = (
        "Exposure to the herbicide was associated with hepatotoxicity (ORQ3=4.15, 95% CI 1.56 to 11.01, "
        "ORQ4=4.76, 95% CI 1.53 to 14.82, ptrend <0.01)."
    )
    found = effect_estimates(text)
    assert [(r["value"], r["ci_lower"], r["ci_upper"]) for r in found] == [(4.15, 1.56, 11.01), (4.76, 1.53, 14.82)]
    assert "hepatotoxicity" in found[0]["context"]


@pytest.mark.parametrize(
    ("sentence", "p_value"),
    [
        ("Anastomotic leak (OR, 1.860; 95% CI, 1.439 to 2.405; P < 0.001)", "< 0.001"),
        ("Bone density rose (βoverall = .04; P = .002).", "0.002"),
        ("Stroke ( hazard ratio , 1.23 ; 95 % CI , 1.01 , to 1.49 ; P=0.04 )", "0.04"),
        ("Death (HR 0.8 (0.7-0.9), p-value 0.03).", "0.03"),
        ("Death (HR 0.8 (0.7-0.9)). P values were two-sided.", None),  # another sentence's p
        ("Exposure (ORQ3=4.15, 95% CI 1.56 to 11.01, ptrend <0.01)", None),  # a trend test, not this estimate's
    ],
)
def test_a_p_value_right_after_an_estimate_is_its_own(sentence: str, p_value: str | None) -> None:
    (found,) = effect_estimates(sentence)
    assert found["p_value"] == p_value
    assert ("p" in sentence[found["start"] : found["end"]].lower()) == (p_value is not None)  # the span holds it


def test_words_that_only_look_like_measures_are_not_estimates() -> None:
    assert effect_estimates("HRQoL = 0.8 improved, and ORs and 95% CIs were calculated by logistic regression.") == []
    assert effect_estimates("The OR was used for 12 patients undergoing surgery.") == []
    # a bare "ratio" or "difference" without a labelled interval holding its value
    assert effect_estimates("The sex ratio was 2:1 and the difference was 3 patients (p = 0.2).") == []
    assert effect_estimates("The difference was 3 points (2 to 4 weeks after surgery).") == []
    assert effect_estimates("The ratio was 3.1 (95% CI 0.5 to 2.9).") == []
    # a change or a beta without a labelled interval, a measure's qualifiers without one
    assert effect_estimates("A reduction of 12 beds (from 40 to 28) and 30% more visits; beta 2 agonists.") == []
    assert effect_estimates("The HR for patients aged 65 1.2 (1.1 to 1.3) was higher.") == []


def test_qualifiers_do_not_run_over_a_specific_measure() -> None:
    (found,) = effect_estimates("No differences occurred between the groups, HR 0.96 (95% CI 0.81-1.15).")
    assert (found["measure"], found["value"]) == ("hazard ratio", 0.96)
    (found,) = effect_estimates("IRR for the difference between groups 1.01, 95% CI 1.00-1.02; p=0.105")
    assert (found["measure"], found["value"], found["p_value"]) == ("incidence rate ratio", 1.01, "0.105")


def test_the_context_is_the_estimate_s_own_words_from_the_first_letter() -> None:
    text = "Pain (OR: 0.43; 95% CI: 0.28-0.66) and early satiety (OR: 2.5; 95% CI: 1.6-4.1) predicted it."
    assert [found["context"] for found in effect_estimates(text)] == ["Pain", "and early satiety"]
    title = "Ginger for nausea\n\nNausea fell vs. placebo (mean difference -1.2, 95% CI -2.0 to -0.4)."
    (found,) = effect_estimates(title)
    assert found["context"] == "Nausea fell vs. placebo"  # "vs." ends no sentence


def test_an_interval_that_does_not_hold_its_value_is_left_out() -> None:
    (found,) = effect_estimates("Survival (HR 0.7, 12 to 24 months)")
    assert (found["value"], found["ci_lower"], found["ci_upper"]) == (0.7, None, None)


@pytest.mark.parametrize(
    ("sentence", "unit"),
    [
        ("Pain scores: mean difference -2.3 points (95% CI -3.1 to -1.5).", "points"),
        ("a mean reduction in LDL-C of 33.6 mg/dL (95% CI, 30.1-37.1)", "mg/dL"),
        ("difference in mean systolic -2.7 mm Hg (95% confidence interval -4.7 to -0.6)", "mm Hg"),
        ("Episodes fell (55% reduction; 95% CI, 44%-66%).", "%"),
        ("Uptake rose (difference 4 percentage points; 95% CI 1 to 7).", "percentage points"),
        ("Mortality was lower with the vaccine (HR 0.83, 95% CI 0.76–0.91).", None),
        ("Fractures (OR 0.8 in men (95% CI 0.7-0.9)).", None),  # qualifiers, not a unit
        ("Visits (rate ratio 1.2 visits; 95% CI 1.1 to 1.3).", None),  # a ratio has none
    ],
)
def test_the_unit_written_after_a_value_is_kept(sentence: str, unit: str | None) -> None:
    (found,) = effect_estimates(sentence)
    assert found["unit"] == unit
