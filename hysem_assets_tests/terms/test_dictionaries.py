from __future__ import annotations

from pathlib import Path

import pytest

from hysem_assets.settings.dictionaries import (
    DictionaryConflictWarning,
    DictionaryError,
    build_dictionary,
    load_dictionaries,
)


def test_a_synonym_under_two_canonical_terms_warns_and_stays_with_the_first() -> None:
    with pytest.warns(
        DictionaryConflictWarning,
        match="'CHD' is listed under both 'coronary heart disease' and 'congenital heart disease'",
    ):
        dictionary = build_dictionary(
            "health_outcome",
            {
                "coronary heart disease": ["CHD", "coronary disease"],
                "congenital heart disease": ["CHD", "congenital heart defects"],
            },
        )
    assert dictionary.entries == {
        "coronary heart disease": ("coronary heart disease", "CHD", "coronary disease"),
        "congenital heart disease": ("congenital heart disease", "congenital heart defects"),
    }
    (conflict,) = dictionary.conflicts
    assert (conflict.kept_under, conflict.dropped_from) == ("coronary heart disease", "congenital heart disease")


def test_spellings_equal_once_normalized_are_conflicts_too() -> None:
    with pytest.warns(DictionaryConflictWarning, match="'PM-2.5' is listed under both 'PM2.5' and 'PM10'"):
        dictionary = build_dictionary("pollutant_terms", {"PM2.5": ["PM 2.5"], "PM10": ["PM-2.5", "PM 10"]})
    assert dictionary.entries["PM10"] == ("PM10", "PM 10")


def test_digest_follows_content() -> None:
    one = build_dictionary("f", {"ozone": ["O3"]})
    assert one.digest == build_dictionary("g", {"ozone": ["O3"]}).digest
    assert one.digest != build_dictionary("f", {"ozone": ["O3", "ground-level ozone"]}).digest


def test_load_dictionaries_reads_one_file_per_field(tmp_path: Path) -> None:
    (tmp_path / "geography.yaml").write_text("Vietnam: [Viet Nam]\nHanoi:\n", encoding="utf-8")
    (tmp_path / "pollutant_terms.yaml").write_text("ozone: [O3]\n", encoding="utf-8")
    dictionaries = load_dictionaries(tmp_path)
    assert sorted(dictionaries) == ["geography", "pollutant_terms"]
    assert dictionaries["geography"].spellings == [("Vietnam", "Vietnam"), ("Viet Nam", "Vietnam"), ("Hanoi", "Hanoi")]


def test_a_malformed_dictionary_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "geography.yaml").write_text("Vietnam: Viet Nam\n", encoding="utf-8")
    with pytest.raises(DictionaryError, match="geography.yaml must map each canonical term to a list"):
        load_dictionaries(tmp_path)


def test_a_spelling_yaml_reads_as_a_boolean_must_be_quoted(tmp_path: Path) -> None:
    (tmp_path / "pollutant_terms.yaml").write_text("nitric oxide: [NO]\n", encoding="utf-8")
    with pytest.raises(DictionaryError, match=r"pollutant_terms.yaml: False is not text; quote the spelling"):
        load_dictionaries(tmp_path)
