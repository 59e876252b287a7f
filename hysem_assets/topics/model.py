"""``build_topics``: documents in, the most coherent LDA model of a grid search out, as tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from gensim.corpora import Dictionary
from scipy import sparse
from sklearn.decomposition import LatentDirichletAllocation

from hysem_assets.core.empty import typed_empty
from hysem_assets.topics.config import TopicSettings
from hysem_assets.topics.grid import (
    TopicModelError,
    best_fit,
    dictionary_filters,
    every_point_skipped,
    grid_table,
    phrase_variants,
    plan,
)
from hysem_assets.topics.labels import TopicLabeller, label_from_top_words
from hysem_assets.topics.pool import ProgressCallback, worker_map
from hysem_assets.topics.tokens import Tokenizer, tokenizer_for
from hysem_assets.topics.training import Fit, TrainingJob, fit_candidate, top_word_ids
from hysem_assets.topics.vocabulary import Phraser, count_matrix, filtered_corpora, join_phrases

#: ``documents.status``: ``ok`` was modelled; the others were kept out of training, and say why.
STATUSES = ("ok", "empty", "no_words", "no_vocabulary")
_NAMED = 10
#: Column types of ``TopicModel.topics``, and of ``documents`` before its topic_1 ... topic_K columns.
TOPIC_DTYPES = {
    "topic": "int64",
    "label": "object",
    "top_words": "object",
    "word_weights": "object",
    "coherence": "float64",
    "prevalence": "float64",
    "documents": "int64",
}
DOCUMENT_DTYPES = {
    "doc_id": "object",
    "status": "object",
    "tokens": "int64",
    "dominant_topic": "Int64",
    "dominant_weight": "float64",
}
NO_DOCUMENTS = "no documents to model"


@dataclass
class TopicTransform:
    """The chosen model's preprocessing and estimator, so new text is read as its training text was.

    Phrases and the dictionary were learned on the training corpus (corpus-level steps); here
    they are applied, not learned again, and words the dictionary lacks are not counted.
    """

    tokenize: Tokenizer
    phrases: Phraser
    dictionary: Dictionary
    lda: LatentDirichletAllocation

    def documents(self, doc_ids: list[str], texts: list[str]) -> pd.DataFrame:
        """Rows of ``TopicModel.documents`` for these documents, placed in the fitted topics."""
        tokens = self.tokenize.batch(texts)
        kept = [i for i, doc in enumerate(tokens) if doc]
        counts = count_matrix(self.dictionary, [self.phrases(tokens[i]) for i in kept])
        doc_topic = self.lda.transform(counts) if kept else np.zeros((0, self.lda.n_components))
        return _documents_table(doc_ids, texts, kept, counts, doc_topic)


@dataclass
class TopicModel:
    """The chosen model as tables, with the grid it won and what the view needs."""

    #: topic, label, top_words, word_weights, coherence, prevalence, documents
    topics: pd.DataFrame
    #: doc_id, status, tokens, dominant_topic, dominant_weight, topic_1 ... topic_K
    documents: pd.DataFrame
    #: One row per grid point: hyperparameters, vocabulary, coherence, status, reason, chosen
    grid: pd.DataFrame
    #: The winner's hyperparameters and mean c_v coherence
    chosen: dict[str, Any]
    topic_word: np.ndarray
    vocabulary: list[str]
    term_frequency: np.ndarray
    #: Plain-language remarks on dropped grid points and documents left out of training
    notes: list[str] = field(default_factory=list)
    #: How new documents are placed in these topics; None when there are none.
    transform: TopicTransform | None = None

    @property
    def empty(self) -> bool:
        """No topic: the corpus had no documents (a query that matched nothing)."""
        return self.topics.empty


def build_topics(
    documents: pd.DataFrame,
    settings: TopicSettings | None = None,
    *,
    workers: int = 1,
    label_topic: TopicLabeller = label_from_top_words,
    progress: ProgressCallback | None = None,
) -> TopicModel:
    """Grid-search LDA models over ``documents`` (columns ``doc_id``, ``text``) and keep the most coherent.

    Every document comes back in ``documents``; those without usable words are flagged, not modelled.
    ``progress(done, total)`` is called as candidate models finish.
    Raises ``TopicModelError`` when no grid point can be trained, naming the numbers involved.
    """
    settings = settings or TopicSettings()
    doc_ids, texts = checked_documents(documents)
    prep, training = settings.preprocessing, settings.training
    if not doc_ids:
        return _empty_model(settings)
    tokenize = tokenizer_for(prep.language, prep.min_token_length, prep.extra_stopwords)
    with worker_map(workers) as parallel:
        tokens = [doc for batch in parallel(tokenize.batch, _batches(texts, workers)) for doc in batch]
        kept = [i for i, doc in enumerate(tokens) if doc]
        if not kept:
            raise TopicModelError(f"None of the {len(texts)} documents has words left after stopword removal.")
        if len(kept) < min(settings.grid.n_topics):  # too few to split into topics: flow on without them
            return _empty_model(
                settings, f"{len(kept)} documents with words, fewer than the grid's smallest topic count"
            )
        variants = phrase_variants(settings.grid, prep.phrase_min_count)
        phrased = parallel(partial(join_phrases, [tokens[i] for i in kept]), variants)
        filters = dictionary_filters(settings.grid)
        corpora = [c for phraser, texts_ in phrased for c in filtered_corpora(texts_, phraser.settings, filters)]
        jobs, skipped = plan(settings.grid, corpora)
        # Longest first, so no worker is left with a big model after the others are done.
        jobs.sort(key=lambda job: -job[1].n_topics * job[1].passes * job[0].counts.nnz)
        fits = parallel(
            fit_candidate,
            [
                TrainingJob(corpus, candidate, training.top_n, training.random_state, training.learning_method)
                for corpus, candidate in jobs
            ],
            progress,
        )
    trained = [(corpus, fit) for (corpus, _), fit in zip(jobs, fits)]
    winner = best_fit(fits)
    corpus = next(c for c, fit in trained if fit is winner)
    doc_table = _documents_table(doc_ids, texts, kept, corpus.counts, winner.doc_topic)
    grid = grid_table(trained, skipped, winner)
    phraser = next(phraser for phraser, _ in phrased if phraser.settings == corpus.phrases)
    return TopicModel(
        topics=_topics_table(corpus.vocabulary, winner, doc_table, training.top_n, label_topic),
        documents=doc_table,
        grid=grid,
        chosen=winner.candidate.as_row() | {"coherence": winner.coherence},
        topic_word=winner.topic_word,
        vocabulary=corpus.vocabulary,
        term_frequency=corpus.term_frequency,
        notes=model_notes(doc_table, grid),
        transform=TopicTransform(tokenize, phraser, corpus.dictionary, winner.lda),
    )


def _empty_model(settings: TopicSettings, reason: str = NO_DOCUMENTS) -> TopicModel:
    """No topics: typed empty tables and the grid listed as skipped with ``reason``, so that an
    empty or tiny partition flows on instead of failing."""
    skipped = every_point_skipped(settings.grid, settings.preprocessing.phrase_min_count, reason)
    return TopicModel(
        topics=typed_empty(TOPIC_DTYPES),
        documents=typed_empty(DOCUMENT_DTYPES),
        grid=grid_table([], skipped, None),
        chosen={"n_topics": 0, "coherence": float("nan")},
        topic_word=np.zeros((0, 0)),
        vocabulary=[],
        term_frequency=np.zeros(0),
        notes=[f"No topics: {reason}."],
    )


def checked_documents(documents: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Ids and texts (missing ones empty) of ``documents``, which must have unique ``doc_id`` and ``text``."""
    missing = {"doc_id", "text"} - set(documents.columns)
    if missing:
        raise TopicModelError(f"documents lack the column(s) {sorted(missing)}; expected doc_id and text.")
    doc_ids = documents["doc_id"].astype(str).tolist()
    repeated = sorted(documents.loc[documents["doc_id"].duplicated(), "doc_id"].astype(str).unique())
    if repeated:
        raise TopicModelError(f"doc_id must be unique; repeated: {', '.join(repeated[:_NAMED])}")
    texts = ["" if pd.isna(text) else str(text) for text in documents["text"]]
    return doc_ids, texts


