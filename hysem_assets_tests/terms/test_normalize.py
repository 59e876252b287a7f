from __future__ import annotations

import pytest

from hysem_assets.terms import normalize_term


@pytest.mark.parametrize(
    ("spellings", "key"),
    [
        (["Random-Forests", "random forest", "RandomForest", "random_forest"], "randomforest"),
        (["PM₂.₅", "PM 2.5", "pm2,5", "PM-2.5"], "pm2.5"),
        (["NO₂", "no2", "NO2."], "no2"),
        (["Île-de-France", "Ile de France"], "iledefrance"),
        (["LSTMs", "LSTM"], "lstm"),
        (["Studies", "study"], "study"),
    ],
)
def test_spelling_variants_share_one_key(spellings: list[str], key: str) -> None:
    assert {normalize_term(s) for s in spellings} == {key}


@pytest.mark.parametrize(("a", "b"), [("PM2.5", "PM25"), ("PM10", "PM1.0"), ("mass", "mas"), ("virus", "viru"), ("ozone", "zone")])
def test_different_terms_keep_different_keys(a: str, b: str) -> None:
    assert normalize_term(a) != normalize_term(b)
