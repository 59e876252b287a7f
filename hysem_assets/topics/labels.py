"""Topic labels: any ``label_topic(top_words) -> str`` callable; the default needs no model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from hysem_assets.llm.backend import LLMBackend
from hysem_assets.settings.backends import GenerationParams

TopicLabeller = Callable[[Sequence[str]], str]


def label_from_top_words(top_words: Sequence[str], words: int = 3) -> str:
    """The topic's most probable words, phrases spelled with spaces: readable and always available."""
    return ", ".join(word.replace("_", " ") for word in top_words[:words])


def llm_labeller(backend: LLMBackend, fallback: TopicLabeller = label_from_top_words) -> TopicLabeller:
    """Labels written by a language model from the top words; the top words when it gives none."""

    def label(top_words: Sequence[str]) -> str:
        words = ", ".join(word.replace("_", " ") for word in top_words)
        messages = [
            {"role": "system", "content": "You name research topics. Answer with a label of at most six words."},
            {"role": "user", "content": f"Top words of a topic found in scientific articles: {words}\nLabel:"},
        ]

        async def ask():
            try:  # each label runs in its own event loop, so connections close with it
                return await backend.complete(messages, params=GenerationParams(max_tokens=20))
            finally:
                await backend.aclose()

        completion = asyncio.run(ask())
        text = completion.text.strip().strip('"').splitlines()[0].strip() if completion.text.strip() else ""
        return text or fallback(top_words)

    return label
