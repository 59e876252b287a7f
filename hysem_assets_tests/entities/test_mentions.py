"""Entities of works' texts through the shipped model: placed in their chunks and sentences, named once however
they are spelled, related a few pairs a sentence, and read within a window budget however long the text."""

import pandas as pd
import pytest

from hysem_assets.core.matcher import TermMatcher
from hysem_assets.entities.mentions import (
    ABSTRACT,
    ABSTRACT_WINDOWS,
    FULL_TEXT,
    FULL_TEXT_WINDOWS,
    GENERIC,
    PAIRS_PER_SENTENCE,
    PAIRS_PER_TEXT,
    WorkText,
    candidate_pairs,
    entity_name,
    marked,
    mention_tables,
    opening,
    read_work,
    reading_counts,
    singular,
)
from hysem_assets.entities.tagger import TYPES, EntityModel, load
from hysem_assets.retrieval.chunking import work_chunks

BUDGETS = {ABSTRACT: ABSTRACT_WINDOWS, FULL_TEXT: FULL_TEXT_WINDOWS}
TITLE = "Predicting hospital readmission with random forests and gradient boosting"
ABSTRACT_TEXT = (
    "We compare a random forest (RF) with gradient boosting machines for predicting readmission of patients "
    "with heart failure. The RF was trained on electronic health records of 5,120 admissions. "
    "Performance was measured by the area under the receiver operating characteristic curve (AUC) and by "
    "calibration. The RF reached an AUC of 0.81, and gradient boosting an AUC of 0.79. "
    "Our method is simple to apply."
)
FULL = (
    "# Methods\n\nWe trained a random forest and a logistic regression model on admission records. "
    "Missing values were imputed with multiple imputation.\n\n# Results\n\n"
    "The random forest outperformed logistic regression on the AUC for readmission prediction.\n"
)
LISTING = (
    "We evaluated random forests, support vector machines, logistic regression, gradient boosting, "
    "k-nearest neighbours, naive Bayes classifiers and neural networks for sentiment classification, "
    "named entity recognition and machine translation on accuracy, precision, recall and F1 score."
)


@pytest.fixture(scope="module")
def model() -> EntityModel:
    return load()


def _chunks(cluster_id: str, title: str, abstract: str, full_text: str | None) -> pd.DataFrame:
    works = pd.DataFrame([{"cluster_id": cluster_id, "title": title, "abstract": abstract}])
    documents = pd.DataFrame([{"cluster_id": cluster_id, "markdown": full_text}])
    chunks = work_chunks(works, documents, max_tokens=30, overlap=5)
    return chunks.assign(part=chunks["evidence"].map({"abstract": ABSTRACT, "full text": FULL_TEXT}))


def test_mentions_of_an_abstract_and_full_text_are_typed_placed_and_named(model: EntityModel) -> None:
    work = WorkText("w1", opening(TITLE, ABSTRACT_TEXT), FULL)
    read = read_work(model, work, BUDGETS)
    mentions, relations = mention_tables([work], [read], _chunks("w1", TITLE, ABSTRACT_TEXT, FULL), {})

    assert set(mentions["part"]) == {ABSTRACT, FULL_TEXT} and set(mentions["type"]) <= set(TYPES)
    assert "Method" in set(mentions["type"])
    chunks = _chunks("w1", TITLE, ABSTRACT_TEXT, FULL).set_index("chunk_id")["text"]
    for row in mentions.itertuples():
        text = work.parts()[row.part]
        assert text[row.start : row.end] == row.text and row.text in row.sentence and row.sentence in text
        if row.sentence != TITLE and not row.sentence.startswith("#"):  # titles and headings are no chunk's text
            assert row.chunk_id is not None and row.text in chunks[row.chunk_id]
    # "random forests" in the title, "random forest (RF)", "The RF": one name, whatever type the model gives them
    spelled = mentions[mentions["text"].str.contains(r"\bRF\b|random forest", case=False)]
    assert spelled["text"].str.contains(r"\bRF\b").any() and set(spelled["name"]) == {"random forest"}
    assert not {"rf", "random forests", "the random forest"} & set(mentions["name"])
    assert (relations["probability"].between(0, 1)).all() and set(relations["cluster_id"]) <= {"w1"}


