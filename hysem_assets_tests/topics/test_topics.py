from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from hysem_assets.topics.config import TopicSettings, TopicSettingsError, load_topic_settings
from hysem_assets.topics.grid import TopicModelError
from hysem_assets.topics.model import build_topics
from hysem_assets.topics.view import intertopic_figure, write_intertopic_view
from hysem_assets_tests.topics.corpora import THEMES, planted_corpus


def settings(**grid) -> TopicSettings:
    return TopicSettings.model_validate({"grid": {"n_topics": [2, 3, 4, 5], "passes": [10]} | grid})


@pytest.fixture(scope="module")
def planted() -> pd.DataFrame:
    bad = pd.DataFrame({"doc_id": ["blank", "missing", "stopwords"], "text": ["   ", None, "the and of which were"]})
    return pd.concat([planted_corpus(), bad], ignore_index=True)


@pytest.fixture(scope="module")
def model(planted: pd.DataFrame):
    return build_topics(planted, settings(), workers=2)


def test_the_most_coherent_model_recovers_the_planted_themes(model) -> None:
    assert model.chosen["n_topics"] == len(THEMES)
    trained = model.grid[model.grid["status"] == "trained"]
    assert len(trained) == 4 and trained["coherence"].notna().all()
    assert model.chosen["coherence"] == pytest.approx(trained["coherence"].max())
    assert model.grid.loc[model.grid["chosen"], "n_topics"].tolist() == [3]
    found = {}
    for row in model.topics.itertuples():
        theme = max(THEMES, key=lambda name: len(set(row.top_words[:5]) & set(THEMES[name])))
        assert len(set(row.top_words[:5]) & set(THEMES[theme])) >= 4, row.top_words
        found[theme] = row.topic
    assert set(found) == set(THEMES)
    assert np.isfinite(model.topics["coherence"]).all()
    assert model.topics["prevalence"].sum() == pytest.approx(1.0)
    assert all(len(w) == len(ws) == 10 for w, ws in zip(model.topics["top_words"], model.topics["word_weights"]))


def test_every_document_gets_its_theme_or_a_flag(model) -> None:
    documents = model.documents.set_index("doc_id")
    assert documents.loc[["blank", "missing", "stopwords"], "status"].tolist() == ["empty", "empty", "no_words"]
    assert documents.loc[["blank", "stopwords"], "dominant_topic"].isna().all()
    modelled = documents[documents["status"] == "ok"]
    assert len(modelled) == 60
    mixture = modelled[[f"topic_{k}" for k in (1, 2, 3)]].to_numpy()
    np.testing.assert_allclose(mixture.sum(axis=1), 1.0, atol=1e-6)
    themes = modelled.index.str.split("-").str[0]
    purity = pd.crosstab(themes, modelled["dominant_topic"]).max(axis=1).sum() / len(modelled)
    assert purity >= 0.95
    assert any("blank" in note and "missing" in note for note in model.notes)


def test_workers_change_speed_not_results(planted: pd.DataFrame, model) -> None:
    serial = build_topics(planted, settings(), workers=1)
    pd.testing.assert_frame_equal(serial.grid.drop(columns="seconds"), model.grid.drop(columns="seconds"))
    pd.testing.assert_frame_equal(serial.documents, model.documents)


def test_intertopic_view_is_a_self_contained_page_and_a_png(model, tmp_path) -> None:
    view = write_intertopic_view(model, tmp_path)
    page = view.html.read_text(encoding="utf-8")
    assert "new LDAvis(" in page and '"topic.order"' in page
    assert 'src="http' not in page and 'href="http' not in page and "LDAvis_load_lib" not in page
    assert view.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and view.png.stat().st_size > 10_000
    assert view.coordinates["topic"].tolist() == [1, 2, 3]
    assert view.coordinates["prevalence"].sum() == pytest.approx(100.0)


