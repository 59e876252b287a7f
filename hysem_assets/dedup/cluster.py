"""One clustering over identifiers and bibliographic matches.

Shared identifiers (DOI, PMID, OpenAlex id) link first; then blocked candidate
pairs are compared and linked, strongest evidence first. Every link goes through
one union-find whose guard refuses to put two different DOIs into one cluster, so
no chain of matches can merge distinct works that carry DOIs.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from hysem_assets.dedup.blocking import candidate_pairs
from hysem_assets.dedup.features import RecordFeatures, record_features
from hysem_assets.dedup.match import compare, describe_evidence, title_similarity
from hysem_assets.dedup.unionfind import UnionFind

#: Identifier fields in linking order (``doi_work``: the DOI without version suffix).
IDENTIFIERS = ("doi_work", "pmid", "openalex_id")
#: Below this title similarity a shared identifier is doubted (see ``_identifier_doubtful``).
IDENTIFIER_TITLE_FLOOR = 0.6
PAIR_COLUMNS = ("record_id_a", "record_id_b", "rule", "score", "points", "evidence")
#: A link between two rows: (row, row, rule, score, points or None for identifiers,
#: evidence as "field points" terms, e.g. "title +8, year +1, pages -6").
Link = tuple[int, int, str, float, int | None, str]


@dataclass(frozen=True)
class ClusterResult:
    """``cluster_id`` per input row (aligned with the input index) and the links made.

    ``pairs`` holds one row per link: the two record ids, the rule ("doi", "pmid",
    "openalex_id", or "title+author+year+..." naming the agreeing fields), the
    title similarity as score (1.0 for identifiers), the evidence points and the
    evidence itself (every field's points, for and against).
    """

    cluster_id: pd.Series
    pairs: pd.DataFrame


def cluster_id_for(record_ids: Sequence[str]) -> str:
    """Stable id of a cluster: a short hash of its sorted member record ids."""
    digest = hashlib.sha1("\x1f".join(sorted(record_ids)).encode("utf-8")).hexdigest()
    return "c-" + digest[:12]


def _identifier_doubtful(a: RecordFeatures, b: RecordFeatures) -> bool:
    """A shared identifier is a data error when titles and first authors both differ
    (databases do attach one DOI to two papers); then it does not link."""
    if not a.title_key or not b.title_key or not a.authors or not b.authors:
        return False
    shorter, longer = sorted((a.title_key, b.title_key), key=len)
    return (
        title_similarity(a, b)[0] < IDENTIFIER_TITLE_FLOOR
        and not longer.startswith(shorter)
        and not a.authors[0].same_as(b.authors[0])
    )


def _link_identifiers(features: Sequence[RecordFeatures], union_find: UnionFind) -> list[Link]:
    links: list[Link] = []
    for field in IDENTIFIERS:
        holders: dict[str, list[int]] = defaultdict(list)
        for index, record in enumerate(features):
            value = getattr(record, field)
            if value:
                holders[value].append(index)
        for value, members in holders.items():
            for position, index in enumerate(members[1:], start=1):
                for earlier in members[:position]:
                    if _identifier_doubtful(features[earlier], features[index]):
                        continue
                    if union_find.union(earlier, index):
                        name = field.removesuffix("_work")
                        links.append((earlier, index, name, 1.0, None, f"same {name} {value}"))
                        break
    return links


def _link_bibliographic(features: Sequence[RecordFeatures], union_find: UnionFind) -> list[Link]:
    matches = []
    for i, j in candidate_pairs(features):
        match = compare(features[i], features[j])
        if match.duplicate:
            matches.append((i, j, match))
    matches.sort(key=lambda item: (-item[2].points, -item[2].similarity, item[0], item[1]))
    return [
        (i, j, match.rule, match.similarity, match.points, describe_evidence(match.evidence))
        for i, j, match in matches
        if union_find.union(i, j, max_span=1)
    ]


def cluster_records(frame: pd.DataFrame) -> ClusterResult:
    """Cluster duplicate records of ``frame`` (needs a unique ``record_id`` column).

    Reads whichever of doi, pmid, openalex_id, title, authors/author/first_author,
    year, journal, volume, pages and item_type are present; records without a title
    can only match through an identifier.
    """
    if "record_id" not in frame.columns:
        raise ValueError("cluster_records needs a 'record_id' column identifying each row")
    record_ids = frame["record_id"].astype(str).tolist()
    if len(set(record_ids)) != len(record_ids):
        repeated = sorted(pd.Series(record_ids)[pd.Series(record_ids).duplicated()].unique())
        raise ValueError(f"record_id values must be unique; repeated: {repeated[:10]}")
    features = record_features(frame)
    union_find = UnionFind(
        len(features),
        exclusive=[record.doi_work for record in features],
        values=[record.year for record in features],
    )
    links = _link_identifiers(features, union_find) + _link_bibliographic(features, union_find)
    assignment = [""] * len(features)
    for members in union_find.groups():
        cluster = cluster_id_for([record_ids[i] for i in members])
        for i in members:
            assignment[i] = cluster
    pairs = pd.DataFrame(
        [(record_ids[i], record_ids[j], *explanation) for i, j, *explanation in links],
        columns=list(PAIR_COLUMNS),
    )
    pairs["points"] = pairs["points"].astype("Int64")
    return ClusterResult(pd.Series(assignment, index=frame.index, name="cluster_id"), pairs)
