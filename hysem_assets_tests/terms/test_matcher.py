"""The term matcher's rules, on spellings alone: variants share keys, different terms do not."""

from __future__ import annotations

import pytest

from hysem_assets.core.matcher import TermMatcher, is_abbreviation, term_keys


@pytest.mark.parametrize(
    ("spellings", "key"),
    [
        (["Random-Forest", "random forest", "RandomForest", "random_forest"], "randomforest"),
        (["PM₂.₅", "PM 2.5", "pm2,5", "PM-2.5"], "pm2.5"),
        (["NO₂", "NO2", "NO 2"], "NO2"),
        (["Île-de-France", "Ile de France"], "iledefrance"),
        (["Crohn's disease", "Crohn’s disease", "Crohns disease"], "crohnsdisease"),
    ],
)
def test_spelling_variants_share_their_first_key(spellings: list[str], key: str) -> None:
    assert {term_keys(s)[0] for s in spellings} == {key}


@pytest.mark.parametrize(
    ("plural", "singular"),
    [("Random-Forests", "random forest"), ("Studies", "study"), ("boxes", "box"), ("days", "day"), ("LSTMs", "LSTM")],
)
def test_a_plural_also_keys_as_its_singular(plural: str, singular: str) -> None:
    assert term_keys(singular)[0] in term_keys(plural)


@pytest.mark.parametrize(
    ("a", "b"), [("PM2.5", "PM25"), ("PM10", "PM1.0"), ("ozone", "zone"), ("NO2", "no2"), ("NO", "no")]
)
def test_different_terms_keep_different_keys(a: str, b: str) -> None:
    assert term_keys(a)[0] != term_keys(b)[0]


def test_abbreviations_are_short_and_hold_a_capital() -> None:
    assert [is_abbreviation(t) for t in ("NO2", "PM10", "U.S.", "PM 10", "RF", "kNN", "Co", "pH")] == [True] * 8
    assert [is_abbreviation(t) for t in ("PM2.5", "XGBoost", "ozone", "LSTMs", "no")] == [False] * 5


def test_short_symbols_never_match_ordinary_words() -> None:
    matcher = TermMatcher({"As": "arsenic", "Co": "cobalt", "Ga": "gallium", "CNN": "convolutional network"})
    assert matcher.find("We saw, as expected, co-exposure to gas and As; CNNs and Co") == [
        "arsenic",
        "convolutional network",
        "cobalt",
    ]
    assert (
        matcher.lookup("gas") is None
        and matcher.lookup("as") is None
        and matcher.lookup("CNNs") == "convolutional network"
    )


def test_a_term_list_item_and_the_same_words_in_text_map_alike() -> None:
    matcher = TermMatcher.from_mapping({"PM10": [], "nitric oxide": ["NO"], "key": [], "study": [], "PM2.5": []})
    for term, canonical in [
        ("PM 10", "PM10"),
        ("PM10s", None),
        ("pm10", None),
        ("no", None),
        ("NO", "nitric oxide"),
        ("keys", "key"),
        ("kies", None),
        ("studies", "study"),
        ("PM2,5", "PM2.5"),
        ("Gas", None),
    ]:
        assert matcher.lookup(term) == canonical, term
        assert matcher.find(f"a {term} b") == ([canonical] if canonical else []), term


def test_spellings_without_letters_or_digits_are_ignored() -> None:
    matcher = TermMatcher({"—": "dash", "ozone": "ozone"})
    assert matcher.canonical == ("ozone",) and matcher.lookup("—") is None and matcher.find("— ozone") == ["ozone"]


def test_spellings_that_vary_into_one_key_keep_the_first_canonical_in_text_and_lists() -> None:
    matcher = TermMatcher({"PM2.5": "first", "PM 2.5": "second"})
    assert matcher.lookup("PM-2.5") == "first" and matcher.find("levels of PM 2.5 rose") == ["first"]
