"""Text to lemmatized content tokens: the first, per-document (so parallel) step of topic modelling."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import simplemma
from gensim.parsing.preprocessing import STOPWORDS

#: Words every scholarly text carries whatever its theme; as topic words they only hide the themes.
SCHOLARLY_STOPWORDS = frozenset(
    """
    background objective aim method result conclusion finding study paper article review author
    et al fig figure table doi http https www org com copyright license licence preprint erratum
    supplementary appendix ci vs respectively include however therefore also may among within use
    """.split()
)

_MARKUP = re.compile(r"<[^>]+>|https?://\S+|www\.\S+")
# Letters first, then letters/digits, keeping inner dots and hyphens: pm2.5, no2, case-crossover.
_TOKEN = re.compile(r"[^\W\d_][^\W_]*(?:[.\-][^\W_]+)*")


@dataclass(frozen=True)
class Tokenizer:
    """Picklable, so a process pool can run it on batches of documents."""

    language: str = "en"
    min_length: int = 3
    stopwords: frozenset[str] = STOPWORDS | SCHOLARLY_STOPWORDS

    def __call__(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", _MARKUP.sub("", text or "")).casefold()
        tokens = []
        for word in _TOKEN.findall(text):
            if word in self.stopwords:
                continue
            lemma = simplemma.lemmatize(word, lang=self.language).casefold()
            if len(lemma) >= self.min_length and lemma not in self.stopwords:
                tokens.append(lemma)
        return tokens

    def batch(self, texts: Sequence[str]) -> list[list[str]]:
        return [self(text) for text in texts]


def tokenizer_for(language: str, min_length: int, extra_stopwords: Sequence[str] = ()) -> Tokenizer:
    stopwords = STOPWORDS | SCHOLARLY_STOPWORDS | {word.casefold() for word in extra_stopwords}
    return Tokenizer(language=language, min_length=min_length, stopwords=frozenset(stopwords))
