"""Re-runs of the topic model: place new works in the fitted topics, refit only when the corpus moved.

A grid search costs as much on the hundredth run as on the first, and a refit renumbers and
relabels the topics a reviewer already reads. So each run keeps a :class:`TopicsState`: the
chosen model with what reads new text exactly as its training text was read (the fitted phrase
models, the filtered dictionary and the estimator), the rows it gave, and what it was fitted
on (settings, labeller and code versions, and each work's text hash). The next run refits when
that fingerprint changed or more than ``training.refit_share`` of the fitted works are new,
changed or dropped. Otherwise works whose text is unchanged keep their rows, new and changed
works are transformed by the fitted model, and the topic table keeps its numbers, labels, words
and coherence; only prevalence and document counts are counted again over the new rows.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pandas as pd

from hysem_assets.core.atomic import write_pickle
from hysem_assets.stores.work_cache import HYSEM_VERSION, WorkChanges, compare
from hysem_assets.topics.config import TopicSettings
from hysem_assets.topics.labels import TopicLabeller, label_from_top_words
from hysem_assets.topics.model import TopicModel, build_topics, checked_documents, model_notes, topic_shares
from hysem_assets.topics.pool import ProgressCallback

#: Change when what a state keeps, or how a kept model reads text, changes, so older states are refitted.
TOPICS_CODE = "topics-1"
#: Parts of the fingerprint, checked in this order (the code first: an older state may differ in shape).
_CHANGED = {
    "code": "hysem or library (scikit-learn, gensim, simplemma) versions changed",
    "settings": "topic settings changed",
    "labeller": "topic labeller changed",
}


def fit_fingerprint(settings: TopicSettings, labeller: Any) -> dict[str, Any]:
    """What decides a fitted model besides its corpus; ``refit_share`` is left out, it only decides when to refit."""
    return {
        "code": {
            "topics": TOPICS_CODE,
            "hysem": HYSEM_VERSION,
            "scikit-learn": version("scikit-learn"),
            "gensim": version("gensim"),
            "simplemma": version("simplemma"),
        },
        "settings": settings.model_dump(mode="json", exclude={"training": {"refit_share"}}),
        "labeller": labeller,
    }


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class TopicsState:
    """What a run keeps for the next: the model, the rows it gave, and what it was fitted on."""

    fingerprint: dict[str, Any]
    #: Work -> text hash of every work the model was fitted on
    fitted_on: dict[str, str]
    #: The model as this run gave it: ``documents`` holds this run's rows
    model: TopicModel
    #: The work and the text hash of each row of ``model.documents``
    works: list[str]
    hashes: list[str]


@dataclass(frozen=True)
class Decision:
    refit: bool
    reason: str


@dataclass(frozen=True)
class TopicsRun:
    """The model of this run, the state to keep, whether it was refitted and why, and the works' counts."""

    model: TopicModel
    state: TopicsState
    refit: bool
    reason: str
    #: Against the previous run's works, as the other per-work assets count them
    changes: WorkChanges


def _percent(share: float) -> str:
    return f"{share * 100:.3g}%"


def decide(
    previous: TopicsState | None, fingerprint: dict[str, Any], current: Mapping[str, str], refit_share: float
) -> Decision:
    """Refit, or place this run's works (work -> text hash) in the kept model, and why.

    The share counts against the works the model was fitted on, not the previous run's, so
    small additions run after run add up to a refit.
    """
    if previous is None:
        return Decision(True, "no stored model")
    changed = [reason for part, reason in _CHANGED.items() if previous.fingerprint.get(part) != fingerprint[part]]
    if changed:
        return Decision(True, "; ".join(changed))
    if previous.model.transform is None:
        return Decision(True, "the stored model has no topics")
    if not current:
        return Decision(True, "no documents")
    if refit_share == 0:
        return Decision(True, "refit_share is 0")
    since = compare(previous.fitted_on, current, reused=0)
    share = (since.new + since.changed + since.dropped) / len(previous.fitted_on)
    moved = f"{_percent(share)} of the fitted works new, changed or dropped"
    if share > refit_share:
        return Decision(True, f"{moved} > refit_share {_percent(refit_share)}")
    return Decision(False, f"{moved} <= refit_share {_percent(refit_share)}")


def fold_in(
    previous: TopicsState, doc_ids: list[str], texts: list[str], works: Sequence[str], hashes: list[str]
) -> tuple[TopicModel, int]:
    """The kept model over this run's documents, and how many rows it reused.

    A work whose text is unchanged keeps its row (under this run's doc_id: a cluster id changes
    as records join the work); the others are transformed by the fitted model; dropped works'
    rows are left out.
    """
    model = previous.model
    kept = {key: row for row, key in enumerate(zip(previous.works, previous.hashes))}
    found = [kept.get(key) for key in zip(works, hashes)]
    reused = [i for i, row in enumerate(found) if row is not None]
    fresh = [i for i, row in enumerate(found) if row is None]
    rows = pd.concat(
        [
            model.documents.iloc[[found[i] for i in reused]].set_axis(reused) if reused else None,
            model.transform.documents([doc_ids[i] for i in fresh], [texts[i] for i in fresh]).set_axis(fresh)
            if fresh
            else None,
        ]
    ).sort_index()
    rows["doc_id"] = doc_ids
    documents = rows.reset_index(drop=True)
    updated = replace(
        model,
        topics=topic_shares(model.topics, documents),
        documents=documents,
        notes=model_notes(documents, model.grid),
    )
    return updated, len(reused)


def update_topics(
    documents: pd.DataFrame,
    works: Sequence[str],
    settings: TopicSettings,
    previous: TopicsState | None,
    *,
    labeller: Any = None,
    workers: int = 1,
    label_topic: TopicLabeller = label_from_top_words,
    progress: ProgressCallback | None = None,
) -> TopicsRun:
    """The topics of ``documents`` (``doc_id``, ``text``), refitted or from ``previous``'s model (see :func:`decide`).

    ``works[i]`` is who row ``i`` is from run to run; ``labeller`` names what ``label_topic``
    is (JSON-able settings; None: the top words), so that a change of it refits. The other
    arguments are :func:`~hysem_assets.topics.model.build_topics`'s.
    """
    doc_ids, texts = checked_documents(documents)
    hashes = [text_hash(text) for text in texts]
    current = dict(zip(works, hashes, strict=True))
    fingerprint = fit_fingerprint(settings, labeller)
    decision = decide(previous, fingerprint, current, settings.training.refit_share)
    last_run = dict(zip(previous.works, previous.hashes)) if previous else {}
    if decision.refit:
        model = build_topics(documents, settings, workers=workers, label_topic=label_topic, progress=progress)
        state, reused = TopicsState(fingerprint, current, model, list(works), hashes), 0
    else:
        model, reused = fold_in(previous, doc_ids, texts, works, hashes)
        state = replace(previous, model=model, works=list(works), hashes=hashes)
    return TopicsRun(model, state, decision.refit, decision.reason, compare(last_run, current, reused))


def read_state(path: Path) -> TopicsState | None:
    """The state a run kept at ``path``; None when there is none or it cannot be read, which refits."""
    try:
        with path.open("rb") as file:
            state = pickle.load(file)
    except Exception:  # missing, damaged, or written by code whose classes no longer load
        return None
    return state if isinstance(state, TopicsState) else None


def write_state(path: Path, state: TopicsState) -> None:
    write_pickle(path, state)
