"""Counts, durations and quantities read from composed sentences in the forms abstracts use."""

from __future__ import annotations

import pytest

from hysem_assets.extraction.numbers import duration, parse_amount, quantity, sample_size, words_to_number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A total of 12 045 participants received the influenza vaccine.", 12045),
        ("We vaccinated 12\u2009045 participants.", 12045),
        ("We followed 12\u00a0045 children after tonsillectomy.", 12045),
        ("a total of 812 women underwent mastectomy", 812),
        ("Tumour samples (n=1234) were sequenced.", 1234),
        ("Surgical patients (N = 3,400) were audited.", 3400),
        ("We linked records of 3.4 million adults to cancer registries.", 3_400_000),
        ("Ten thousand residents were screened for tuberculosis.", 10_000),
        ("Thirteen patients with melanoma were treated.", 13),
        ("We used data from 2,345 patients with sepsis.", 2345),
        ("The trial enrolled 512 patients with gastric cancer.", 512),
        ("Including 1,024 cases and 2,048 controls, the study examined smoking and bladder cancer.", 3072),
        ("In 2019 345 patients were enrolled in the surgical registry.", 345),
    ],
)
def test_sample_size_forms(text: str, expected: int) -> None:
    assert sample_size(text) == expected


def test_the_analysed_total_beats_subgroups_and_background_counts() -> None:
    text = (
        "Malaria is expected to cause 600,000 deaths each year. Our study included 1,101 children (540 girls and "
        "561 boys). Participants with anaemia (n = 310) and without (n = 791) were compared; in 68 of 84 children "
        "treated early, parasites cleared."
    )
    assert sample_size(text) == 1101
    assert sample_size("Concentrations of the drug rose by 2.9% in 2019.") is None


def test_number_words_and_amounts() -> None:
    assert words_to_number("twenty-two") == 22 and words_to_number("one hundred and twelve") == 112
    assert words_to_number("surgery") is None
    assert parse_amount("3.4", "million") == 3_400_000 and parse_amount("12 045") == 12045


@pytest.mark.parametrize(
    ("text", "years"),
    [
        ("After a median follow-up of 6.2 years, 40 patients relapsed.", 6.2),
        ("Patients were followed for 18 months after hernia repair.", 1.5),
        ("Over 10 years of follow-up, the incidence of hepatitis fell.", 10.0),
        ("mean follow-up 4.3 (SD 1.2) years after transplantation", 4.3),
        ("no recurrence at more than 2 years of follow-up", 2.0),
        ("Children were followed up for a median of 30 weeks.", 30 * 7 / 365.25),
        ("Mean follow-up was 14.6 +/- 10.38 months.", 14.6 / 12),  # the mean, not its spread
        ("Follow-up (median, 10.9 years) included interviews.", 10.9),
        ("17 died during follow-up (mean 42 months, range 5-140 months).", 3.5),
        # how long the study ran, when no follow-up is stated
        ("In this 12-week, double-blind, randomised trial, 80 adults took part.", 12 * 7 / 365.25),
        ("Snacks in obesity treatment: a 1-year randomized clinical trial.", 1.0),
        # else the last time point outcomes were measured at
        ("Pain was assessed at baseline and at 3, 6 and 12 months.", 1.0),
        ("Strength was measured at weeks 0, 10, and 15.", 15 * 7 / 365.25),
        ("After 6 weeks, HbA1c was reduced; after 12 weeks the difference was significant.", 12 * 7 / 365.25),
        ("A 2-year trial. Pain was scored at 3 and 6 months.", 2.0),  # the study's length first
    ],
)
def test_follow_up_in_years(text: str, years: float) -> None:
    assert duration(text, "years") == pytest.approx(years, abs=0.001)


@pytest.mark.parametrize(
    "text",
    [
        "At week 4, doses were titrated to 40 mg.",  # a dosing schedule
        "Chronic lung disease at 36 weeks' postmenstrual age was the primary outcome.",  # an age
        "After a 1-week baseline period, patients received melatonin.",  # not the study's length
        "Patients were discharged after 2 days.",  # no outcome measured then
        "The 5-year survival was 40%.",
        "326 patients with a mean age 67.1 +/- 10.6 years participated in the study.",  # an age and its spread
        "171 outpatients with a mean age of 42.5 years were enrolled in this trial.",
    ],
)
def test_time_points_that_are_no_follow_up(text: str) -> None:
    assert duration(text, "years") is None


def test_follow_up_in_the_fields_unit_and_ages_are_not_follow_up() -> None:
    assert duration("followed for 18 months", "months") == pytest.approx(18.0)
    assert duration("Adults aged over 65 years received the pneumococcal vaccine.", "years") is None


def test_a_quantity_with_its_unit_nearest_after_a_cue() -> None:
    text = "Tablets held 20 mg of the drug; the loading dose was 600 mg and the maintenance dose 75 mg."
    assert quantity(text, "mg", ["loading dose"]) == 600
    assert quantity(text, "mg", []) == 20 and quantity(text, "kg", ["dose"]) is None
