"""Topic labels: any ``label_topic(top_words) -> str`` callable; the default needs no model."""

from __future__ import annotations

from collections.abc import Callable, Sequence

TopicLabeller = Callable[[Sequence[str]], str]


def label_from_top_words(top_words: Sequence[str], words: int = 3) -> str:
    """The topic's most probable words, phrases spelled with spaces: readable and always available."""
    return ", ".join(word.replace("_", " ") for word in top_words[:words])