def _batches(texts: list[str], workers: int) -> list[list[str]]:
    """A few batches per worker: enough to balance load, few enough to keep pickling cheap."""
    size = max(1, -(-len(texts) // (workers * 4))) if workers > 1 else max(1, len(texts))
    return [texts[i : i + size] for i in range(0, len(texts), size)]


def _documents_table(
    doc_ids: list[str], texts: list[str], kept: list[int], counts: sparse.csr_matrix, doc_topic: np.ndarray
) -> pd.DataFrame:
    """One row per document; ``counts`` and ``doc_topic`` are those of the ``kept`` documents (with words)."""
    n_documents, n_topics = len(doc_ids), doc_topic.shape[1]
    lengths = np.zeros(n_documents, dtype=int)
    lengths[kept] = np.asarray(counts.sum(axis=1)).ravel()
    ok = lengths > 0
    status = np.array(["no_words" if text.strip() else "empty" for text in texts], dtype=object)
    status[kept] = "no_vocabulary"
    status[ok] = "ok"
    mixture = np.full((n_documents, n_topics), np.nan)
    mixture[kept] = doc_topic
    mixture[~ok] = np.nan
    dominant = np.argmax(np.nan_to_num(mixture, nan=-1.0), axis=1) + 1
    table = pd.DataFrame(
        {
            "doc_id": doc_ids,
            "status": status,
            "tokens": lengths,
            "dominant_topic": pd.Series(dominant, dtype="Int64").where(ok),
            "dominant_weight": mixture.max(axis=1),
        }
    )
    topic_columns = pd.DataFrame(mixture, columns=[f"topic_{k}" for k in range(1, n_topics + 1)])
    return pd.concat([table, topic_columns], axis=1)


def _topics_table(
    vocabulary: list[str], fit: Fit, documents: pd.DataFrame, top_n: int, label_topic: TopicLabeller
) -> pd.DataFrame:
    ids = top_word_ids(fit.topic_word, top_n)
    top_words = [[vocabulary[i] for i in row] for row in ids]
    topics = pd.DataFrame(
        {
            "topic": range(1, len(top_words) + 1),
            "label": [label_topic(words) for words in top_words],
            "top_words": top_words,
            "word_weights": [fit.topic_word[k, row].round(6).tolist() for k, row in enumerate(ids)],
            "coherence": fit.topic_coherence,
        }
    )
    return topic_shares(topics, documents)


def topic_shares(topics: pd.DataFrame, documents: pd.DataFrame) -> pd.DataFrame:
    """``topics`` with ``prevalence`` and ``documents`` (how many it dominates) counted over ``documents``.

    Prevalence is the share of the modelled documents' tokens each topic accounts for, so long
    documents weigh more than short ones. Computed from the tables alone, it can be counted
    again when documents are added to a fitted model.
    """
    modelled = documents[documents["status"] == "ok"]
    weighted = modelled["tokens"].to_numpy() @ modelled[[f"topic_{k}" for k in topics["topic"]]].to_numpy()
    dominant = documents["dominant_topic"].value_counts()
    return topics.assign(
        prevalence=weighted / weighted.sum(), documents=[int(dominant.get(k, 0)) for k in topics["topic"]]
    )


def model_notes(documents: pd.DataFrame, grid: pd.DataFrame) -> list[str]:
    """Plain-language remarks on documents without a topic mixture and on grid points skipped."""
    notes = []
    for status, reason in (
        ("empty", "no text"),
        ("no_words", "only stopwords or symbols"),
        ("no_vocabulary", "no word the chosen dictionary keeps"),
    ):
        ids = documents.loc[documents["status"] == status, "doc_id"].tolist()
        if ids:
            more = f" and {len(ids) - _NAMED} more" if len(ids) > _NAMED else ""
            notes.append(f"Left out of the model, {reason} ({len(ids)}): {', '.join(ids[:_NAMED])}{more}")
    skipped = grid[grid["status"] == "skipped"]
    if len(skipped):
        reasons = sorted(set(skipped["reason"]))
        notes.append(f"{len(skipped)} of {len(grid)} grid points were skipped: " + "; ".join(reasons))
    return notes
