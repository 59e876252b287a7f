"""Fields without a dictionary: terms grouped by spelling and meaning into a suggested dictionary.

The terms are oncology outcomes, a subject unrelated to the bundled sample, embedded by the
packaged MiniLM. Abbreviations (OS, PFS) do not embed near their expansions and stay groups
of their own: grouping is deliberately conservative.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.settings.dictionaries import build_dictionary, load_dictionary
from hysem_assets.terms.grouping import cluster_terms, distinctions, group_terms
from hysem_assets.terms.mapping import map_terms
from hysem_assets.terms.suggestions import write_suggested_dictionaries

#: (term, documents naming it)
OUTCOMES = [
    ("overall survival", 3),
    ("Overall Survival", 1),
    ("overall-survival", 1),
    ("OS", 2),
    ("progression free survival", 2),
    ("progression-free survival", 1),
    ("Progression-Free Survival", 1),
    ("PFS", 1),
    ("tumour response", 2),
    ("tumor response", 2),
    ("tumour responses", 1),
    ("fatigue", 1),
    ("Fatigue", 1),
    ("grade 3 neutropenia", 1),
    ("grade 4 neutropenia", 1),
    ("with metastases", 1),
    ("without metastases", 1),
    ("HER2-positive", 1),
    ("HER2-negative", 1),
    ("nausea", 1),
]
#: Groups of OUTCOMES, each under its name: the most frequent member, then the shorter, then the first
#: alphabetically.
GROUPS = {
    "overall survival": {"overall survival", "Overall Survival", "overall-survival"},
    "OS": {"OS"},
    "progression free survival": {
        "progression free survival",
        "progression-free survival",
        "Progression-Free Survival",
    },
    "PFS": {"PFS"},
    "tumor response": {"tumor response", "tumour response", "tumour responses"},
    "Fatigue": {"fatigue", "Fatigue"},
    "grade 3 neutropenia": {"grade 3 neutropenia"},
    "grade 4 neutropenia": {"grade 4 neutropenia"},
    "with metastases": {"with metastases"},
    "without metastases": {"without metastases"},
    "HER2-positive": {"HER2-positive"},
    "HER2-negative": {"HER2-negative"},
    "nausea": {"nausea"},
}


def raw(terms: list[tuple[str, int]], field: str = "outcomes") -> pd.DataFrame:
    rows = [(f"{term}-{doc}", field, term) for term, documents in terms for doc in range(documents)]
    return pd.DataFrame(rows, columns=["doc_id", "field", "raw_term"])


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("term_embeddings")


@pytest.fixture(scope="module")
def grouped(cache_dir: Path):
    encoder = Encoder()
    return map_terms(raw(OUTCOMES), {"outcomes": None}, cache_dir=cache_dir, encoder=encoder), encoder


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return Encoder()


def test_every_term_maps_to_its_group_named_by_its_most_frequent_member(grouped) -> None:
    mapping = grouped[0].mapping.set_index("raw_term")
    assert set(mapping["method"]) == {"grouped"}
    assert {name: set(members.index) for name, members in mapping.groupby("canonical")} == GROUPS
    # Spellings the matcher joins score 1; a term joined by meaning scores its similarity to the name.
    assert mapping.loc[["Overall Survival", "overall-survival", "progression-free survival"], "score"].eq(1.0).all()
    assert 0.85 <= mapping.loc["tumour response", "score"] < 1.0
    fields = grouped[0].fields.set_index("field")
    assert fields.loc["outcomes", ["terms", "grouped", "unmatched", "groups"]].tolist() == [20, 20, 0, 13]
    assert fields.loc["outcomes", ["threshold", "dictionary_cache"]].tolist() == [0.85, "miss"]
    assert grouped[0].unmatched.empty and grouped[0].suggestions.empty


def test_suggested_dictionary_lists_only_the_spellings_the_matcher_needs(grouped) -> None:
    groups = grouped[0].groups.set_index("canonical")
    assert groups.loc["overall survival", ["synonyms", "occurrences"]].tolist() == [[], 5]
    # "tumour responses" is a plural of "tumour response", which the matcher finds from the spelling.
    assert groups.loc["tumor response", "synonyms"] == ["tumour response"]
    assert grouped[0].groups["occurrences"].is_monotonic_decreasing


def test_suggested_dictionary_round_trips_through_the_dictionary_loader(grouped, tmp_path: Path, cache_dir) -> None:
    documents = grouped[0].suggested_dictionaries()
    assert list(documents) == ["outcomes"]
    (path,) = write_suggested_dictionaries(documents, tmp_path / "suggested" / "a-query")
    assert path == tmp_path / "suggested" / "a-query" / "outcomes.yaml"
    assert set(yaml.safe_load(path.read_text(encoding="utf-8"))) == set(GROUPS)
    dictionary = load_dictionary(path)
    assert not dictionary.conflicts
    adopted = map_terms(raw(OUTCOMES), {"outcomes": dictionary}, cache_dir=cache_dir).mapping.set_index("raw_term")
    assert set(adopted["method"]) <= {"exact", "normalized"}
    assert adopted["canonical"].to_dict() == grouped[0].mapping.set_index("raw_term")["canonical"].to_dict()


def test_a_field_name_that_is_no_file_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot name a file"):
        write_suggested_dictionaries({"../outcomes": "a: []\n"}, tmp_path)


def test_term_embeddings_are_cached_by_the_set_of_terms(grouped, cache_dir: Path) -> None:
    again = Encoder()
    shuffled = raw(OUTCOMES[::-1])
    second = map_terms(shuffled, {"outcomes": None}, cache_dir=cache_dir, encoder=again)
    assert again.encoded == 0 and grouped[1].encoded == len(OUTCOMES)
    assert second.fields["dictionary_cache"].tolist() == ["hit"]
    pd.testing.assert_frame_equal(second.mapping, grouped[0].mapping)


def test_fields_with_a_dictionary_map_as_they_do_alone(cache_dir: Path) -> None:
    dictionary = build_dictionary("drugs", {"cisplatin": ["CDDP"], "carboplatin": []})
    drugs = raw([("CDDP", 1), ("Cisplatin", 2), ("carboplatin-based chemotherapy", 1), ("paclitaxel", 1)], "drugs")
    alone = map_terms(drugs, {"drugs": dictionary}, cache_dir=cache_dir)
    together = map_terms(
        pd.concat([drugs, raw(OUTCOMES)]), {"drugs": dictionary, "outcomes": None}, cache_dir=cache_dir
    )
    pd.testing.assert_frame_equal(together.mapping[together.mapping["field"] == "drugs"], alone.mapping)
    pd.testing.assert_frame_equal(together.suggestions, alone.suggestions)
    pd.testing.assert_frame_equal(together.unmatched, alone.unmatched)
    assert list(together.suggested_dictionaries()) == ["outcomes"]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("type 1 diabetes", "type 2 diabetes"),
        ("with dementia", "without dementia"),
        ("grade 3 neutropenia", "grade 4 neutropenia"),
        ("HER2-positive", "HER2-negative"),
        ("metastases", "no metastases"),
        ("hepatitis B", "hepatitis C"),
        ("survival in children", "survival in adults"),
        ("overall survival", "5-year overall survival"),
    ],
)
def test_a_number_letter_or_contrast_word_keeps_terms_apart(a: str, b: str) -> None:
    assert distinctions(a) != distinctions(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("type II diabetes", "type 2 diabetes"),
        ("patients with dementia", "dementia"),
        ("paediatric survival", "pediatric survival"),
        ("progression-free survival", "Progression free survival"),
    ],
)
def test_spelling_and_a_bare_with_do_not(a: str, b: str) -> None:
    assert distinctions(a) == distinctions(b)


def test_close_embeddings_never_cluster_across_a_distinction(encoder: Encoder) -> None:
    terms = ["grade 3 neutropenia", "grade 4 neutropenia", "with metastases", "without metastases"]
    vectors = encoder.encode(terms)
    assert float(vectors[0] @ vectors[1]) > 0.95 and float(vectors[2] @ vectors[3]) > 0.85
    assert len(set(cluster_terms(terms, vectors, min_similarity=0.5))) == 4


def test_only_the_most_frequent_spelling_groups_are_clustered(encoder: Encoder) -> None:
    terms = ["tumor response", "tumour response", "tumour responses"]
    vectors = encoder.encode(terms)
    assert group_terms(terms, vectors, 0.85)[0] == ["tumor response"] * 3
    names, scores = group_terms(terms, vectors, 0.85, max_terms=1)
    assert names == ["tumor response", "tumour response", "tumour response"] and scores.tolist() == [1.0] * 3


def test_unmatched_terms_of_a_field_with_a_dictionary_are_suggested_apart_too(cache_dir: Path) -> None:
    dictionary = build_dictionary("outcomes", {"overall survival": ["OS"]})
    terms = raw([("grade 3 neutropenia", 2), ("grade 4 neutropenia", 1), ("Grade-3 neutropenia", 1)])
    result = map_terms(terms, {"outcomes": dictionary}, cache_dir=cache_dir)
    assert yaml.safe_load(result.suggestions_yaml()["outcomes"]) == {
        "grade 3 neutropenia": [],
        "grade 4 neutropenia": [],
    }
