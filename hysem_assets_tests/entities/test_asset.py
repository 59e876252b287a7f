"""The ``entities`` asset's inputs: only included works are read, reference lists are not, chunks keep their part;
without the model it fails with the model's one-line message."""

from pathlib import Path

import pandas as pd
import pytest
from dagster import build_asset_context

from hysem_assets.defs.entities import chunk_parts, entities, entity_works
from hysem_assets.entities import tagger
from hysem_assets.entities.mentions import ABSTRACT, FULL_TEXT
from hysem_assets.entities.tagger import EntityModelUnavailable

CORPUS = pd.DataFrame(
    [
        {"cluster_id": "c1", "doi": "10.1/X", "title": "A  study", "abstract": " Its abstract. "},
        {"cluster_id": "c2", "doi": None, "title": "Another", "abstract": None},
        {"cluster_id": "c3", "doi": None, "title": "Excluded", "abstract": "Not read."},
    ]
)
SCREENING = pd.DataFrame(
    {"cluster_id": ["c1", "c2", "c3"], "proceeds": [True, True, False], "included": [True, True, False]}
)
PARSED = pd.DataFrame(
    [
        {
            "cluster_id": "c1",
            "markdown": "# Methods\n\nWe used it.\n\n# References\n\n1. A cited title.",
            "error": None,
        },
        {"cluster_id": "c2", "markdown": None, "error": "unreadable"},
    ]
)


def test_included_works_are_read_without_their_reference_lists() -> None:
    works, ids = entity_works(CORPUS, SCREENING, PARSED)
    assert [work.cluster_id for work in works] == ["c1", "c2"] and ids == ["10.1/x", "c2"]
    first, second = works
    assert first.abstract == "A study\n\nIts abstract." and second.abstract == "Another"
    assert "We used it." in first.full_text and "cited title" not in first.full_text
    assert len(first.full_text) == len(PARSED["markdown"][0]) and second.full_text is None


def test_chunks_say_which_part_of_a_work_they_are_cut_from() -> None:
    chunks = pd.DataFrame(
        {"chunk_id": ["c1:0", "c1:1"], "cluster_id": "c1", "text": ["a", "b"], "evidence": ["abstract", "full text"]}
    )
    assert chunk_parts(chunks)["part"].tolist() == [ABSTRACT, FULL_TEXT]


def test_without_the_model_the_asset_fails_with_its_one_line_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tagger, "MODEL_DIR", tmp_path)
    empty = pd.DataFrame()
    with pytest.raises(EntityModelUnavailable, match=r"^the entity model cannot be loaded from .*make entities-model"):
        list(entities(build_asset_context(partition_key="q"), empty, SCREENING, PARSED, empty, empty))
