"""On the sample's own abstracts (structured, with keyword lines): no answer repeats a sentence or quotes a keyword line."""

from __future__ import annotations

import asyncio

import pytest
import yaml

from hysem_assets.core.sentences import metadata_reason, normalized
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.qa.claims import word_coverage
from hysem_assets.qa.embedded import ExtractiveGenerator
from hysem_assets.qa.questions import questions_for
from hysem_assets.qa.sources import ContextChunk, LibraryRecord
from hysem_assets.retrieval.chunking import abstract_chunks

SAMPLE = "air-pollution-cardio-ml"


def sample_chunks() -> list[ContextChunk]:
    """Every sample work's abstract chunks, its abstract written as the corpus writes it, keywords appended."""
    articles = yaml.safe_load((default_snapshot_dir() / "articles.yaml").read_text(encoding="utf-8"))["articles"]
    chunks = []
    for article in articles:
        abstract = article.get("abstract") or ""
        if isinstance(abstract, dict):
            abstract = "\n\n".join(f"{label}: {text}" for label, text in abstract.items())
        if article.get("keywords"):
            abstract += "\n\nKeywords: " + "; ".join(article["keywords"])
        record = LibraryRecord(article["id"], article.get("doi"), None, f"({article['id']})", article["title"])
        for chunk in abstract_chunks(article["title"], abstract):
            metadata = record.metadata(chunk.index, "abstract")
            chunks.append(ContextChunk(f"{article['id']}:{chunk.index}", chunk.section, chunk.text, metadata, 1.0, ()))
    return chunks


CHUNKS = sample_chunks()
QUESTIONS = [
    *questions_for(SAMPLE),
    "What did studies conclude about wildfire smoke and stroke?",
    "Which keywords describe studies of causal forests?",
]


@pytest.mark.parametrize("question", QUESTIONS)
def test_sample_answers_never_repeat_a_sentence_or_quote_a_keyword_line(question, embedder):
    coverage = word_coverage(question, [c.text for c in CHUNKS])
    context = [CHUNKS[i] for i in coverage.argsort()[::-1][:8]]  # the chunks sharing most of its rare words
    draft = asyncio.run(ExtractiveGenerator(embedder, claims=6).draft(question, context))
    texts = [claim.text for claim in draft.claims]
    keys = [normalized(text) for text in texts]
    assert len(set(keys)) == len(keys)
    assert not any(a != b and a in b for a in keys for b in keys)
    assert [t for t in texts if metadata_reason(t) or "keywords" in t.casefold()[:12]] == []
