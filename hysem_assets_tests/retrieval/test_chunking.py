from __future__ import annotations

import pandas as pd
import pytest
from pydantic import ValidationError

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.retrieval.chunking import chunk_documents, chunk_markdown, markdown_sections, word_spans
from hysem_assets.settings.profile import VectorIndexSettings

PAPER = (
    """Preface words before any heading.

# Ozone and the heart

## Methods

### Exposure

Daily ozone from 40 monitors.

```python
# not a heading
x = 1
```

## Results ##

"""
    + " ".join(f"word{n}" for n in range(1, 251))
    + """

## Empty

## Discussion
Short.
"""
)


def test_headings_define_section_paths_and_code_fences_do_not() -> None:
    sections = markdown_sections(PAPER)
    assert [s.path for s in sections] == [
        "",
        "Ozone and the heart > Methods > Exposure",
        "Ozone and the heart > Results",
        "Ozone and the heart > Discussion",
    ]
    assert "# not a heading" in PAPER[sections[1].start : sections[1].end]


def test_chunks_overlap_within_a_section_and_never_cross_it() -> None:
    chunks = chunk_markdown(PAPER, max_tokens=100, overlap=20)
    results = [c for c in chunks if c.section.endswith("Results")]

    assert [c.token_count for c in results] == [100, 100, 90]
    assert [c.text.split()[0] for c in results] == ["word1", "word81", "word161"]
    assert results[0].text.split()[-20:] == results[1].text.split()[:20]
    assert results[-1].text.endswith("word250")
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(c.text in PAPER for c in chunks)
    assert chunks[-1].section.endswith("Discussion") and chunks[-1].text == "Short."


def test_overlap_must_be_smaller_than_the_window() -> None:
    with pytest.raises(ValueError, match="overlap"):
        chunk_markdown(PAPER, max_tokens=10, overlap=10)


def test_model_token_spans_keep_chunks_within_the_model_input(embedder: Encoder) -> None:
    text = "# Results\n\n" + "PM2.5-related cardio-respiratory admissions rose. " * 200
    chunks = chunk_markdown(text, max_tokens=128, overlap=16, spans=embedder.token_spans)
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.token_count <= 128
        assert len(embedder.model.tokenizer(chunk.text, add_special_tokens=False)["input_ids"]) <= 128
    assert len(word_spans(chunks[0].text)) < 128  # word pieces outnumber words


def test_chunk_documents_gives_stable_ids_and_hashes() -> None:
    documents = pd.DataFrame({"cluster_id": ["c-1", "c-2", "c-3"], "markdown": [PAPER, "# Only\n\ntext", None]})
    first = chunk_documents(documents, max_tokens=100, overlap=20)
    again = chunk_documents(documents, max_tokens=100, overlap=20)

    assert first.equals(again)
    assert first["chunk_id"].is_unique
    assert set(first["cluster_id"]) == {"c-1", "c-2"}
    assert first.loc[first["cluster_id"] == "c-2", "chunk_id"].tolist() == ["c-2:0"]
    assert first["content_hash"].nunique() == len(first)


def test_profile_settings_refuse_an_overlap_as_large_as_the_chunk() -> None:
    assert VectorIndexSettings().max_tokens == 200 and VectorIndexSettings().collection == "chunks"
    with pytest.raises(ValidationError, match="overlap"):
        VectorIndexSettings(max_tokens=50, overlap=50)


def test_reference_lists_are_not_chunked():
    from hysem_assets.retrieval.chunking import chunk_documents, is_reference_section

    markdown = "# Paper\n\n## 2 Methods\n\nWe used random forests.\n\n## References\n\n1. Other A. Another paper. 2020."
    chunks = chunk_documents(pd.DataFrame({"cluster_id": ["c1"], "markdown": [markdown]}))
    assert list(chunks["section"]) == ["Paper > 2 Methods"]
    assert "Another paper" not in " ".join(chunks["text"])
    assert is_reference_section("Title > 7 References") and is_reference_section("Bibliography")
    assert not is_reference_section("Referenced datasets and methods")


def test_no_documents_give_no_chunks_with_the_chunk_columns_and_types() -> None:
    filled = chunk_documents(pd.DataFrame({"cluster_id": ["a"], "markdown": ["# Results\n\nOzone rose."]}))
    empty = chunk_documents(pd.DataFrame({"cluster_id": [], "markdown": []}))
    assert len(empty) == 0 and len(filled) == 1
    assert empty.dtypes.to_dict() == filled.dtypes.to_dict()