def test_abbreviations_a_work_defines_join_their_long_form_and_other_works_follow() -> None:
    defining = WorkText("a", "Support vector machines (SVM) and the SVM kernel.")
    using = WorkText("b", "An SVM was trained.")
    reads = [
        {ABSTRACT: {"entities": [["Method", 0, 23], ["Method", 38, 41]], "relations": [], "windows": 1,
                    "truncated": False}},
        {ABSTRACT: {"entities": [["Method", 3, 6]], "relations": [], "windows": 1, "truncated": False}},
    ]  # fmt: skip
    mentions, _ = mention_tables([defining, using], reads, _chunks("x", "", "", None), {})
    assert list(mentions["text"]) == ["Support vector machines", "SVM", "SVM"]
    assert set(mentions["name"]) == {"support vector machine"}
    assert mentions["chunk_id"].isna().all()  # no chunk was given for these works


def test_names_go_through_canonical_terms_and_are_singular_in_lower_case() -> None:
    terms = TermMatcher({"XGBoost": "XGBoost", "extreme gradient boosting": "XGBoost"})
    assert entity_name("Extreme Gradient Boosting", {}, terms) == "xgboost"
    assert entity_name("the convolutional  networks", {}, terms) == "convolutional network"
    assert entity_name("long short-term memory (LSTM)", {}, terms) == "long short-term memory"
    assert entity_name("RF)", {"RF": "random forest"}, terms) == "random forest"  # a bracket the span cut
    assert entity_name("random forest (", {}, terms) == "random forest"
    assert [singular(word) for word in ("analysis", "classes", "studies", "CNNs", "boxes", "gas", "analyses")] == [
        "analysis", "class", "study", "CNNs", "box", "gas", "analysis",
    ]  # fmt: skip


def test_relations_are_asked_of_a_few_near_pairs_a_sentence(model: EntityModel) -> None:
    assert candidate_pairs(6) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert candidate_pairs(6, limit=20)[-1] == (3, 5) and len(candidate_pairs(6, limit=20)) == 9
    assert marked("A and B.", (6, 7), (0, 1)) == "<< A >> and [[ B ]]."

    work = WorkText("w2", LISTING)
    read = read_work(model, work, BUDGETS)
    mentions, relations = mention_tables([work], [read], _chunks("x", "", "", None), {})
    named = mentions[mentions["type"] != GENERIC]
    assert len(named) > PAIRS_PER_SENTENCE + 1  # more entities than pairs asked
    assert 0 < len(relations) <= PAIRS_PER_SENTENCE
    assert (relations["sentence"] == LISTING).all() and relations["label"].str.len().gt(0).all()
    assert set(relations["first"]) | set(relations["second"]) <= set(named["name"])


def test_a_200000_character_document_is_read_within_the_window_budget_and_reported(model: EntityModel) -> None:
    paragraph = "The random forest was compared with logistic regression on the AUC. " * 6 + "\n\n"
    long_text = (paragraph * (200_000 // len(paragraph) + 1))[:200_000]
    work = WorkText("long", opening("A long report", "A short abstract on random forests."), long_text)
    read = read_work(model, work, BUDGETS)
    assert read[FULL_TEXT]["windows"] == FULL_TEXT_WINDOWS and read[FULL_TEXT]["truncated"]
    assert read[ABSTRACT]["windows"] == 1 and not read[ABSTRACT]["truncated"]
    # nothing past the budget (64 windows of at most 254 word pieces) was tagged, nor more pairs asked than allowed
    assert 0 < max(end for _, _, end in read[FULL_TEXT]["entities"]) < 100_000
    assert len(read[FULL_TEXT]["relations"]) <= PAIRS_PER_TEXT
    counts = reading_counts([read], [work])
    assert counts == {"windows": {ABSTRACT: 1, FULL_TEXT: FULL_TEXT_WINDOWS}, "truncated": ["long"]}
