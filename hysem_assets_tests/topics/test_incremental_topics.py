"""Re-runs of the topic model: new works are placed in the fitted topics; a refit only when the corpus moved."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from dagster import DagsterInstance, build_asset_context

from hysem_assets.defs.enrichment import STATE_FILE, topics
from hysem_assets.defs.resources import ReviewConfig, TopicModeller
from hysem_assets.settings.environment import hysem_home
from hysem_assets.stores.work_cache import WorkChanges
from hysem_assets.topics.config import TopicSettings
from hysem_assets.topics.incremental import TopicsRun, TopicsState, update_topics
from hysem_assets_tests.topics.corpora import sample_abstracts

GRID = {"n_topics": [3, 4], "passes": [10]}
#: What a kept model keeps of its topic table; prevalence and document counts are counted again.
KEPT = ["topic", "label", "top_words", "word_weights", "coherence"]
FITTED = 50


def settings(refit_share: float = 0.1, **grid) -> TopicSettings:
    return TopicSettings.model_validate({"grid": GRID | grid, "training": {"refit_share": refit_share}})


def update(documents: pd.DataFrame, previous: TopicsState | None, **options) -> TopicsRun:
    """A run in which each document is its own work, as a DOI-less cluster is."""
    config = options.pop("config", settings())
    return update_topics(documents, documents["doc_id"].tolist(), config, previous, **options)


@pytest.fixture(scope="module")
def abstracts() -> pd.DataFrame:
    return sample_abstracts()


@pytest.fixture(scope="module")
def fitted(abstracts: pd.DataFrame) -> TopicsRun:
    return update(abstracts.iloc[:FITTED], None)


def test_a_few_new_works_are_placed_in_the_fitted_topics(abstracts: pd.DataFrame, fitted: TopicsRun) -> None:
    assert fitted.refit and fitted.reason == "no stored model"
    assert fitted.changes == WorkChanges(new=FITTED, processed=FITTED)

    same = update(abstracts.iloc[:FITTED], fitted.state)
    assert not same.refit and same.changes == WorkChanges(unchanged=FITTED, reused=FITTED)
    pd.testing.assert_frame_equal(same.model.documents, fitted.model.documents)

    # Three abstracts the model has not seen, and a copy of a fitted one that has phrases in it.
    original = abstracts[abstracts["text"].str.contains("heart failure")].iloc[[0]]
    grown = pd.concat([abstracts, original.assign(doc_id="copy")], ignore_index=True)
    run = update(grown, fitted.state)
    assert not run.refit
    assert run.reason == "8% of the fitted works new, changed or dropped <= refit_share 10%"
    assert run.changes == WorkChanges(new=4, unchanged=FITTED, reused=FITTED, processed=4)

    before, after = fitted.model, run.model
    pd.testing.assert_frame_equal(after.topics[KEPT], before.topics[KEPT])
    pd.testing.assert_frame_equal(after.grid, before.grid)
    assert after.chosen == before.chosen and after.vocabulary == before.vocabulary
    rows = after.documents.set_index("doc_id")
    pd.testing.assert_frame_equal(rows.iloc[:FITTED], before.documents.set_index("doc_id"))
    new = rows.iloc[FITTED:]
    assert new.index.tolist() == ["w51", "w52", "w53", "copy"]
    assert (new["status"] == "ok").all() and new["dominant_topic"].between(1, len(after.topics)).all()
    # The copy is read as its original was in training: same phrases, dictionary and mixture.
    assert "heart_failure" in before.vocabulary
    pd.testing.assert_series_equal(rows.loc["copy"], rows.loc[original["doc_id"].item()], check_names=False)
    assert after.topics["documents"].sum() == len(grown) and after.topics["prevalence"].sum() == pytest.approx(1.0)
    assert not after.topics["prevalence"].equals(before.topics["prevalence"])


def test_a_change_of_settings_or_labeller_refits(abstracts: pd.DataFrame, fitted: TopicsRun) -> None:
    corpus = abstracts.iloc[:FITTED]
    other = update(corpus, fitted.state, config=settings(n_topics=[3, 5]))
    assert other.refit and other.reason == "topic settings changed"
    assert other.changes == WorkChanges(unchanged=FITTED, processed=FITTED)
    assert other.state.model is other.model and other.state.fingerprint != fitted.state.fingerprint

    relabelled = update(corpus, fitted.state, labeller={"model": "labeller-7b"}, label_topic=lambda w: w[0].upper())
    assert relabelled.refit and relabelled.reason == "topic labeller changed"
    assert relabelled.model.topics["label"].str.isupper().all()

    # refit_share only decides when to refit, so a change of it keeps the model.
    assert not update(corpus, fitted.state, config=settings(refit_share=0.5)).refit


def test_more_than_refit_share_of_the_fitted_works_moved_refits(abstracts: pd.DataFrame, fitted: TopicsRun) -> None:
    corpus = abstracts.iloc[:FITTED]
    edited = corpus.iloc[2:].copy()  # two works dropped, two changed: 8%
    edited.loc[edited.index[:2], "text"] += " Heart failure admissions rose with ozone."
    kept = update(edited, fitted.state)
    assert not kept.refit
    assert kept.changes == WorkChanges(changed=2, unchanged=46, dropped=2, reused=46, processed=2)
    rows, before = kept.model.documents.set_index("doc_id"), fitted.model.documents.set_index("doc_id")
    assert (rows["tokens"].iloc[:2] > before.loc[rows.index[:2], "tokens"]).all()  # changed: read again
    assert len(rows) == 48 and not {"w01", "w02"} & set(rows.index)

    moved = corpus.copy()  # six of fifty changed: 12%
    moved.loc[moved.index[:6], "text"] += " Heart failure admissions rose with ozone."
    refit = update(moved, fitted.state)
    assert refit.refit and refit.reason == "12% of the fitted works new, changed or dropped > refit_share 10%"
    assert refit.changes == WorkChanges(changed=6, unchanged=44, processed=FITTED)

    # Additions add up run after run: the share counts against the fitted works, not the last run's.
    second = update(abstracts, fitted.state)  # three new: 6%
    again = pd.concat([abstracts, abstracts.iloc[:3].assign(doc_id=lambda d: d["doc_id"] + "-again")])
    third = update(again, second.state)  # six new since the fit: 12%
    assert not second.refit and third.refit and third.reason.startswith("12% ")
    assert third.changes == WorkChanges(new=3, unchanged=53, processed=56)

    assert update(corpus, fitted.state, config=settings(refit_share=0)).reason == "refit_share is 0"


def test_the_asset_keeps_its_model_across_materializations(config: Path, abstracts: pd.DataFrame) -> None:
    (config / "topics.yaml").write_text(yaml.safe_dump({"grid": GRID}), encoding="utf-8")
    no_parses = pd.DataFrame({"cluster_id": [], "error": [], "markdown": []})

    def materialize(documents: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
        corpus = pd.DataFrame(
            {
                "cluster_id": documents["doc_id"],
                "doi": "10.1/" + documents["doc_id"].str[:3],  # who a work is, whatever its cluster's id
                "title": None,
                "abstract": documents["text"],
            }
        )
        context = build_asset_context(partition_key="q", instance=instance)
        output = topics(
            context,
            topic_modeller=TopicModeller(),
            review_config=ReviewConfig(),
            deduped_corpus=corpus,
            parsed_docs=no_parses,
        )
        return output.value, {name: value.value for name, value in output.metadata.items()}

    def counts(metadata: dict) -> WorkChanges:
        return WorkChanges(**{name: metadata[f"works_{name}"] for name in WorkChanges.__dataclass_fields__})

    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("queries", ["q"])
        first, metadata = materialize(abstracts.iloc[:FITTED])
        assert metadata["refit"] is True and metadata["refit_reason"] == "no stored model"
        assert counts(metadata) == WorkChanges(new=FITTED, processed=FITTED)
        assert (hysem_home() / "topics" / "q" / STATE_FILE).is_file()
        topic_table = pd.read_parquet(hysem_home() / "topics" / "q" / "topic_table.parquet")

        # Three works arrive, and one work's cluster takes a new id as a record joins it.
        grown = abstracts.assign(doc_id=abstracts["doc_id"].replace({"w05": "w05-merged"}))
        second, metadata = materialize(grown)
        assert metadata["refit"] is False and metadata["refit_reason"].startswith("6% ")
        assert counts(metadata) == WorkChanges(new=3, unchanged=FITTED, reused=FITTED, processed=3)
        assert second["cluster_id"].iloc[4] == "w05-merged"
        pd.testing.assert_frame_equal(second.iloc[:FITTED].drop(columns="cluster_id"), first.drop(columns="cluster_id"))
        assert second["dominant_label"].iloc[FITTED:].isin(topic_table["label"]).all()
        kept = pd.read_parquet(hysem_home() / "topics" / "q" / "topic_table.parquet")
        shown = ["topic", "label", "top_words", "coherence"]
        pd.testing.assert_frame_equal(kept[shown], topic_table[shown])

        (config / "topics.yaml").write_text(yaml.safe_dump({"grid": GRID | {"passes": [5]}}), encoding="utf-8")
        _, metadata = materialize(grown)
        assert metadata["refit"] is True and metadata["refit_reason"] == "topic settings changed"
