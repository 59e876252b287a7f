"""What screening lets through, read from the ``screening`` table by the stages after it.

The ``included`` column of that table is the one definition of the review's included studies:
every view (answers, report, evidence table, PRISMA, updates, graph counts, exports) reads it
through :func:`included_ids` and none recomputes it.
"""

from __future__ import annotations

import pandas as pd

from hysem_assets.dedup.notices import ERRATUM, RETRACTION, linked_notices

#: The decision of a work no reviewer has decided.
UNDECIDED = "undecided"
#: The column of the ``screening`` table that says a work is an included study.
INCLUDED = "included"
#: The full-text stage's decision and reason (absent from tables written before that stage existed).
FULLTEXT_DECISION, FULLTEXT_REASON = "fulltext_decision", "fulltext_reason"
#: Why a notice is no study, by its kind (see :mod:`hysem_assets.dedup.notices`).
NOTICE_REASONS = {
    ERRATUM: "erratum (counted with the work it corrects)",
    RETRACTION: "retraction notice (counted with the work it retracts)",
}


def screened_in(corpus: pd.DataFrame, screening: pd.DataFrame) -> pd.DataFrame:
    """The works of ``corpus`` that go on to full text: included, or undecided and ranked high enough."""
    through = set(screening.loc[screening["proceeds"].astype(bool), "cluster_id"])
    return corpus[corpus["cluster_id"].isin(through)]


def reviewed(screening: pd.DataFrame) -> pd.Series:
    """Per row: a reviewer decided the work."""
    return screening["decision"] != UNDECIDED


def fulltext_excluded(screening: pd.DataFrame) -> pd.Series:
    """Per row: the work was excluded at full-text eligibility."""
    if FULLTEXT_DECISION not in screening.columns:
        return pd.Series(False, index=screening.index)
    return screening[FULLTEXT_DECISION].eq("excluded")


def inclusion(screening: pd.DataFrame, corpus: pd.DataFrame) -> pd.Series:
    """Per row of ``screening``: the work is an included study. It passed title/abstract screening
    (``proceeds``), was not excluded at full text (where its full text was assessed), and is a study
    of its own (not retracted, not a notice about another work)."""
    not_study = set(not_studies(corpus))
    return screening["proceeds"].astype(bool) & ~fulltext_excluded(screening) & ~screening["cluster_id"].isin(not_study)


class OutdatedScreening(ValueError):
    """A ``screening`` table written before it held the included set; the message says what to materialize."""


def included_ids(screening: pd.DataFrame) -> list[str]:
    """Cluster ids of the included studies, in the table's order."""
    return screening.loc[_included(screening), "cluster_id"].astype(str).tolist()


def _included(screening: pd.DataFrame) -> pd.Series:
    if INCLUDED not in screening.columns:
        raise OutdatedScreening(
            f"the screening table is older than this version of hysem (it has no {INCLUDED!r} column); "
            "re-materialize it and what follows: `hysem materialize --query QUERY --select 'screening*'`"
        )
    return screening[INCLUDED].astype(bool)


def answered_ids(screening: pd.DataFrame, corpus: pd.DataFrame) -> list[str]:
    """The included studies, and the retracted works that would be included but for their retraction: the
    works answers count over. Answers leave the retracted ones out, and name them, unless the profile keeps
    them (``include_retracted``), so they must reach the answers to be named."""
    retracted = set(retracted_works(corpus))
    passed = screening["proceeds"].astype(bool) & ~fulltext_excluded(screening)
    kept = _included(screening)
    return [c for c, study, ok in zip(screening["cluster_id"], kept, passed) if study or (ok and c in retracted)]


def retracted_works(corpus: pd.DataFrame) -> list[str]:
    """Cluster ids of the works flagged retracted (by any source, see enrichment)."""
    if "is_retracted" not in corpus.columns:
        return []
    return corpus.loc[corpus["is_retracted"].astype("boolean").fillna(False).astype(bool), "cluster_id"].tolist()


def not_studies(corpus: pd.DataFrame) -> dict[str, str]:
    """Works that are no study of their own, with why: retracted, or a notice about another work (an erratum
    or a retraction notice, counted with that work, see :mod:`hysem_assets.dedup.notices`)."""
    why: dict[str, str] = dict.fromkeys(retracted_works(corpus), "retracted")
    for notice in linked_notices(corpus).itertuples():
        why.setdefault(notice.cluster_id, NOTICE_REASONS[notice.notice])
    return why