def test_the_map_sets_each_number_and_label_where_no_other_text_covers_it(tmp_path) -> None:
    rng = np.random.default_rng(7)
    n = 18  # crowded round the origin: drawn where they were wanted, the labels would pile up
    coordinates = pd.DataFrame(
        {
            "topic": range(1, n + 1),
            "x": rng.normal(0, 0.02, n),
            "y": rng.normal(0, 0.02, n),
            "prevalence": rng.uniform(1, 10, n),
            "label": [f"air pollution, heart failure, theme {k}" for k in range(1, n + 1)],
        }
    )
    figure = intertopic_figure(coordinates)
    figure.savefig(tmp_path / "map.png")
    axes, renderer = figure.axes[0], figure.canvas.get_renderer()
    boxes = [text.get_window_extent(renderer) for text in axes.texts]
    assert len(boxes) == 2 * n
    assert not [(a, b) for a, b in combinations(boxes, 2) if a.overlaps(b)]
    frame = axes.get_window_extent(renderer)
    assert all(frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1 for box in boxes)
    assert len(axes.lines) > 2  # leader lines (beside the two axis lines) tie moved labels to their circles


def test_a_corpus_smaller_than_the_topics_asked_for_says_so() -> None:
    tiny = planted_corpus(per_theme=1)
    none = build_topics(tiny, settings(n_topics=[5, 8], no_below=[1], no_above=[1.0]))
    assert none.empty and none.chosen["n_topics"] == 0  # a tiny partition flows on, without topics
    assert none.notes == ["No topics: 3 documents with words, fewer than the grid's smallest topic count."]
    with pytest.raises(TopicModelError, match=r"the dictionary filter .* leaves 0 words"):  # a setting to fix
        build_topics(tiny, settings(n_topics=[2], no_below=[10], no_above=[1.0]))
    shrunk = build_topics(tiny, settings(n_topics=[2, 5], no_below=[1], no_above=[1.0]))
    assert shrunk.chosen["n_topics"] == 2
    skipped = shrunk.grid[shrunk.grid["status"] == "skipped"]
    assert skipped["n_topics"].tolist() == [5] and "only 3 documents" in skipped["reason"].iloc[0]
    assert any("1 of 2 grid points were skipped" in note for note in shrunk.notes)


def test_documents_without_words_or_columns_are_rejected_clearly() -> None:
    with pytest.raises(TopicModelError, match="None of the 2 documents has words"):
        build_topics(pd.DataFrame({"doc_id": ["a", "b"], "text": ["", "and the"]}))
    with pytest.raises(TopicModelError, match=r"lack the column\(s\) \['text'\]"):
        build_topics(pd.DataFrame({"doc_id": ["a"]}))
    with pytest.raises(TopicModelError, match="repeated: a"):
        build_topics(pd.DataFrame({"doc_id": ["a", "a"], "text": ["ozone", "smog"]}))


def test_labels_come_from_the_given_labeller_and_progress_is_reported(planted: pd.DataFrame) -> None:
    ticks: list[tuple[int, int | None]] = []
    model = build_topics(
        planted,
        settings(n_topics=[3], passes=[5, 10]),
        label_topic=lambda words: f"about {words[0]}",
        progress=lambda done, total: ticks.append((done, total)),
    )
    assert all(label == f"about {words[0]}" for label, words in zip(model.topics["label"], model.topics["top_words"]))
    assert ticks == [(1, 2), (2, 2)]


def test_settings_errors_name_the_file_and_the_key(tmp_path) -> None:
    path = tmp_path / "topics.yaml"
    path.write_text("grid:\n  n_topics: [1, 4]\n", encoding="utf-8")
    with pytest.raises(TopicSettingsError, match=r"(?s)topics.yaml are invalid.*grid.n_topics"):
        load_topic_settings(path)
    with pytest.raises(TopicSettingsError, match="do not exist"):
        load_topic_settings(tmp_path / "missing.yaml")


def test_no_documents_give_no_topics_not_an_error(model, tmp_path) -> None:
    empty = build_topics(pd.DataFrame({"doc_id": [], "text": []}), settings())
    assert empty.empty and not model.empty
    assert len(empty.topics) == len(empty.documents) == 0
    assert empty.topics.dtypes.to_dict() == model.topics.dtypes.to_dict()
    kept = list(empty.documents.columns)  # every column but the topic_k mixture, of which there are none
    assert model.documents[kept].dtypes.to_dict() == empty.documents.dtypes.to_dict()
    assert (empty.grid["status"] == "skipped").all() and len(empty.grid) == 4
    assert set(empty.grid["reason"]) == {"no documents to model"} and not empty.grid["chosen"].any()
    assert empty.chosen["n_topics"] == 0 and empty.notes == ["No topics: no documents to model."]
    view = write_intertopic_view(empty, tmp_path)
    assert "no documents to model" in view.html.read_text(encoding="utf-8")
    assert view.png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and view.coordinates.empty
