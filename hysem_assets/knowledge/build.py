"""Turn one partition's tables into node and relationship batches for a graph store.

Pure: DataFrames in, a :class:`PartitionGraph` out. Values are coerced to the types the
schema declares here, so both stores receive identical rows, and a value that cannot be
coerced stops the build with an error naming the record and the property.

Inputs (one row each):

- corpus: ``cluster_id`` and the columns named in the schema's ``article`` mapping
  (missing columns give empty properties);
- fields: ``cluster_id`` and one column per extracted field, holding canonical terms
  (a list, or one string);
- chunks: ``chunk_id``, ``cluster_id``, the Chunk properties, and ``mentions``
  (field -> canonical terms found in the chunk, see :mod:`hysem_assets.knowledge.mentions`);
- findings: the findings table (:mod:`hysem_assets.findings.schema`), whose columns the
  Finding properties are named after; each arm's term joins the entity of the protocol
  field that holds that arm (:meth:`~hysem_assets.stores.graph_schema.GraphSchema.finding_links`),
  under the partition's own spelling of it when it has one ("aspirin" joins "Aspirin");
- entity_mentions and entity_relations: the ``entities`` and ``entity_relations`` tables
  (:mod:`hysem_assets.entities.mentions`): an Entity node per type and name, linked from the
  Articles (``HAS_ENTITY``, with the number of mentions) and Chunks (``MENTIONS_ENTITY``) that
  mention it, to the entities a sentence relates it to (``RELATED``) and to those mentioned by
  the same works (``CO_OCCURS``). Generic entities are left out of the graph.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from hysem_assets.core.matcher import TermMatcher
from hysem_assets.entities.mentions import GENERIC, entity_id
from hysem_assets.stores.graph import NodeBatch, PartitionGraph, RelationshipBatch, Row
from hysem_assets.stores.graph_schema import FINDING_TERMS, MENTIONS, GraphSchema, PropertyType
from hysem_assets.stores.work_cache import content_key, work_id


class GraphInputError(ValueError):
    """A record cannot be turned into graph rows; the message names it."""


def is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def terms(value: Any) -> list[str]:
    """Distinct non-empty terms, in order, from a list, an array, one string, or nothing."""
    if is_missing(value):
        return []
    items = [value] if isinstance(value, str) else list(value)
    cleaned = (str(item).strip() for item in items if not is_missing(item))
    return list(dict.fromkeys(term for term in cleaned if term))


def _to_int(value: Any) -> int:
    number = float(value)
    if not number.is_integer():
        raise ValueError(f"{value!r} is not a whole number")
    return int(number)


def _to_bool(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{value!r} is not a boolean")


_COERCE: dict[str, Callable[[Any], Any]] = {
    "STRING": str,
    "INT64": _to_int,
    "DOUBLE": float,
    "BOOLEAN": _to_bool,
    "STRING[]": terms,
}


def coerce(value: Any, kind: PropertyType, where: str) -> Any:
    """``value`` as the declared type (Python natives only), or None when missing."""
    if kind != "STRING[]" and is_missing(value):
        return None
    if kind == "STRING" and isinstance(value, (Mapping, list, tuple, np.ndarray)):
        raise GraphInputError(f"{where}: expected text, got {type(value).__name__}")
    try:
        return _COERCE[kind](value)
    except (TypeError, ValueError) as exc:
        raise GraphInputError(f"{where}: cannot store {value!r} as {kind} ({exc})") from exc


def article_key(doi: Any, cluster_id: Any) -> str:
    """Articles are keyed as works are from run to run (:func:`~hysem_assets.stores.work_cache.work_id`): by DOI
    (case-insensitive), by cluster id when there is none."""
    no_doi = not isinstance(doi, str) or not doi.strip()
    if no_doi and (is_missing(cluster_id) or not str(cluster_id).strip()):
        raise GraphInputError("a corpus record has neither a DOI nor a cluster id")
    return work_id(doi, cluster_id)


#: The findings column holding each arm's canonical term, by its relationship from Finding.
ARM_TERMS = dict(zip(FINDING_TERMS.values(), ("intervention_term", "comparator_term", "outcome_term"), strict=True))


def finding_key(article: str, finding_id: Any) -> str:
    """A Finding is keyed within its Article: one work's finding is one node, whichever query loads it."""
    if is_missing(finding_id) or not str(finding_id).strip():
        raise GraphInputError(f"a finding of article {article!r} has no finding_id")
    return f"{article}#{finding_id}"


