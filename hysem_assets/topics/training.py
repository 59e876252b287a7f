"""One grid point: fit scikit-learn's LDA on a corpus variant and score its topics with c_v coherence."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
from gensim.models.coherencemodel import CoherenceModel
from sklearn.decomposition import LatentDirichletAllocation

from hysem_assets.topics.vocabulary import Corpus, DictionaryFilter, PhraseSettings


@dataclass(frozen=True)
class Candidate:
    n_topics: int
    passes: int
    iterations: int
    phrases: PhraseSettings
    filter: DictionaryFilter

    def as_row(self) -> dict[str, float | int]:
        phrases = asdict(self.phrases)
        phrases.pop("min_count")
        return (
            {"n_topics": self.n_topics, "passes": self.passes, "iterations": self.iterations}
            | phrases
            | asdict(self.filter)
        )


@dataclass(frozen=True)
class TrainingJob:
    corpus: Corpus
    candidate: Candidate
    top_n: int
    random_state: int
    learning_method: str


@dataclass
class Fit:
    candidate: Candidate
    #: Mean c_v over topics whose coherence is defined; NaN when none is.
    coherence: float
    topic_coherence: np.ndarray
    #: Topics x vocabulary, rows summing to one.
    topic_word: np.ndarray
    #: Documents x topics, rows summing to one.
    doc_topic: np.ndarray
    seconds: float
    #: The fitted estimator, whose ``transform`` places new documents in these topics.
    lda: LatentDirichletAllocation


def top_word_ids(topic_word: np.ndarray, top_n: int) -> np.ndarray:
    return np.argsort(-topic_word, axis=1, kind="stable")[:, : min(top_n, topic_word.shape[1])]


def fit_candidate(job: TrainingJob) -> Fit:
    """Runs in a worker process: single-threaded inside, the pool gives the parallelism."""
    started = time.perf_counter()
    candidate, corpus = job.candidate, job.corpus
    lda = LatentDirichletAllocation(
        n_components=candidate.n_topics,
        max_iter=candidate.passes,
        max_doc_update_iter=candidate.iterations,
        learning_method=job.learning_method,
        random_state=job.random_state,
        n_jobs=1,
    )
    doc_topic = lda.fit_transform(corpus.counts)
    topic_word = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    top_words = [[corpus.dictionary[int(i)] for i in row] for row in top_word_ids(topic_word, job.top_n)]
    scorer = CoherenceModel(
        topics=top_words,
        texts=corpus.texts,
        dictionary=corpus.dictionary,
        coherence="c_v",
        topn=len(top_words[0]),
        processes=1,
    )
    per_topic = np.asarray(scorer.get_coherence_per_topic(), dtype=float)
    mean = float(np.nanmean(per_topic)) if np.isfinite(per_topic).any() else float("nan")
    return Fit(candidate, mean, per_topic, topic_word, doc_topic, time.perf_counter() - started, lda)
