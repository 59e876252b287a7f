"""Phrases and dictionaries: the corpus-wide preprocessing steps that the grid search varies."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from gensim.corpora import Dictionary
from gensim.matutils import corpus2csc
from gensim.models.phrases import FrozenPhrases, Phrases
from scipy import sparse


@dataclass(frozen=True)
class PhraseSettings:
    bigram_threshold: float
    trigram_threshold: float
    min_count: int


@dataclass(frozen=True)
class DictionaryFilter:
    no_below: int
    no_above: float


@dataclass
class Corpus:
    """One preprocessing variant: phrased texts, the filtered dictionary and the document-term counts."""

    phrases: PhraseSettings
    filter: DictionaryFilter
    texts: list[list[str]]
    dictionary: Dictionary
    counts: sparse.csr_matrix

    @property
    def vocabulary(self) -> list[str]:
        return [self.dictionary[i] for i in range(len(self.dictionary))]

    @property
    def term_frequency(self) -> np.ndarray:
        return np.asarray(self.counts.sum(axis=0)).ravel()


@dataclass
class Phraser:
    """The bigram and trigram models learned on a corpus: new text gets the same phrases joined."""

    settings: PhraseSettings
    bigrams: FrozenPhrases
    trigrams: FrozenPhrases

    def __call__(self, tokens: list[str]) -> list[str]:
        return self.trigrams[self.bigrams[tokens]]


def join_phrases(tokens: Sequence[list[str]], settings: PhraseSettings) -> tuple[Phraser, list[list[str]]]:
    """Bigrams, then trigrams (a bigram joined with a token), both learned on the corpus itself."""
    bigrams = Phrases(tokens, min_count=settings.min_count, threshold=settings.bigram_threshold).freeze()
    with_bigrams = [bigrams[doc] for doc in tokens]
    trigrams = Phrases(with_bigrams, min_count=settings.min_count, threshold=settings.trigram_threshold).freeze()
    return Phraser(settings, bigrams, trigrams), [trigrams[doc] for doc in with_bigrams]


def count_matrix(dictionary: Dictionary, texts: Sequence[list[str]]) -> sparse.csr_matrix:
    """Documents x dictionary words; words the dictionary lacks are not counted."""
    bows = [dictionary.doc2bow(text) for text in texts]
    return corpus2csc(bows, num_terms=len(dictionary), num_docs=len(texts), dtype=np.float64).T.tocsr()


def filtered_corpora(
    texts: list[list[str]], phrases: PhraseSettings, filters: Sequence[DictionaryFilter]
) -> list[Corpus]:
    """One dictionary per phrase variant, then one filtered copy (and count matrix) per filter."""
    full = Dictionary(texts)
    corpora = []
    for dictionary_filter in filters:
        dictionary = copy.deepcopy(full)
        dictionary.filter_extremes(
            no_below=dictionary_filter.no_below, no_above=dictionary_filter.no_above, keep_n=None
        )
        corpora.append(Corpus(phrases, dictionary_filter, texts, dictionary, count_matrix(dictionary, texts)))
    return corpora