def _node_rows(schema: GraphSchema, label: str, records: Iterable[tuple[str, Mapping[str, Any]]]) -> NodeBatch:
    """One row per distinct key (first wins), with every property the partition writes present."""
    properties = schema.loaded_properties(label)
    rows: dict[str, Row] = {}
    for key, values in records:
        if key in rows:
            continue
        rows[key] = {
            "key": key,
            "props": {
                name: coerce(values.get(name), kind, f"{label} {key!r}, property {name}")
                for name, kind in properties.items()
            },
        }
    return NodeBatch(label, list(rows.values()))


def _relationships(rel_type: str, source: str, target: str, pairs: Iterable[tuple[str, str]]) -> RelationshipBatch:
    return RelationshipBatch(rel_type, source, target, [{"src": s, "dst": d} for s, d in dict.fromkeys(pairs)])


#: Most ``CO_OCCURS`` partners an entity keeps: those sharing the most works with it.
CO_OCCURRENCES_PER_ENTITY = 20


def co_occurrences(
    entities_of: Mapping[str, Collection[str]], per_entity: int = CO_OCCURRENCES_PER_ENTITY
) -> list[tuple[str, str, int]]:
    """``(a, b, works)``, ``a < b``, for pairs of entities mentioned together by ``works`` works (``entities_of``:
    work -> its entities), each entity keeping its ``per_entity`` partners of most works (then by name): a
    corpus' every pair would grow as its entities squared."""
    names = sorted({name for found in entities_of.values() for name in found})
    if not names:
        return []
    index = {name: at for at, name in enumerate(names)}
    rows = [i for i, found in enumerate(entities_of.values()) for _ in set(found)]
    columns = [index[name] for found in entities_of.values() for name in set(found)]
    works = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.int64), (rows, columns)), shape=(len(entities_of), len(names))
    )
    shared = (works.T @ works).tocsr()
    shared.setdiag(0)
    shared.eliminate_zeros()
    kept: dict[tuple[int, int], int] = {}
    for row in range(shared.shape[0]):
        partners = shared.indices[shared.indptr[row] : shared.indptr[row + 1]]
        weights = shared.data[shared.indptr[row] : shared.indptr[row + 1]]
        for at in np.lexsort((partners, -weights))[:per_entity]:
            kept[tuple(sorted((row, int(partners[at]))))] = int(weights[at])
    return [(names[a], names[b], weight) for (a, b), weight in sorted(kept.items())]


def _entity_graph(
    schema: GraphSchema,
    keys: Mapping[str, str],
    mentions: pd.DataFrame | None,
    relations: pd.DataFrame | None,
    chunk_ids: Collection[str],
) -> tuple[list[NodeBatch], list[RelationshipBatch]]:
    """Entity nodes and their relationships from the entities tables; generic entities name nothing in particular
    and stay out."""
    named: dict[str, dict[str, str]] = {}
    mentioned: dict[tuple[str, str], int] = defaultdict(int)
    in_chunks: dict[tuple[str, str], None] = {}
    entities_of: dict[str, set[str]] = defaultdict(set)
    for mention in _records(mentions):
        if mention["type"] == GENERIC:
            continue
        article = _cluster_of(keys, mention["cluster_id"], f"an entity mention {mention['text']!r}")
        node = entity_id(mention["type"], mention["name"])
        named.setdefault(node, {"name": str(mention["name"]).casefold(), "type": mention["type"]})
        mentioned[(article, node)] += 1
        entities_of[article].add(node)
        if not is_missing(mention["chunk_id"]) and mention["chunk_id"] in chunk_ids:
            in_chunks[(str(mention["chunk_id"]), node)] = None
    best: dict[tuple[str, str, str, str], Row] = {}
    for relation in sorted(_records(relations), key=lambda r: -float(r["probability"])):
        if GENERIC in (relation["first_type"], relation["second_type"]):
            continue
        article = _cluster_of(keys, relation["cluster_id"], f"an entity relation {relation['first']!r}")
        ends = (
            entity_id(relation["first_type"], relation["first"]),
            entity_id(relation["second_type"], relation["second"]),
        )
        if ends[0] != ends[1] and ends[0] in named and ends[1] in named:
            props = {name: relation.get(name) for name in ("label", "sentence", "probability")} | {"article": article}
            best.setdefault((*ends, article, relation["label"]), {"src": ends[0], "dst": ends[1], "props": props})
    nodes = [_node_rows(schema, "Entity", named.items())]
    counted = [{"src": a, "dst": e, "props": {"mentions": n}} for (a, e), n in mentioned.items()]
    weighted = [{"src": a, "dst": b, "props": {"weight": w}} for a, b, w in co_occurrences(entities_of)]
    relationships = [
        RelationshipBatch("HAS_ENTITY", "Article", "Entity", counted),
        _relationships("MENTIONS_ENTITY", "Chunk", "Entity", in_chunks),
        RelationshipBatch("RELATED", "Entity", "Entity", list(best.values())),
        RelationshipBatch("CO_OCCURS", "Entity", "Entity", weighted),
    ]
    return nodes, relationships


