"""Dictionary matching with spelling variants; numbers read by regular expressions."""

from __future__ import annotations

from hysem_assets.core.matcher import TermMatcher
from hysem_assets.extraction.numbers import metric_values, sample_size
from hysem_assets.settings.dictionaries import load_dictionary
from hysem_assets.settings.environment import config_dir

DICTIONARIES = config_dir() / "dictionaries"


def dictionary(field: str) -> TermMatcher:
    return load_dictionary(DICTIONARIES / f"{field}.yaml").matcher


def test_variants_of_case_hyphens_plurals_subscripts_markup_and_accents():
    methods, pollutants, places = dictionary("ml_methods_used"), dictionary("pollutant_terms"), dictionary("geography")
    assert methods.find("Random-Forests, an RF and bosques aleatorios") == ["random forest"]
    assert methods.find("two CNNs and a long short term memory model") == [
        "convolutional neural network",
        "long short-term memory network",
    ]
    assert pollutants.find("PM<sub>2.5</sub>, PM 2.5, pm-2.5, PM₂.₅ and NO₂") == ["PM2.5", "NO2"]
    assert places.find("Montréal and Quebec") == ["Montreal", "Quebec"]


def test_short_capital_abbreviations_match_only_in_capitals():
    pollutants, places = dictionary("pollutant_terms"), dictionary("geography")
    assert pollutants.find("co-exposures were adjusted for") == []
    assert pollutants.find("CO and NO2") == ["CO", "NO2"]
    assert places.find("let us see") == [] and places.find("in the US") == ["United States"]


def test_the_leftmost_longest_term_wins_where_terms_overlap():
    pollutants, methods = dictionary("pollutant_terms"), dictionary("ml_methods_used")
    assert pollutants.find("fine particulate matter and PM10") == ["PM2.5", "PM10"]
    assert methods.find("a temporal convolutional network and generalised random forests") == [
        "temporal convolutional network",
        "causal forest",
    ]
    assert dictionary("health_outcome").find("Blood pressure variability predicts events") == [
        "blood pressure variability"
    ]


def test_sample_sizes_from_explicit_n_or_counts_of_people():
    assert sample_size("Participants (n = 1,234) were followed; 48 were lost.") == 1234
    assert sample_size("We followed 3.4 million adults in 2012-2020.") == 3_400_000
    assert sample_size("We linked 48,213 emergency admissions to daily PM2.5.") == 48213
    assert sample_size("Concentrations rose by 2.9% in 2019.") is None


def test_metric_values_follow_their_names():
    found = metric_values(
        "gradient boosting achieved an R2 of 0.74; the odds ratio was 1.04 (95% CI 1.02-1.06); "
        "MAPE 7.2%, and the hazard ratio for 12-14 µg/m3 was 1.21.",
        dictionary("metrics"),
    )
    assert [(m["name"], m["value"], m["unit"], m["ci_low"], m["ci_high"]) for m in found] == [
        ("R2", 0.74, None, None, None),
        ("odds ratio", 1.04, None, 1.02, 1.06),
        ("MAPE", 7.2, "%", None, None),
    ]


def test_every_dictionary_is_well_formed():
    for path in DICTIONARIES.glob("*.yaml"):
        assert load_dictionary(path).matcher.canonical
