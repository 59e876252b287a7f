"""Errata and corrections: notices about a paper, linked to it and never counted as a study.

An erratum is a record of its own (its own DOI, PMID and often its own PDF) whose title repeats
the paper's, so deduplication keeps it apart (:func:`~hysem_assets.dedup.normalize.notice_kind`)
and a count of studies would otherwise count the paper twice. Each erratum is linked to the work
of the corpus whose title it names: the same normalized title, or the longest one its named title
starts with (a notice may add the paper's citation after the title). Where a source links the
erratum to its paper (PubMed's ``ErratumFor``, Crossref's ``update-to``), that link decides.
"""

from __future__ import annotations

import pandas as pd

from hysem_assets.dedup.normalize import MIN_VARIANT_WORDS, is_missing, normalize_title, notice_kind, notice_subject

#: The notice kinds that are about a paper without being a study: errata, corrections, corrigenda.
#: (Retraction notices are flagged retracted, and comments and replies stay works of their own.)
ERRATUM = "erratum"
NOTICE_COLUMNS = ("cluster_id", "notice", "notice_for")
#: Corpus columns read to find and link notices (any may be missing).
_NOTICE_INPUTS = ("title", "item_type", "corrects", "doi", "pmid")


def linked_notices(corpus: pd.DataFrame) -> pd.DataFrame:
    """One row per erratum of ``corpus``: its ``cluster_id``, ``notice`` kind and the ``cluster_id``
    of the work it corrects (``notice_for``; None when that work is not in the corpus).

    A record whose source links it to the work it corrects (``corrects``: PubMed's ErratumFor, Crossref's
    ``update-to``) is an erratum whatever its title, and the link decides; otherwise the title does.
    """
    column = {c: list(corpus[c]) if c in corpus.columns else [None] * len(corpus) for c in _NOTICE_INPUTS}
    links = [_identifiers(value) for value in column["corrects"]]
    is_notice = [
        bool(linked) or notice_kind(title, item) == ERRATUM
        for linked, title, item in zip(links, column["title"], column["item_type"], strict=True)
    ]
    works = list(zip(corpus["cluster_id"], column["title"], is_notice, links, strict=True))
    papers = {
        normalize_title(title): cluster for cluster, title, notice, _ in works if not notice and normalize_title(title)
    }
    known = {
        f"{kind}:{str(value).strip().lower()}": cluster
        for cluster, doi, pmid, notice in zip(
            corpus["cluster_id"], column["doi"], column["pmid"], is_notice, strict=True
        )
        if not notice
        for kind, value in (("doi", doi), ("pmid", pmid))
        if not is_missing(value)
    }
    rows = [
        (
            cluster,
            ERRATUM,
            next((known[i] for i in linked if i in known), None) or _paper_of(notice_subject(title), papers),
        )
        for cluster, title, notice, linked in works
        if notice
    ]
    return pd.DataFrame(rows, columns=list(NOTICE_COLUMNS), dtype=object)


def _identifiers(value: object) -> list[str]:
    """ "pmid:1; doi:10.1/X" -> ["pmid:1", "doi:10.1/x"]."""
    return [] if is_missing(value) else [part.strip().lower() for part in str(value).split(";") if part.strip()]


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