def _records(frame: pd.DataFrame | None) -> list[dict[str, Any]]:
    return [] if frame is None else frame.to_dict("records")


def _cluster_of(keys: Mapping[str, str], cluster_id: Any, what: str) -> str:
    if cluster_id not in keys:
        raise GraphInputError(f"{what} refers to cluster {cluster_id!r}, which is not in the corpus")
    return keys[cluster_id]


def build_partition_graph(
    schema: GraphSchema,
    query: str,
    *,
    corpus: pd.DataFrame,
    fields: pd.DataFrame | None = None,
    chunks: pd.DataFrame | None = None,
    findings: pd.DataFrame | None = None,
    title: str | None = None,
    included: Collection[str] | None = None,
    entity_mentions: pd.DataFrame | None = None,
    entity_relations: pd.DataFrame | None = None,
) -> PartitionGraph:
    """Nodes and relationships of one partition (query key ``query``), ready to load. Every work of
    ``corpus`` is ``FOUND`` by the query; those of ``included`` (cluster ids; all when None) are also
    ``INCLUDES``, the relationship answers count over. ``entity_mentions`` and ``entity_relations`` make the
    entity graph."""
    entity_fields = schema.entity_fields()
    property_fields = {name: spec.property for name, spec in schema.fields.items() if spec.property}
    corpus_rows = _records(corpus)
    keys = {row["cluster_id"]: article_key(row.get("doi"), row.get("cluster_id")) for row in corpus_rows}

    extracted = {row["cluster_id"]: row for row in _records(fields)}
    articles = []
    answered = {row["cluster_id"] for row in corpus_rows} if included is None else set(included)
    for row in corpus_rows:
        values = {prop: row.get(column) for prop, column in schema.article.items()}
        found = extracted.get(row["cluster_id"], {})
        for field, prop in property_fields.items():
            value = found.get(field)
            values[prop] = next(iter(terms(value)), None) if isinstance(value, (list, tuple, np.ndarray)) else value
        articles.append((keys[row["cluster_id"]], values))

    entities: dict[str, dict[str, None]] = {label: {} for label, _ in entity_fields.values()}
    links: dict[str, list[tuple[str, str]]] = {field: [] for field in entity_fields}
    for cluster_id, row in extracted.items():
        article = _cluster_of(keys, cluster_id, "an extracted-fields row")
        for field, (label, _) in entity_fields.items():
            for term in terms(row.get(field)):
                entities[label].setdefault(term)
                links[field].append((article, term))

    chunk_rows = _records(chunks)
    mentions: dict[str, list[tuple[str, str]]] = {field: [] for field in entity_fields}
    for chunk in chunk_rows:
        chunk_id = str(chunk["chunk_id"])
        _cluster_of(keys, chunk["cluster_id"], f"chunk {chunk_id!r}")
        mentioned = chunk.get("mentions")
        for field, found in ({} if is_missing(mentioned) else mentioned).items():
            if field not in entity_fields:
                raise GraphInputError(f"chunk {chunk_id!r} mentions field {field!r}, not an entity field")
            for term in terms(found):
                entities[entity_fields[field][0]].setdefault(term)
                mentions[field].append((chunk_id, term))

    arms = schema.finding_links()
    spelled = {label: TermMatcher({name: name for name in entities[label]}) for label in set(arms.values())}
    found_in: list[tuple[str, str]] = []
    findings_rows: list[tuple[str, dict[str, Any]]] = []
    arm_links: dict[str, list[tuple[str, str]]] = {rel_type: [] for rel_type in arms}
    for finding in _records(findings):
        article = _cluster_of(keys, finding["cluster_id"], f"finding {finding.get('finding_id')!r}")
        key = finding_key(article, finding.get("finding_id"))
        findings_rows.append((key, finding))
        found_in.append((article, key))
        for rel_type, label in arms.items():
            for term in terms(finding.get(ARM_TERMS[rel_type])):
                name = spelled[label].lookup(term) or term
                entities[label].setdefault(name)
                arm_links[rel_type].append((key, name))

    entity_nodes, entity_links = _entity_graph(
        schema, keys, entity_mentions, entity_relations, {str(chunk["chunk_id"]) for chunk in chunk_rows}
    )
    nodes = [
        _node_rows(schema, "Query", [(query, {"title": title})]),
        _node_rows(schema, "Article", articles),
        *(_node_rows(schema, label, ((name, {}) for name in names)) for label, names in entities.items()),
        _node_rows(schema, "Chunk", ((str(c["chunk_id"]), c) for c in chunk_rows)),
        _node_rows(schema, "Finding", findings_rows),
        *entity_nodes,
    ]
    relationships = [
        _relationships("FOUND", "Query", "Article", ((query, key) for key, _ in articles)),
        _relationships("INCLUDES", "Query", "Article", ((query, keys[c]) for c in keys if c in answered)),
        *(
            _relationships(rel_type, "Article", label, links[field])
            for field, (label, rel_type) in entity_fields.items()
        ),
        _relationships(
            "HAS_CHUNK", "Article", "Chunk", ((keys[c["cluster_id"]], str(c["chunk_id"])) for c in chunk_rows)
        ),
        *(_relationships(MENTIONS, "Chunk", label, mentions[field]) for field, (label, _) in entity_fields.items()),
        _relationships("REPORTS_FINDING", "Article", "Finding", found_in),
        *(_relationships(rel_type, "Finding", label, arm_links[rel_type]) for rel_type, label in arms.items()),
        *entity_links,
    ]
    return PartitionGraph(
        query=query,
        nodes=[batch for batch in nodes if batch.rows],
        relationships=[batch for batch in relationships if batch.rows],
    )


