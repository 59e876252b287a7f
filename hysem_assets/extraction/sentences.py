"""Choosing the sentences of a text that best answer a field, by embedding similarity."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def most_similar_sentences(
    sentences: list[str], query: str, model: SentenceTransformer, *, keep: int = 1, min_similarity: float = 0.0
) -> list[str]:
    """Up to ``keep`` sentences with the highest cosine similarity to ``query``, in text order.

    Sentences below ``min_similarity`` are never returned, so a text that says nothing
    about the field leaves it empty instead of filling it with its least bad sentence.
    """
    if not sentences:
        return []
    vectors = model.encode([query, *sentences], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    similarities = vectors[1:] @ vectors[0]
    best = sorted(range(len(sentences)), key=lambda index: -float(similarities[index]))[:keep]
    return [sentences[index] for index in sorted(best) if similarities[index] >= min_similarity]
