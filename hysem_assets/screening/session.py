"""One query's screening: its records, their ranking from the decisions so far, and where it stands.

The screening page and the ``screening`` asset share this, so a reviewer sees the ranking the
asset records. The records' features are computed once; each ranking after a new decision
refits only the classifier on the decided records.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hysem_assets.core.empty import typed_when_empty
from hysem_assets.screening.criteria import criteria_relevance, key_terms
from hysem_assets.screening.decisions import (
    FULLTEXT,
    STAGES,
    TITLE_ABSTRACT,
    Decision,
    DecisionsError,
    Votes,
    goes_on,
    replay,
)
from hysem_assets.screening.outcome import FULLTEXT_DECISION, FULLTEXT_REASON, UNDECIDED
from hysem_assets.screening.ranker import RankerSettings, featurize, record_text, relevance
from hysem_assets.screening.stopping import StoppingEstimate, estimate_recall
from hysem_assets.settings.catalog import Review
from hysem_assets.settings.protocols import Eligibility

#: Reasons offered when a protocol lists no eligibility criteria.
DEFAULT_REASONS = ("not relevant", "other")
SCREENING_DTYPES = {
    "cluster_id": object, "title": object, "score": float, "rank": int,
    "decision": object, "reason": object, "decided_at": object, "proceeds": bool,
    FULLTEXT_DECISION: object, FULLTEXT_REASON: object,
}  # fmt: skip
SCREENING_COLUMNS = tuple(SCREENING_DTYPES)
RANKED_BY_CRITERIA = "eligibility criteria"
RANKED_BY_LEARNING = "active learning"


@dataclass(frozen=True)
class Criteria:
    """What the ranking starts from and the reasons a reviewer may give."""

    inclusion: list[str]
    exclusion: list[str]
    reasons: list[str]
    #: The reasons offered at full text; empty: the title and abstract ones.
    fulltext_reasons: list[str] = field(default_factory=list)
    #: Empty when the protocol has criteria; else why the query's own words stand in for them.
    note: str = ""

    @property
    def key_terms(self) -> list[str]:
        return key_terms(self.inclusion)

    def stage_reasons(self, stage: str) -> list[str]:
        return (stage == FULLTEXT and self.fulltext_reasons) or self.reasons


@dataclass(frozen=True)
class Ranking:
    scores: np.ndarray
    ranked_by: str
    #: Positions of the records, most relevant first.
    order: np.ndarray


@dataclass(frozen=True)
class Standing:
    """Where a screening stands: its resolved title and abstract decisions, its ranking and the stopping
    rule's estimate, and every stage's votes."""

    decisions: dict[str, Decision]  # record -> resolved decision, records of the corpus only
    ranking: Ranking
    estimate: StoppingEstimate
    #: Decided records the corpus no longer holds (a re-search dropped them); their decisions are kept.
    unknown: list[str]
    #: stage -> the votes standing there (every record of the log).
    votes: dict[str, Votes]
    #: record -> resolved full-text decision, records of the corpus only.
    fulltext: dict[str, Decision]

    @property
    def included(self) -> int:
        return sum(d.action == "included" for d in self.decisions.values())

    @property
    def excluded(self) -> int:
        return sum(d.action == "excluded" for d in self.decisions.values())

    def resolved(self, stage: str) -> dict[str, Decision]:
        """record -> resolved decision at ``stage``, records of the corpus only."""
        return self.decisions if stage == TITLE_ABSTRACT else self.fulltext


class Screening:
    """The records of one query (``cluster_id``, ``title``, ``abstract``) and their criteria."""

    def __init__(self, works: pd.DataFrame, criteria: Criteria, settings: RankerSettings | None = None) -> None:
        ids = works["cluster_id"].astype(str)
        if ids.duplicated().any():
            raise DecisionsError(f"record {ids[ids.duplicated()].iloc[0]!r} appears twice among the works to screen")
        self.works = works.reset_index(drop=True)
        self.ids: list[str] = ids.tolist()
        self.position = {record: index for index, record in enumerate(self.ids)}
        self.criteria = criteria
        self.settings = settings or RankerSettings()
        texts = [record_text(title, abstract) for title, abstract in zip(works["title"], works["abstract"])]
        self.records = featurize(texts) if texts else None  # no work: nothing to rank or learn from
        self.prior = criteria_relevance(self.records, criteria.inclusion, criteria.exclusion) if texts else np.zeros(0)

    def __len__(self) -> int:
        return len(self.ids)

    def standing(self, log_entries: Sequence[Decision], target_recall: float) -> Standing:
        """The current decisions replayed from ``log_entries``, the ranking they give and the estimate."""
        votes = {stage: replay(log_entries, stage) for stage in STAGES}
        current = votes[TITLE_ABSTRACT].resolved
        unknown = [record for record in current if record not in self.position]
        decisions = _known(current, self.position)
        order_in_log = {id(entry): index for index, entry in enumerate(log_entries)}
        in_order = sorted(decisions.values(), key=lambda decision: order_in_log[id(decision)])
        estimate = estimate_recall(
            [goes_on(decision) for decision in in_order], len(self) - len(decisions), target_recall
        )
        fulltext = _known(votes[FULLTEXT].resolved, self.position)
        return Standing(decisions, self.ranking(decisions), estimate, unknown, votes, fulltext)

    def ranking(self, decisions: dict[str, Decision]) -> Ranking:
        """Scores from active learning once both decisions are present, else from the criteria."""
        labelled = np.array([self.position[record] for record in decisions], dtype=int)
        labels = np.array([goes_on(decision) for decision in decisions.values()], dtype=int)
        if len(set(labels)) == 2:
            scores, ranked_by = relevance(self.records, labelled, labels, self.settings), RANKED_BY_LEARNING
        else:
            scores, ranked_by = self.prior, RANKED_BY_CRITERIA
        return Ranking(scores, ranked_by, np.argsort(-scores, kind="stable"))

    def next_for(
        self, standing: Standing, reviewer: str, stage: str, candidates: Sequence[str] | None = None
    ) -> int | None:
        """Position of the highest-ranked record of ``candidates`` (default: every record) that ``reviewer`` has
        not voted on at ``stage`` and no resolution has settled; None when there is none."""
        votes = standing.votes[stage]
        done = set(votes.reviewers.get(reviewer, {})) | set(votes.resolutions)
        allowed = None if candidates is None else {self.position[record] for record in candidates}
        order = (p for p in standing.ranking.order if allowed is None or p in allowed)
        return next((p for p in order if self.ids[p] not in done), None)

    def table(self, standing: Standing, undecided_top_share: float) -> pd.DataFrame:
        """One row per work (see ``SCREENING_COLUMNS``), with the resolved decision of each stage (a conflict
        no resolution settled is undecided). ``proceeds``: the work goes on to full text: included or
        "maybe", or, while the stopping rule is not met, undecided and ranked within the top
        ``undecided_top_share`` of all works."""
        ranks = np.empty(len(self), dtype=int)
        ranks[standing.ranking.order] = np.arange(1, len(self) + 1)
        decided = [standing.decisions.get(record) for record in self.ids]
        decision = [d.action if d else UNDECIDED for d in decided]
        cutoff = 0 if standing.estimate.stop else math.ceil(undecided_top_share * len(self))
        proceeds = [
            action in ("included", "maybe") or (action == UNDECIDED and rank <= cutoff)
            for action, rank in zip(decision, ranks)
        ]
        resolved_fulltext = standing.resolved(FULLTEXT)
        fulltext = [resolved_fulltext.get(record) for record in self.ids]
        table = pd.DataFrame(
            {
                "cluster_id": self.ids,
                "title": self.works["title"],
                "score": standing.ranking.scores.astype(float),
                "rank": ranks,
                "decision": decision,
                "reason": [d.reason if d else None for d in decided],
                "decided_at": [d.at if d else None for d in decided],
                "proceeds": proceeds,
                FULLTEXT_DECISION: [d.action if d else UNDECIDED for d in fulltext],
                FULLTEXT_REASON: [d.reason if d else None for d in fulltext],
            },
            columns=list(SCREENING_COLUMNS),
        )
        return typed_when_empty(table, SCREENING_DTYPES)


def review_criteria(review: Review) -> Criteria:
    """The criteria of a query's protocol (see :func:`query_criteria`)."""
    spec, protocol = review.spec, review.protocol
    words = [spec.title, *spec.texts()]
    return query_criteria(protocol.eligibility, protocol.name, words)


def query_criteria(eligibility: Eligibility | None, protocol_name: str, query_words: Sequence[str]) -> Criteria:
    """The criteria of a protocol's ``eligibility`` or, without it, the query's own title and search
    words standing in for the inclusion criteria (with a note saying so)."""
    if eligibility is not None:
        return Criteria(
            list(eligibility.inclusion),
            list(eligibility.exclusion),
            eligibility.exclusion_reasons,
            eligibility.fulltext_exclusion_reasons,
        )
    note = (
        f"protocol {protocol_name!r} declares no eligibility criteria: until a record is included and another "
        f"excluded, records are ranked by the query's own words, and exclusions take the reasons "
        f"{', '.join(DEFAULT_REASONS)}. Add `eligibility:` (inclusion, exclusion, reasons) to "
        f"config/protocols/{protocol_name}.yaml"
    )
    return Criteria([word for word in query_words if word], [], list(DEFAULT_REASONS), note=note)


def _known(decisions: dict[str, Decision], records) -> dict[str, Decision]:
    return {record: decision for record, decision in decisions.items() if record in records}
