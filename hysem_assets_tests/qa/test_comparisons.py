"""Numbers and comparisons in questions: every way of writing a number, every bound word, no false comparisons."""

from __future__ import annotations

import pytest

from hysem_assets.qa.comparisons import Comparison, format_number, parse_comparison, years_per


@pytest.mark.parametrize(
    "written",
    ["10 000", "10,000", "10000", "10k", "10K", "ten thousand", "10\u202f000", "10 thousand"],
)
def test_every_spelling_of_ten_thousand_is_one_number(written):
    found = parse_comparison(f"Which studies had more than {written} participants?")
    assert (found.op, found.low, found.high, found.unit) == (">", 10_000, None, "participants")


@pytest.mark.parametrize(
    "phrase, op, low, high",
    [
        ("above 5 years", ">", 5, None),
        ("over 1.5 million adults", ">", 1_500_000, None),
        ("exceeding 200 patients", ">", 200, None),
        ("at least 5 years", ">=", 5, None),
        ("no fewer than 300 women", ">=", 300, None),
        ("5,000 participants or more", ">=", 5_000, None),
        ("2 million or more adults", ">=", 2_000_000, None),
        ("fewer than 100 patients", "<", None, 100),
        ("below 1", "<", None, 1),
        ("under 18 months", "<", None, 18),
        ("at most 3 years", "<=", None, 3),
        ("no more than 50 children", "<=", None, 50),
        ("between 2 and 5 years", "between", 2, 5),
        ("from 1,000 to 5,000 participants", "between", 1_000, 5_000),
        ("between 5 and 2 years", "between", 2, 5),
        ("a publication in 2021 or later", ">=", 2021, None),
        ("results from 2010 or earlier", "<=", None, 2010),
    ],
)
def test_bound_words_become_operators_and_bounds(phrase, op, low, high):
    found = parse_comparison(f"Which studies report {phrase}?")
    assert (found.op, found.low, found.high) == (op, low, high)


@pytest.mark.parametrize(
    "question",
    [
        "Which studies were published in 2019?",
        "How does PM2.5 relate to stroke?",
        "What did the 10 largest cohorts find?",
        "Which models had an AUC of 0.85?",
    ],
)
def test_a_bare_number_is_no_comparison(question):
    assert parse_comparison(question) is None


def test_the_unit_is_read_after_the_number_and_left_empty_when_none_is_written():
    assert parse_comparison("AUC above 0.8").unit is None
    assert parse_comparison("a follow-up of more than 24 months").unit == "months"
    assert parse_comparison("more than 10% of patients").unit == "%"


def test_holds_applies_the_operator_and_scaled_converts_the_bounds():
    above = Comparison(">", 10_000, None, "participants", "")
    assert above.holds(10_001) and not above.holds(10_000) and not above.holds(None)
    between = parse_comparison("between 12 and 36 months")
    in_years = between.scaled(years_per("months"))
    assert (in_years.low, in_years.high) == (1, 3) and in_years.holds(2) and not in_years.holds(3.5)
    assert in_years.describe() == "between 1 and 3"


def test_time_units_convert_to_years_and_other_words_are_no_time_unit():
    assert years_per("years") == 1 and years_per("Year") == 1 and years_per("months") == pytest.approx(1 / 12)
    assert years_per("weeks") == pytest.approx(7 / 365.25) and years_per("participants") is None


def test_numbers_are_written_back_as_a_reader_expects():
    assert [format_number(v) for v in (10_000, 0.8, 2.5, 1_234_567.0)] == ["10,000", "0.8", "2.5", "1,234,567"]
