"""Choosing the sentences of a text that best answer a field, by embedding similarity."""

from __future__ import annotations

from hysem_assets.embedding.encoder import Encoder


def most_similar_sentences(
    sentences: list[str], query: str, encoder: Encoder, *, keep: int = 1, min_similarity: float = 0.0
) -> list[str]:
    """Up to ``keep`` sentences with the highest cosine similarity to ``query``, in text order.

    Sentences below ``min_similarity`` are never returned, so a text that says nothing
    about the field leaves it empty instead of filling it with its least bad sentence.
    """
    if not sentences:
        return []
    vectors = encoder.encode([query, *sentences])
    similarities = vectors[1:] @ vectors[0]
    best = sorted(range(len(sentences)), key=lambda index: -float(similarities[index]))[:keep]
    return [sentences[index] for index in sorted(best) if similarities[index] >= min_similarity]
