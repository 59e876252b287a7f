"""The sample query's titles and abstracts, with the search space shipped in config/topics.yaml."""

from __future__ import annotations

import numpy as np

from hysem_assets.topics.config import load_topic_settings
from hysem_assets.topics.model import build_topics
from hysem_assets_tests.topics.corpora import sample_abstracts


def test_sample_corpus_reports_the_chosen_coherence_with_the_grid() -> None:
    settings = load_topic_settings()
    model = build_topics(sample_abstracts(), settings)
    grid = model.grid
    assert len(grid) == np.prod([len(values) for values in settings.grid.model_dump().values()])
    assert (grid["status"] == "trained").all() and grid["coherence"].between(0, 1).all()
    assert grid["chosen"].sum() == 1
    assert model.chosen["coherence"] == grid.loc[grid["chosen"], "coherence"].item() == grid["coherence"].max()
    assert model.chosen["n_topics"] == len(model.topics)
    assert (model.documents["status"] == "ok").all()
    # Phrases join the domain's multi-word terms.
    assert {"heart_failure", "air_pollution", "random_forest"} <= set(model.vocabulary)
