"""Errata and corrections: notices about a paper, linked to it and never counted as a study.

An erratum is a record of its own (its own DOI, PMID and often its own PDF) whose title repeats
the paper's, so deduplication keeps it apart (:func:`~hysem_assets.dedup.normalize.notice_kind`)
and a count of studies would otherwise count the paper twice. Each erratum is linked to the work
of the corpus whose title it names: the same normalized title, or the longest one its named title
starts with (a notice may add the paper's citation after the title).
"""

from __future__ import annotations

import pandas as pd

from hysem_assets.dedup.normalize import MIN_VARIANT_WORDS, normalize_title, notice_kind, notice_subject

#: The notice kinds that are about a paper without being a study: errata, corrections, corrigenda.
#: (Retraction notices are flagged retracted, and comments and replies stay works of their own.)
ERRATUM = "erratum"
NOTICE_COLUMNS = ("cluster_id", "notice", "notice_for")


def linked_notices(corpus: pd.DataFrame) -> pd.DataFrame:
    """One row per erratum of ``corpus``: its ``cluster_id``, ``notice`` kind and the ``cluster_id``
    of the work it corrects (``notice_for``; None when that work is not in the corpus)."""
    titles, item_types = (
        list(corpus[c]) if c in corpus.columns else [None] * len(corpus) for c in ("title", "item_type")
    )
    is_notice = [notice_kind(title, item) == ERRATUM for title, item in zip(titles, item_types, strict=True)]
    works = list(zip(corpus["cluster_id"], titles, is_notice, strict=True))
    papers = {
        normalize_title(title): cluster for cluster, title, notice in works if not notice and normalize_title(title)
    }
    rows = [(cluster, ERRATUM, _paper_of(notice_subject(title), papers)) for cluster, title, notice in works if notice]
    return pd.DataFrame(rows, columns=list(NOTICE_COLUMNS), dtype=object)


def _paper_of(subject: str, papers: dict[str, str]) -> str | None:
    if subject in papers:
        return papers[subject]
    starts = [title for title in papers if len(title.split()) >= MIN_VARIANT_WORDS and subject.startswith(title + " ")]
    return papers[max(starts, key=len)] if starts else None


def corrections(corpus: pd.DataFrame) -> dict[str, str]:
    """Cluster id of each corrected work -> its errata as a reader finds them (DOI link, else title), "; "-joined."""
    notices = linked_notices(corpus)
    if notices.empty:
        return {}
    by_cluster = corpus.set_index("cluster_id")
    found: dict[str, list[str]] = {}
    for notice, paper in zip(notices["cluster_id"], notices["notice_for"], strict=True):
        if paper is None:
            continue
        doi = by_cluster.at[notice, "doi"] if "doi" in by_cluster.columns else None
        title = by_cluster.at[notice, "title"] if "title" in by_cluster.columns else None
        found.setdefault(str(paper), []).append(
            f"https://doi.org/{doi}" if isinstance(doi, str) and doi else str(title)
        )
    return {paper: "; ".join(sorted(errata)) for paper, errata in found.items()}
