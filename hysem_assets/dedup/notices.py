"""Errata, corrections and retraction notices: records about a paper, linked to it and never counted as a study.

A notice is a record of its own (its own DOI, PMID and often its own PDF) whose title repeats
the paper's, so deduplication keeps it apart (:func:`~hysem_assets.dedup.normalize.notice_kind`)
and a count of studies would otherwise count the paper twice. Where a source links the notice to
its paper (PubMed's ``ErratumFor`` or ``RetractionOf``, Crossref's ``update-to``: the corpus's
``notice_of``), that link decides; otherwise the notice is linked to the work of the corpus whose
title it names: the same normalized title, or the longest one its named title starts with (a
notice may add the paper's citation after the title). The retracted paper itself is flagged
retracted, and comments and replies stay works of their own.
"""

from __future__ import annotations

import pandas as pd

from hysem_assets.dedup.normalize import MIN_VARIANT_WORDS, is_missing, normalize_title, notice_kind, notice_subject

#: Kinds of notice: an erratum (correction, corrigendum) and a retraction notice (or expression of concern).
ERRATUM, RETRACTION = "erratum", "retraction"
NOTICE_COLUMNS = ("cluster_id", "notice", "notice_for")
#: Corpus columns read to find and link notices (any may be missing).
_NOTICE_INPUTS = ("title", "item_type", "notice_of", "doi", "pmid")


def linked_notices(corpus: pd.DataFrame) -> pd.DataFrame:
    """One row per notice of ``corpus``: its ``cluster_id``, ``notice`` kind (erratum or retraction) and the
    ``cluster_id`` of the work it is about (``notice_for``; None when that work is not in the corpus).

    A record its source links to another work (``notice_of``) is a notice whatever its title, of the kind
    the link states; otherwise its title or type decides.
    """
    column = {c: list(corpus[c]) if c in corpus.columns else [None] * len(corpus) for c in _NOTICE_INPUTS}
    links = [_links(value) for value in column["notice_of"]]
    kinds = [
        _linked_kind(linked) or (kind if (kind := notice_kind(title, item)) in (ERRATUM, RETRACTION) else "")
        for linked, title, item in zip(links, column["title"], column["item_type"], strict=True)
    ]
    works = list(zip(corpus["cluster_id"], column["title"], kinds, links, strict=True))
    papers = {
        normalize_title(title): cluster for cluster, title, kind, _ in works if not kind and normalize_title(title)
    }
    known = {
        f"{name}:{str(value).strip().lower()}": cluster
        for cluster, doi, pmid, kind in zip(corpus["cluster_id"], column["doi"], column["pmid"], kinds, strict=True)
        if not kind
        for name, value in (("doi", doi), ("pmid", pmid))
        if not is_missing(value)
    }
    rows = [
        (
            cluster,
            kind,
            next((known[i] for _, i in linked if i in known), None) or _paper_of(notice_subject(title), papers),
        )
        for cluster, title, kind, linked in works
        if kind
    ]
    return pd.DataFrame(rows, columns=list(NOTICE_COLUMNS), dtype=object)


def _links(value: object) -> list[tuple[str, str]]:
    """ "erratum:pmid:1; retraction:doi:10.1/X" -> [("erratum", "pmid:1"), ("retraction", "doi:10.1/x")]."""
    parts = [] if is_missing(value) else [part.strip().lower() for part in str(value).split(";") if part.strip()]
    return [(kind, identifier) for kind, _, identifier in (part.partition(":") for part in parts) if identifier]


def _linked_kind(links: list[tuple[str, str]]) -> str:
    """The kind of notice its source links say it is: a retraction if any link retracts, else an erratum."""
    kinds = {kind for kind, _ in links}
    return RETRACTION if RETRACTION in kinds else ERRATUM if kinds else ""


def _paper_of(subject: str, papers: dict[str, str]) -> str | None:
    if subject in papers:
        return papers[subject]
    starts = [title for title in papers if len(title.split()) >= MIN_VARIANT_WORDS and subject.startswith(title + " ")]
    return papers[max(starts, key=len)] if starts else None


def corrections(corpus: pd.DataFrame) -> dict[str, str]:
    """Cluster id of each corrected work -> its errata as a reader finds them (DOI link, else title), "; "-joined."""
    notices = linked_notices(corpus)
    notices = notices[notices["notice"] == ERRATUM]
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