#: Nodes an Article owns, by the relationship that reaches them from it.
_OWNED = {"Chunk": "HAS_CHUNK", "Finding": "REPORTS_FINDING"}


def article_digests(graph: PartitionGraph) -> dict[str, str]:
    """A content key per Article of the rows it owns: its node, its relationships, its chunks and findings
    with their links.

    Entity nodes are shared between articles and owned by none; each article's links to them
    are its own. Comparing digests with the last load tells whose graph rows changed.
    """
    owners = {
        label: {row["dst"]: row["src"] for batch in graph.relationships if batch.type == rel_type for row in batch.rows}
        for label, rel_type in _OWNED.items()
    }
    owner_of: dict[str, Callable[[str], str | None]] = {
        "Article": lambda key: key,
        **{label: owner.get for label, owner in owners.items()},
    }
    canonical = partial(json.dumps, sort_keys=True, default=str)
    shares: dict[str | None, list[str]] = defaultdict(list)
    for node in graph.nodes:
        if node.label in owner_of:
            for row in node.rows:
                shares[owner_of[node.label](row["key"])].append(canonical([node.label, row]))
    for link in graph.relationships:
        end, label = ("src", link.source) if link.source in owner_of else ("dst", link.target)
        if label in owner_of:
            for row in link.rows:
                shares[owner_of[label](row[end])].append(canonical([link.type, row]))
    return {article: content_key(sorted(share)) for article, share in shares.items() if article is not None}
